"""An engine release's command-line options (and the fields of an options file) as data, for the
engines whose parser cannot run here (TensorRT-LLM, ATOM).

Such an engine's own parser needs its GPU stack to import, and its packages are on no registry
this machine reaches, so the check that vLLM and SGLang get from their parsers comes instead
from the option set read out of that release's source (:mod:`pytest_infx.engines.optionsource`):
which flags exist, which take a value, their choices and number types, how many positional
arguments there are, and for an options file (TensorRT-LLM's LLM-API options) the fields of each
options model. The file names the source and commit it was read from; one exists only for a
release whose source was read, and a point without one is listed as unchecked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

PACKAGE = "pytest_infx.engines.data.optionsets"
_CLASS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Flag(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    takes_value: bool
    type: Literal["str", "int", "float"] = "str"
    choices: tuple[str, ...] | None = None


class OptionSet(BaseModel):
    """One release's options. ``spelling`` says how the parser matches a name: ``exact``
    (click), or ``kebab-snake`` (an argparse parser that takes ``--a-b`` and ``--a_b`` alike);
    ``options_flags`` are the flags whose value is an options file, checked against ``root``
    among ``models`` (class -> field -> annotation as written in the source)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    engine: str
    release: str
    source: str
    made_by: str
    spelling: Literal["exact", "kebab-snake"]
    positionals: int
    flags: dict[str, Flag]
    options_flags: tuple[str, ...] = ()
    models: dict[str, dict[str, str]] = {}
    root: str | None = None

    def check_argv(self, argv: list[str], files: Mapping[str, str]) -> str | None:
        """What the parser would refuse in ``argv`` (the arguments after the command), or None;
        ``files`` are the texts of the files argv names, by the path as argv writes it."""
        spelled = (lambda name: name) if self.spelling == "exact" else _kebab
        flags = {spelled(name): flag for name, flag in self.flags.items()}
        file_flags = {spelled(name) for name in self.options_flags}
        positional = 0
        i = 0
        while i < len(argv):
            token = argv[i]
            if not token.startswith("-") or token == "-":
                positional += 1
                i += 1
                continue
            name, eq, inline = token.partition("=")
            flag = flags.get(spelled(name))
            if flag is None:
                return f"no such option: {name}"
            if not flag.takes_value:
                if eq:
                    return f"option {name} does not take a value"
                i += 1
                continue
            if eq:
                value, i = inline, i + 1
            elif i + 1 < len(argv):
                value, i = argv[i + 1], i + 2
            else:
                return f"option {name} requires an argument"
            wrong = _value_error(name, flag, value)
            if wrong is None and spelled(name) in file_flags:
                wrong = self.check_file(name, value, files)
            if wrong is not None:
                return wrong
        if positional != self.positionals:
            return f"takes {self.positionals} positional argument(s), got {positional}"
        return None

    def check_file(self, flag: str, value: str, files: Mapping[str, str]) -> str | None:
        if value not in files:
            return None
        try:
            loaded = yaml.safe_load(files[value])
        except yaml.YAMLError as exc:
            return f"{flag}: the options file is not YAML: {exc}"
        if self.root is None or not isinstance(loaded, dict):
            return None if loaded is None or self.root is None else f"{flag}: not a mapping"
        return self.check_fields(flag, self.root, loaded)

    def check_fields(self, where: str, model: str, values: Mapping[object, object]) -> str | None:
        """The first unknown field of ``model`` in ``values``, looking into a field whose
        annotation names option models (a union of several is any of them)."""
        fields = self.models.get(model, {})
        for key, value in values.items():
            if key not in fields:
                return f"{where}: {model} has no field {key!r}"
            inner = [c for c in _CLASS.findall(fields[str(key)]) if c in self.models]
            if not inner or not isinstance(value, dict):
                continue
            if len(inner) == 1:
                wrong = self.check_fields(f"{where}.{key}", inner[0], value)
            else:
                known = {field for c in inner for field in self.models[c]}
                extra = [k for k in value if k not in known]
                wrong = None
                if extra:
                    wrong = f"{where}.{key}: none of {', '.join(inner)} has a field {extra[0]!r}"
            if wrong is not None:
                return wrong
        return None


def _kebab(name: str) -> str:
    stripped = name.lstrip("-")
    return name[: len(name) - len(stripped)] + stripped.replace("_", "-")


def _value_error(name: str, flag: Flag, value: str) -> str | None:
    if flag.choices is not None and value not in flag.choices:
        return f"option {name}: invalid choice {value!r} (choose from {', '.join(flag.choices)})"
    converters = {"int": int, "float": float}
    if flag.type in converters:
        try:
            converters[flag.type](value)
        except ValueError:
            return f"option {name}: {value!r} is not a valid {flag.type}"
    return None


def file_name(engine: str, release: str) -> str:
    return f"{engine}-{release}.json"


def shipped() -> Path:
    """The folder of the option sets this package holds, which ``infx engine check`` reads."""
    return Path(str(resources.files(PACKAGE)))


def load(engine: str, release: str | None) -> OptionSet | None:
    """The option set this package holds for ``engine`` at ``release``, if its source was read;
    a file that does not hold one is an error naming it."""
    if release is None:
        return None
    resource = shipped() / file_name(engine, release.lstrip("v"))
    if not resource.is_file():
        return None
    try:
        return OptionSet.model_validate_json(resource.read_text(encoding="utf-8"))
    except ValidationError as exc:
        raise ValueError(f"{resource}: not an option set: {exc}") from None
