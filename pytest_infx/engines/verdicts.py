"""The engine parsers' verdicts on server commands, kept between runs in the cache folder.

Importing an engine's parser costs from seconds to minutes on a busy machine, and a parser's
answer depends on nothing but the parser environment (its release, its content, the script that
drives it) and the argv. So each verdict is stored under a key made of those, and a run whose
commands did not change starts no parser process at all. A file that cannot be read is an empty
store: the commands are parsed again, never trusted from a half-written file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from pytest_infx.engines.base import ParserEnv
from pytest_infx.envs.toolenv import spec_hash
from pytest_infx.files.atomic import atomic_write_json
from pytest_infx.files.cachedir import cache_root

FOLDER = "engine-check"
FORMAT = 1
"""Bumped when the stored shape changes, so an older file reads as empty."""

Argv = tuple[str, ...]


def parser_key(parser: ParserEnv) -> str:
    """The parser's identity: its environment (release, content) and the script it runs."""
    script = (resources.files(parser.package) / parser.script).read_bytes()
    digest = hashlib.sha256()
    for part in (parser.release, spec_hash(parser.spec), hashlib.sha256(script).hexdigest()):
        digest.update(part.encode("utf-8") + b"\0")
    return f"{parser.spec.name}-{parser.spec.version}-{digest.hexdigest()[:16]}"


def argv_key(argv: Argv) -> str:
    return hashlib.sha256(json.dumps(list(argv)).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Verdicts:
    """One parser's stored verdicts: ``None`` for an accepted argv, else the parser's message."""

    path: Path

    @classmethod
    def of(cls, parser: ParserEnv, cache_dir: Path | None = None) -> Verdicts:
        return cls(cache_root(cache_dir) / FOLDER / f"{parser_key(parser)}.json")

    def load(self) -> dict[str, str | None]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return {}
        found = data.get("verdicts")
        if not isinstance(found, dict):
            return {}
        return {
            str(key): value
            for key, value in found.items()
            if value is None or isinstance(value, str)
        }

    def known(self, argvs: Iterable[Argv]) -> dict[Argv, str | None]:
        """The stored verdict of each argv that has one."""
        stored = self.load()
        return {argv: stored[key] for argv in argvs if (key := argv_key(argv)) in stored}

    def add(self, verdicts: Mapping[Argv, str | None]) -> None:
        """Store new verdicts beside the stored ones; two runs writing at once each write a
        whole file, and a verdict one of them loses is only parsed again."""
        if not verdicts:
            return
        stored = self.load()
        stored.update({argv_key(argv): message for argv, message in verdicts.items()})
        atomic_write_json(self.path, {"format": FORMAT, "verdicts": stored})
