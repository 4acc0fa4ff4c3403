"""An engine release's option set, read from a checkout of its source without importing it.

TensorRT-LLM and ATOM import their GPU stacks at the top of the modules that define their
parsers, so the options are read from the syntax tree instead: ``trtllm-serve``'s click
decorators (``tensorrt_llm/commands/serve.py``) and the LLM-API options models
(``tensorrt_llm/llmapi/llm_args.py``, every class's annotated fields with its bases'), and every
``add_argument`` call of ATOM's server and engine parsers (``atom/utils/arg_parser.py``,
``atom/model_engine/arg_utils.py``, ``atom/entrypoints/openai/api_server.py``). The result names
the checkout's commit, so the file says which source it came from.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Literal

from pytest_infx.engines.optionset import Flag, OptionSet
from pytest_infx.files.git import head

TRTLLM_SERVE = "tensorrt_llm/commands/serve.py"
TRTLLM_ARGS = "tensorrt_llm/llmapi/llm_args.py"
TRTLLM_ROOTS = ("TorchLlmArgs", "LlmArgs")
TRTLLM_OPTIONS = "--extra_llm_api_options"
ATOM_FILES = (
    "atom/utils/arg_parser.py",
    "atom/model_engine/arg_utils.py",
    "atom/entrypoints/openai/api_server.py",
)
NUMBER_TYPES: dict[str, Literal["int", "float"]] = {"int": "int", "float": "float"}


class SourceError(ValueError):
    """A checkout that does not hold what the reader looks for; names the file."""


def commit_of(checkout: Path) -> str:
    """The checkout's commit, or a word saying there is none."""
    return head(checkout)[1] or "no git commit"


def _read(
    engine: str,
    release: str,
    repository: str,
    checkout: Path,
    files: Sequence[str],
    spelling: Literal["exact", "kebab-snake"],
    options: tuple[dict[str, Flag], int],
    *,
    options_flags: tuple[str, ...] = (),
    models: dict[str, dict[str, str]] | None = None,
    root: str | None = None,
) -> OptionSet:
    """The option set of ``engine`` read from ``files`` of a ``checkout`` of ``repository``,
    its flags and positional count as ``options``: it names the commit it was read from and
    the command that reads it again, so an outdated file says how to replace it."""
    flags, positionals = options
    return OptionSet(
        engine=engine,
        release=release,
        source=f"{repository}@{commit_of(checkout)} ({', '.join(files)})",
        made_by=f"infx engine option-set {engine} CHECKOUT --release {release}",
        spelling=spelling,
        positionals=positionals,
        flags=flags,
        options_flags=options_flags,
        models={} if models is None else models,
        root=root,
    )


def _tree(checkout: Path, relative: str) -> ast.Module:
    path = checkout / relative
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except OSError as exc:
        raise SourceError(
            f"{path}: cannot be read ({exc.strerror}); is this the right checkout?"
        ) from None
    except SyntaxError as exc:
        raise SourceError(
            f"{path}:{exc.lineno}: not Python this reader can parse: {exc.msg}"
        ) from None


def _constants(node: ast.expr | None) -> tuple[str, ...] | None:
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        found = [e.value for e in node.elts if isinstance(e, ast.Constant)]
        return tuple(str(v) for v in found)
    return None


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _number_type(node: ast.expr | None) -> Literal["str", "int", "float"]:
    if isinstance(node, ast.Name):
        return NUMBER_TYPES.get(node.id, "str")
    return "str"


def _names(call: ast.Call) -> list[str]:
    return [
        a.value
        for a in call.args
        if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("-")
    ]


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def click_options(function: ast.FunctionDef) -> tuple[dict[str, Flag], int]:
    """A click command's options (every name of each) and its positional argument count."""
    flags: dict[str, Flag] = {}
    positionals = 0
    for decorator in function.decorator_list:
        if not isinstance(decorator, ast.Call):
            continue
        kind = _callee(decorator)
        if kind == "argument":
            positionals += 1
        if kind != "option":
            continue
        flag_node = _keyword(decorator, "is_flag")
        is_flag = isinstance(flag_node, ast.Constant) and flag_node.value is True
        kind_node = _keyword(decorator, "type")
        choices = None
        if isinstance(kind_node, ast.Call) and _callee(kind_node) == "Choice" and kind_node.args:
            choices = _constants(kind_node.args[0])
        flag = Flag(takes_value=not is_flag, type=_number_type(kind_node), choices=choices)
        for name in _names(decorator):
            for spelling in name.split("/"):
                flags[spelling] = flag
    return flags, positionals


def _serve_function(module: ast.Module) -> ast.FunctionDef | None:
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef) and node.name == "serve":
            if any(
                isinstance(d, ast.Call) and _callee(d) in ("option", "argument", "command")
                for d in node.decorator_list
            ):
                return node
    return None


def _aliases(module: ast.Module) -> dict[str, str]:
    """Module-level type aliases (``SpeculativeConfig = Optional[Union[...]]``), as written."""
    found: dict[str, str] = {}
    for node in module.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name) and isinstance(value, ast.Subscript | ast.BinOp):
            found[target.id] = ast.unparse(value)
    return found


def option_models(module: ast.Module) -> dict[str, dict[str, str]]:
    """Every class's annotated public fields (annotation as written, type aliases spelled
    out), its bases' first. Class variables stay: a ``decoding_type`` class variable is a key
    the options file gives to pick the class."""
    classes = {n.name: n for n in module.body if isinstance(n, ast.ClassDef)}
    aliases = _aliases(module)
    done: dict[str, dict[str, str]] = {}

    def spelled(annotation: str) -> str:
        for name, text in aliases.items():
            annotation = re.sub(rf"\b{re.escape(name)}\b", text, annotation)
        return annotation

    def fields(name: str, seen: tuple[str, ...]) -> dict[str, str]:
        if name in done:
            return done[name]
        node = classes[name]
        merged: dict[str, str] = {}
        for base in node.bases:
            base_name = base.id if isinstance(base, ast.Name) else None
            if base_name is not None and base_name in classes and base_name not in seen:
                merged.update(fields(base_name, (*seen, name)))
        for statement in node.body:
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                field = statement.target.id
                if not field.startswith("_"):
                    merged[field] = spelled(ast.unparse(statement.annotation))
        done[name] = merged
        return merged

    for name in classes:
        fields(name, ())
    return {name: found for name, found in done.items() if found}


def trtllm(checkout: Path, release: str) -> OptionSet:
    serve = _serve_function(_tree(checkout, TRTLLM_SERVE))
    if serve is None:
        raise SourceError(f"{checkout / TRTLLM_SERVE}: no click command `serve` here")
    flags, positionals = click_options(serve)
    if TRTLLM_OPTIONS not in flags:
        raise SourceError(f"{checkout / TRTLLM_SERVE}: `serve` has no {TRTLLM_OPTIONS} option")
    aliases = tuple(name for name, flag in flags.items() if flag is flags[TRTLLM_OPTIONS])
    models = option_models(_tree(checkout, TRTLLM_ARGS))
    root = next((name for name in TRTLLM_ROOTS if name in models), None)
    if root is None:
        raise SourceError(f"{checkout / TRTLLM_ARGS}: none of {', '.join(TRTLLM_ROOTS)} here")
    return _read(
        "trtllm",
        release,
        "NVIDIA/TensorRT-LLM",
        checkout,
        (TRTLLM_SERVE, TRTLLM_ARGS),
        "exact",
        (flags, positionals),
        options_flags=aliases,
        models=models,
        root=root,
    )


def argparse_options(modules: Iterable[ast.Module]) -> tuple[dict[str, Flag], int]:
    """Every ``add_argument`` call's names, with whether it takes a value; positional ones
    counted."""
    flags: dict[str, Flag] = {}
    positionals = 0
    for module in modules:
        for node in ast.walk(module):
            if not isinstance(node, ast.Call) or _callee(node) != "add_argument":
                continue
            names = _names(node)
            if not names:
                positionals += 1 if node.args else 0
                continue
            action = _keyword(node, "action")
            bare = isinstance(action, ast.Constant) and action.value in (
                "store_true",
                "store_false",
                "store_const",
                "count",
                "help",
                "version",
            )
            both = isinstance(action, ast.Attribute) and action.attr == "BooleanOptionalAction"
            flag = Flag(
                takes_value=not (bare or both),
                type=_number_type(_keyword(node, "type")),
                choices=_constants(_keyword(node, "choices")),
            )
            for name in names:
                flags[name] = flag
                if both and name.startswith("--"):
                    flags["--no-" + name[2:]] = flag
    return flags, positionals


def atom(checkout: Path, release: str) -> OptionSet:
    present = [relative for relative in ATOM_FILES if (checkout / relative).is_file()]
    if not present:
        raise SourceError(f"{checkout}: none of {', '.join(ATOM_FILES)} here")
    options = argparse_options(_tree(checkout, relative) for relative in present)
    return _read("atom", release, "ROCm/ATOM", checkout, present, "kebab-snake", options)


READERS: dict[str, Callable[[Path, str], OptionSet]] = {"trtllm": trtllm, "atom": atom}
