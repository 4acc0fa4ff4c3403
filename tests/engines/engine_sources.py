"""Source checkouts of TensorRT-LLM and ATOM as the option-set reader meets them, made by the
tests: no release of either can be fetched here. Each follows the layout and the idioms the
reader relies on (click decorators on ``serve``, pydantic option models with bases and a type
alias, ``add_argument`` calls in three parser modules, imports of a GPU stack that the reader
must never run), and is a git repository so the commit is named."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

TRTLLM_SERVE = """
import click
import torch
from tensorrt_llm.llmapi import LLM


@click.group(invoke_without_command=True)
def main():
    pass


@main.command("serve")
@click.argument("model", type=str)
@click.option("--tokenizer", type=str, default=None)
@click.option("--host", type=str, default="localhost")
@click.option("--port", type=int, default=8000)
@click.option("--backend", type=click.Choice(["pytorch", "trt", "_autodeploy"]), default="pytorch")
@click.option("--max_batch_size", type=int, default=2048)
@click.option("--max_num_tokens", type=int, default=8192)
@click.option("--max_seq_len", type=int, default=None)
@click.option("--tp_size", type=int, default=1)
@click.option("--pp_size", type=int, default=1)
@click.option("--ep_size", type=int, default=None)
@click.option("--kv_cache_free_gpu_memory_fraction", type=float, default=0.9)
@click.option("--trust_remote_code", is_flag=True, default=False)
@click.option("--extra_llm_api_options", "--config", type=str, default=None)
@click.option("--custom_tokenizer", type=str, default=None)
@click.option("--chat_template", type=str, default=None)
def serve(model, **kwargs):
    LLM(model, **kwargs)
"""

TRTLLM_ARGS = """
from typing import ClassVar, List, Literal, Optional, Union

import torch
from pydantic import BaseModel, Field


class StrictBaseModel(BaseModel):
    model_config = {"extra": "forbid"}


class KvCacheConfig(StrictBaseModel):
    free_gpu_memory_fraction: Optional[float] = None
    dtype: str = "auto"
    enable_block_reuse: bool = True


class CudaGraphConfig(StrictBaseModel):
    enable_padding: bool = False
    max_batch_size: int = 0
    batch_sizes: Optional[List[int]] = None


class MoeConfig(StrictBaseModel):
    backend: Literal["CUTLASS", "TRTLLM", "DEEPGEMM"] = "CUTLASS"


class DecodingBaseConfig(StrictBaseModel):
    max_draft_len: Optional[int] = None
    speculative_model_dir: Optional[str] = None


class MTPDecodingConfig(DecodingBaseConfig):
    num_nextn_predict_layers: int = 1
    use_relaxed_acceptance_for_thinking: bool = False
    decoding_type: ClassVar[str] = "MTP"


class Eagle3DecodingConfig(DecodingBaseConfig):
    eagle3_one_model: bool = True
    decoding_type: ClassVar[str] = "Eagle3"


SpeculativeConfig = Optional[Union[MTPDecodingConfig, Eagle3DecodingConfig]]


class BaseLlmArgs(StrictBaseModel):
    model: str
    tokenizer: Optional[str] = None
    kv_cache_config: KvCacheConfig = Field(default_factory=KvCacheConfig)
    enable_attention_dp: bool = False
    speculative_config: SpeculativeConfig = None
    print_iter_log: bool = False
    enable_iter_perf_stats: bool = False
    _internal: int = 0


class TorchLlmArgs(BaseLlmArgs):
    cuda_graph_config: Optional[CudaGraphConfig] = None
    moe_config: MoeConfig = Field(default_factory=MoeConfig)
    disable_overlap_scheduler: bool = False
"""

ATOM_ARG_PARSER = '''
import argparse


class ArgumentParser(argparse.ArgumentParser):
    """Takes --a-b and --a_b alike."""
'''

ATOM_ARG_UTILS = """
import torch


class EngineArgs:
    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--model", type=str, required=True)
        parser.add_argument("-tp", "--tensor-parallel-size", type=int, default=1)
        parser.add_argument("--kv_cache_dtype", choices=["auto", "fp8"], default="auto")
        parser.add_argument("--block-size", type=int, default=16)
        parser.add_argument("--max-num-seqs", type=int, default=512)
        parser.add_argument("--enable-prefix-caching", action="store_true")
        parser.add_argument("--method", choices=["mtp", "eagle3", "dspark"], default=None)
        parser.add_argument("--num-speculative-tokens", type=int, default=0)
        parser.add_argument("--draft-model", type=str, default=None)
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--spec-decode-acceptance-length", type=float, default=None)
        group.add_argument("--spec-decode-acceptance-rate", type=float, default=None)
        parser.add_argument("--cudagraph-mode", choices=["none", "piecewise", "full"])
        parser.add_argument("--trust-remote-code", action=argparse.BooleanOptionalAction)
        return parser
"""

ATOM_SERVER = """
from atom.model_engine.arg_utils import EngineArgs
from atom.utils.arg_parser import ArgumentParser


def main():
    parser = ArgumentParser()
    parser.add_argument("--server-port", type=int, default=8000)
    EngineArgs.add_cli_args(parser)
    return parser.parse_args()
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "release"], check=True)
    return root


def trtllm_checkout(root: Path) -> Path:
    return _write(
        root,
        {
            "tensorrt_llm/commands/serve.py": TRTLLM_SERVE,
            "tensorrt_llm/llmapi/llm_args.py": TRTLLM_ARGS,
        },
    )


def atom_checkout(root: Path) -> Path:
    return _write(
        root,
        {
            "atom/utils/arg_parser.py": ATOM_ARG_PARSER,
            "atom/model_engine/arg_utils.py": ATOM_ARG_UTILS,
            "atom/entrypoints/openai/api_server.py": ATOM_SERVER,
        },
    )


def head(root: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()
