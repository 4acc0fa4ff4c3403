"""Reading and writing golden curve files.

The body is InferenceX's layout (one model key, ``thinking_on``/``thinking_off``, k -> AL with two
decimals, ``N/A`` for failed cells) so their readers keep working; provenance lives in comment lines
those readers skip. The loader works on YAML nodes rather than plain ``safe_load`` so every
complaint can name the line, and so duplicate keys (which ``safe_load`` silently collapses) are
caught.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from yaml.nodes import MappingNode, Node, ScalarNode

from pytest_infx.files.atomic import atomic_write_text
from pytest_infx.files.textio import InputFileError, NotUtf8Error, read_utf8
from pytest_infx.files.yamlkeys import repeated_key
from pytest_infx.files.yamlnodes import ScalarFault, YamlFault, compose, scalar
from pytest_infx.golden.curve import (
    CURVE_NAME_RE,
    MAX_TOLERANCE,
    MODES,
    Curve,
    CurveError,
    Provenance,
    Scalar,
    cell_problem,
)

RUN_PREFIX: Final = "Source GitHub Actions run:"
SOURCE_PREFIX: Final = "Source:"
LEGEND: Final = "key = num_speculative_tokens (draft length); value = golden AL"
NA: Final = "N/A"
BOM: Final = "\ufeff"
SAMPLING_KEYS: Final = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "output_len",
        "concurrency",
        "seed",
        "max_tokens",
        "repetition_penalty",
        "presence_penalty",
        "frequency_penalty",
    }
)
HEADER_KEYS: Final = frozenset(
    {"dataset", "dataset_sha256", "dataset_n", "model", "image", "engine", "TP"}
) | frozenset({"tolerance", "reference"})
_SEGMENT_RE: Final = re.compile(r"([A-Za-z_][\w.-]*): (.*)")
_KWARGS_RE: Final = re.compile(r"(thinking_on|thinking_off) chat_template_kwargs: (.*)")
_SPEC_PREFIX: Final = "speculative-config:"
_INT_RE: Final = re.compile(r"[+-]?\d+")
_FLOAT_RE: Final = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?")


class GoldenFileError(ValueError):
    """A golden file that cannot be used, with the place and the reason."""

    def __init__(self, path: str | os.PathLike[str], line: int | None, reason: str) -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {reason}")

    def __reduce__(self) -> tuple[type[GoldenFileError], tuple[str, int | None, str]]:
        return (GoldenFileError, (self.path, self.line, self.reason))


Anchor = tuple[str, ...]
"""A body line comments attach to: ``("model",)``, ``("mode", mode)``, ``("cell", mode, k)``."""
_BODY_MODE_RE: Final = re.compile(r"\s+(thinking_on|thinking_off)\s*:\s*(#.*)?")
_BODY_CELL_RE: Final = re.compile(r"\s+([+-]?\d+)\s*:\s*[^#\s][^#]*?\s*(#.*)?")
_BODY_KEY_RE: Final = re.compile(r"\S[^#]*?:\s*(#.*)?")


@dataclass(frozen=True)
class BodyComments:
    """The comments a person wrote in a golden file's body, by the line they belong to: the
    full comment lines above a line, and the comment at the end of it. The body is written
    anew on every update, so these are put back where they were; comments whose line is gone
    (a removed cell) and comments after the last line go at the end."""

    above: Mapping[Anchor, tuple[str, ...]] = field(default_factory=dict)
    inline: Mapping[Anchor, str] = field(default_factory=dict)
    end: tuple[str, ...] = ()


def body_comments(text: str) -> BodyComments:
    """The body comments of golden-format ``text`` (the header's comments are provenance and
    are parsed by :func:`loads_curve`)."""
    above: dict[Anchor, tuple[str, ...]] = {}
    inline: dict[Anchor, str] = {}
    pending: list[str] = []
    mode = ""
    in_body = False
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            if in_body:
                pending.append(line.rstrip())
            continue
        in_body = True
        anchor: Anchor | None = None
        match = _BODY_MODE_RE.fullmatch(line)
        if match is not None:
            mode = match.group(1)
            anchor = ("mode", mode)
        elif (match := _BODY_CELL_RE.fullmatch(line)) is not None:
            anchor = ("cell", mode, str(int(match.group(1))))
        elif not line[0].isspace() and (match := _BODY_KEY_RE.fullmatch(line)) is not None:
            anchor = ("model",)
        if anchor is None or match is None:
            continue
        if pending:
            above[anchor] = (*above.get(anchor, ()), *pending)
            pending = []
        if match.group(match.re.groups):
            inline[anchor] = match.group(match.re.groups)
    return BodyComments(above, inline, tuple(pending))


def not_utf8(exc: NotUtf8Error) -> GoldenFileError:
    """A golden-folder file that is not UTF-8, at its line and column."""
    return GoldenFileError(
        exc.path,
        exc.line,
        f"column {exc.column}: not valid UTF-8 (byte 0x{exc.byte:02x}); save the file as UTF-8",
    )


def load_curve(path: str | os.PathLike[str]) -> Curve:
    """Read and validate one golden file; the curve name is the file stem."""
    return read_curve(path)[0]


def read_curve(path: str | os.PathLike[str]) -> tuple[Curve, BodyComments]:
    """One golden file's curve and the comments of its body, which an update must keep."""
    file = Path(path)
    name = file.name.removesuffix(".yaml")
    if not CURVE_NAME_RE.fullmatch(name):
        raise GoldenFileError(
            file,
            None,
            f"curve name {name!r} (the file stem) must match [a-z0-9_.-]+; rename the file",
        )
    try:
        text = read_utf8(file)
    except FileNotFoundError:
        raise GoldenFileError(file, None, "no such golden file") from None
    except NotUtf8Error as exc:
        raise not_utf8(exc) from None
    except InputFileError as exc:
        raise GoldenFileError(file, None, exc.strerror or str(exc)) from None
    except OSError as exc:
        raise GoldenFileError(file, None, f"cannot read the file: {exc}") from None
    return loads_curve(text, name=name, source=str(file)), body_comments(text)


def loads_curve(text: str, *, name: str, source: str = "<golden>") -> Curve:
    """Parse golden-format text; ``source`` is only used to name the place in errors. A byte
    order mark some editors write first is not part of the header's first line."""
    text = text.removeprefix(BOM)
    header = _parse_header(text, source)
    model_key, modes = _parse_body(text, source)
    try:
        return Curve(name=name, model_key=model_key, modes=modes, header=header)
    except CurveError as exc:
        raise GoldenFileError(source, None, str(exc)) from None


def dump_curve(curve: Curve, comments: BodyComments | None = None) -> str:
    """Golden-format text: header comments, then the body with two-decimal ALs, in fixed order,
    with ``comments`` (a person's notes in the body) put back at their lines."""
    kept = comments or BodyComments()
    used: set[Anchor] = set()
    lines = header_lines(curve.header)

    def add(anchor: Anchor, text: str) -> None:
        used.add(anchor)
        lines.extend(kept.above.get(anchor, ()))
        note = kept.inline.get(anchor)
        lines.append(f"{text}  {note}" if note else text)

    add(("model",), f"{_yaml_key(curve.model_key)}:")
    for mode in MODES:
        cells = curve.modes.get(mode)
        if not cells:
            continue
        add(("mode", mode), f"  {mode}:")
        for k in sorted(cells):
            add(("cell", mode, str(k)), f"    {k}: {format_al(cells[k])}")
    for anchor, above in kept.above.items():
        if anchor not in used:
            lines.extend(above)
    for anchor, note in kept.inline.items():
        if anchor not in used:
            lines.append(note)
    lines.extend(kept.end)
    return "\n".join(lines) + "\n"


def write_curve(
    curve: Curve, path: str | os.PathLike[str], comments: BodyComments | None = None
) -> None:
    """Write atomically so a reader (or a parallel worker) never sees half a file."""
    file = Path(path)
    if file.name.removesuffix(".yaml") != curve.name:
        raise ValueError(f"curve {curve.name!r} must be written to {curve.name}.yaml, not {file}")
    atomic_write_text(file, dump_curve(curve, comments))


def format_al(al: float | None) -> str:
    return NA if al is None else f"{al:.2f}"


def header_lines(header: Provenance) -> list[str]:
    lines: list[str] = []
    if header.source:
        prefix = RUN_PREFIX if header.source_is_run else SOURCE_PREFIX
        lines.append(f"# {prefix} {header.source}")
    lines.extend(f"# {note}" if note else "#" for note in header.notes)
    dataset: list[tuple[str, Scalar]] = []
    if header.dataset is not None:
        dataset.append(("dataset", header.dataset))
    dataset.extend(header.sampling.items())
    lines.extend(_fields_line(dataset))
    for mode in MODES:
        kwargs = header.chat_template_kwargs.get(mode)
        if kwargs is not None:
            lines.append(f"# {mode} chat_template_kwargs: {json.dumps(dict(kwargs))}")
    spec = [("method", header.method), ("draft_model", header.draft_model)]
    spec_parts = [f"{k}={v}" for k, v in [*spec, *header.speculative.items()] if v is not None]
    if spec_parts:
        lines.append(f"# {_SPEC_PREFIX} " + " | ".join(spec_parts))
    engine: list[tuple[str, Scalar | None]] = [("model", header.model), ("image", header.image)]
    engine.extend([("engine", header.engine), ("TP", header.tp)])
    lines.extend(_fields_line(engine))
    lines.extend(
        _fields_line([("dataset_sha256", header.dataset_sha256), ("dataset_n", header.dataset_n)])
    )
    lines.extend(_fields_line([("tolerance", header.tolerance)]))
    if header.reference:
        lines.append("# reference: true")
    lines.extend(["#", f"# {LEGEND}"])
    return lines


def _fields_line(fields: Sequence[tuple[str, Scalar | None]]) -> list[str]:
    parts = [f"{key}: {_format_scalar(value)}" for key, value in fields if value is not None]
    return ["# " + " | ".join(parts)] if parts else []


def _format_scalar(value: Scalar) -> str:
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _yaml_key(key: str) -> str:
    """``key`` as written when it reads back as this one string key, else quoted."""
    try:
        node = compose(f"{key}: 0")
        pairs = node.value if isinstance(node, MappingNode) else []
        first = pairs[0][0] if len(pairs) == 1 else None
        if isinstance(first, ScalarNode) and scalar(first) == key:
            return key
    except (YamlFault, ScalarFault):
        pass
    return json.dumps(key)


def _parse_header(text: str, source: str) -> Provenance:
    fields: dict[str, Any] = {
        "notes": [],
        "sampling": {},
        "chat_template_kwargs": {},
        "speculative": {},
    }
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped:
            continue
        if not stripped.startswith("#"):
            break
        _parse_header_line(stripped[1:].strip(), number, source, fields)
    fields["notes"] = tuple(fields["notes"])
    return Provenance(**fields)


def _parse_header_line(body: str, line: int, source: str, fields: dict[str, Any]) -> None:
    if not body or body == LEGEND:
        return
    for prefix in (RUN_PREFIX, SOURCE_PREFIX):
        if body.startswith(prefix) and "source" not in fields:
            fields["source"] = body.removeprefix(prefix).strip()
            return
    kwargs = _KWARGS_RE.fullmatch(body)
    if kwargs:
        try:
            value = json.loads(kwargs.group(2))
        except json.JSONDecodeError as exc:
            raise GoldenFileError(
                source, line, f"{kwargs.group(1)} chat_template_kwargs is not JSON: {exc.msg}"
            ) from None
        if not isinstance(value, dict):
            raise GoldenFileError(
                source, line, f"{kwargs.group(1)} chat_template_kwargs must be a JSON object"
            )
        fields["chat_template_kwargs"][kwargs.group(1)] = value
        return
    if body.startswith(_SPEC_PREFIX):
        _parse_spec_line(body.removeprefix(_SPEC_PREFIX), line, source, fields)
        return
    segments = [_SEGMENT_RE.fullmatch(part.strip()) for part in body.split(" | ")]
    keys = [m.group(1) for m in segments if m is not None]
    structured = len(keys) == len(segments) and (
        keys[0] == "dataset" or all(k in HEADER_KEYS | SAMPLING_KEYS for k in keys)
    )
    if not structured:
        fields["notes"].append(body)
        return
    for match in segments:
        assert match is not None
        _set_field(match.group(1), match.group(2).strip(), line, source, fields)


def _parse_spec_line(rest: str, line: int, source: str, fields: dict[str, Any]) -> None:
    for part in rest.split(" | "):
        key, sep, value = part.strip().partition("=")
        if not sep or not key:
            raise GoldenFileError(
                source, line, f"speculative-config part {part.strip()!r} is not key=value"
            )
        if key == "method":
            fields["method"] = value
        elif key == "draft_model":
            fields["draft_model"] = value
        else:
            fields["speculative"][key] = value


def _set_field(key: str, value: str, line: int, source: str, fields: dict[str, Any]) -> None:
    if key in ("dataset", "dataset_sha256", "model", "image", "engine"):
        fields[key] = value
    elif key in ("dataset_n", "TP"):
        if not _INT_RE.fullmatch(value):
            raise GoldenFileError(source, line, f"header {key} {value!r} must be an integer")
        fields["tp" if key == "TP" else key] = int(value)
    elif key == "tolerance":
        if not _FLOAT_RE.fullmatch(value) or not math.isfinite(float(value)) or float(value) < 0:
            raise GoldenFileError(
                source, line, f"header tolerance {value!r} must be a non-negative number"
            )
        if float(value) > MAX_TOLERANCE:
            raise GoldenFileError(
                source,
                line,
                f"header tolerance {value} is above {MAX_TOLERANCE:g}: a tolerance that wide "
                "passes any curve, so the gate would be off; give a tolerance of at most "
                f"{MAX_TOLERANCE:g}",
            )
        fields["tolerance"] = float(value)
    elif key == "reference":
        if value not in ("true", "false"):
            raise GoldenFileError(source, line, f"header reference {value!r} must be true or false")
        fields["reference"] = value == "true"
    else:
        fields["sampling"][key] = _scalar_value(value)


def _scalar_value(value: str) -> Scalar:
    if _INT_RE.fullmatch(value):
        return int(value)
    if _FLOAT_RE.fullmatch(value):
        return float(value)
    return value


def _parse_body(text: str, source: str) -> tuple[str, dict[str, dict[int, float | None]]]:
    try:
        root = compose(text)
    except YamlFault as fault:
        if fault.too_deep:
            message = f"{fault.problem}; a curve nests three levels"
            raise GoldenFileError(source, None, message) from None
        raise GoldenFileError(source, fault.line, f"not valid YAML: {fault.problem}") from None
    if root is None:
        raise GoldenFileError(
            source, None, "the file has no curve; expected '<model key>:' with thinking modes"
        )
    top = _mapping(root, source, "the top level must be a mapping '<model key>: {modes}'")
    pairs = _unique_pairs(top, source)
    if len(pairs) != 1:
        names = ", ".join(repr(key) for key, _, _ in pairs)
        raise GoldenFileError(
            source,
            _line(pairs[1][1]) if len(pairs) > 1 else _line(root),
            f"expected exactly one model key, found {len(pairs)} ({names}); "
            "keep one curve per file",
        )
    model_key, key_node, modes_node = pairs[0]
    if not isinstance(model_key, str):
        raise GoldenFileError(
            source, _line(key_node), f"model key {model_key!r} must be a string (the model name)"
        )
    modes_map = _mapping(
        modes_node, source, f"{model_key}: expected thinking_on / thinking_off mappings"
    )
    modes: dict[str, dict[int, float | None]] = {}
    for mode, mode_key, cells_node in _unique_pairs(modes_map, source):
        if mode not in MODES:
            raise GoldenFileError(
                source,
                _line(mode_key),
                f"unknown mode {mode!r}; the modes are thinking_on and thinking_off",
            )
        modes[mode] = _parse_cells(str(mode), cells_node, source)
    if not modes:
        raise GoldenFileError(
            source, _line(modes_node), f"{model_key}: no thinking_on / thinking_off mode"
        )
    return model_key, modes


def _parse_cells(mode: str, node: Node, source: str) -> dict[int, float | None]:
    if isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:null":
        raise GoldenFileError(
            source, _line(node), f"mode {mode} is empty; give at least one k: AL or remove it"
        )
    cells_map = _mapping(node, source, f"mode {mode} must map draft lengths to AL values")
    cells: dict[int, float | None] = {}
    for k, k_node, al_node in _unique_pairs(cells_map, source):
        if isinstance(k, bool) or not isinstance(k, int):
            raise GoldenFileError(
                source, _line(k_node), f"{mode}: draft length {k!r} is not an integer"
            )
        if isinstance(al_node, ScalarNode) and al_node.tag == "tag:yaml.org,2002:null":
            raise GoldenFileError(
                source, _line(k_node), f"{mode} k={k}: the AL is empty; write a number or N/A"
            )
        al = _al_value(al_node, source)
        problem = cell_problem(k, al)
        if problem:
            raise GoldenFileError(source, _line(al_node), f"{mode} k={k}: {problem}")
        assert al is None or isinstance(al, int | float)
        cells[k] = None if al is None else float(al)
    if not cells:
        raise GoldenFileError(
            source, _line(node), f"mode {mode} is empty; give at least one k: AL or remove it"
        )
    return cells


def _al_value(node: Node, source: str) -> object:
    if not isinstance(node, ScalarNode):
        return "<a nested block>"
    if not node.style and node.value.endswith("."):
        raise GoldenFileError(
            source,
            _line(node),
            f"the AL {node.value!r} ends at its decimal point, as a value cut short does; "
            "write its decimals (e.g. 2.45) or N/A",
        )
    value = _value(node, source)
    if value == NA:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return str(value) if not isinstance(value, bool) else value


def _mapping(node: Node, source: str, reason: str) -> MappingNode:
    if not isinstance(node, MappingNode):
        raise GoldenFileError(source, _line(node), reason)
    return node


def _value(node: ScalarNode, source: str) -> object:
    try:
        return scalar(node)
    except ScalarFault as fault:
        raise GoldenFileError(source, _line(node), fault.problem) from None


def _unique_pairs(node: MappingNode, source: str) -> list[tuple[Any, Node, Node]]:
    keys: list[ScalarNode] = []
    for key_node, _ in node.value:
        if not isinstance(key_node, ScalarNode):
            raise GoldenFileError(source, _line(key_node), "keys must be plain scalars")
        keys.append(key_node)
    values = {id(k): _value(k, source) for k in keys}

    def same(key_node: Node) -> tuple[str, Any]:
        key = values[id(key_node)]
        return (type(key).__name__, key)

    repeat = repeated_key(node, same)
    if repeat is not None:
        first, again = repeat
        raise GoldenFileError(
            source,
            _line(again),
            f"duplicate key {values[id(again)]!r} (first on line {_line(first)}); keep one",
        )
    return [(values[id(k)], k, v) for k, v in node.value]


def _line(node: Node) -> int:
    return int(node.start_mark.line) + 1
