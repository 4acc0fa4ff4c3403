"""The folder of golden curves and its README registry.

Callers ask for a curve by name; the store turns "no such file" into an error that names the folder
and the curves it does have, which is what someone with a typo in a recipe needs to see.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pytest_infx.files.contained import inside
from pytest_infx.files.textio import NotUtf8Error, read_utf8
from pytest_infx.golden.curve import Curve
from pytest_infx.golden.io import GoldenFileError, load_curve, not_utf8

REGISTRY_FILE: Final = "README.md"
REGISTRY_COLUMNS: Final = ("Model", "Method", "Golden YAML", "Source run")
_LINK_RE: Final = re.compile(r"\[([^\]]*)\]\(([^)]*)\)")


class GoldenNotFoundError(LookupError):
    """A curve name with no file in the golden folder."""

    def __init__(self, name: str, root: Path, known: tuple[str, ...]) -> None:
        self.name = name
        self.root = root
        self.known = known
        listing = ", ".join(known) if known else "none"
        super().__init__(
            f"no golden curve {name!r} in {root} (expected {root / (name + '.yaml')}); "
            f"known curves: {listing}"
        )


@dataclass(frozen=True, kw_only=True)
class CurveListing:
    """One row of the README table; ``curve`` is the YAML stem the row links to."""

    model: str
    method: str
    curve: str
    yaml_link: str
    source_run: str
    source_url: str | None
    line: int


class GoldenStore:
    """Read access to one golden folder; every call reads the disk, so edits show at once."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"GoldenStore({str(self.root)!r})"

    def path(self, name: str, *, source: str = "the curve name", field: str = "curve") -> Path:
        """The file of curve ``name``, which must stay inside the golden folder after symbolic
        links: a name is read from recipes and result records, and ``../../x`` must not make
        the report or a gate read a file outside it. OutsideFolderError (a ValueError) names
        ``source`` and ``field``, where the name was written."""
        inside(self.root, f"{name}.yaml", source=source, field=field)
        return self.root / f"{name}.yaml"

    def names(self) -> tuple[str, ...]:
        if not self.root.is_dir():
            return ()
        return tuple(
            sorted(
                p.name.removesuffix(".yaml")
                for p in self.root.glob("*.yaml")
                if not p.name.startswith(".")
            )
        )

    def get(self, name: str, *, source: str = "the curve name", field: str = "curve") -> Curve:
        path = self.path(name, source=source, field=field)
        if not path.is_file():
            raise GoldenNotFoundError(name, self.root, self.names())
        return load_curve(path)

    def curves(self) -> tuple[Curve, ...]:
        return tuple(self.get(name) for name in self.names())

    def registry(self) -> tuple[CurveListing, ...]:
        """Rows of the ``| Model | Method | Golden YAML | Source run |`` table in README.md."""
        readme = self.root / REGISTRY_FILE
        try:
            lines = read_utf8(readme).splitlines()
        except FileNotFoundError:
            raise GoldenFileError(
                readme, None, "no registry; add a README.md with the golden curve table"
            ) from None
        except NotUtf8Error as exc:
            raise not_utf8(exc) from None
        for number, line in enumerate(lines, start=1):
            cells = _row_cells(line)
            if cells is not None and tuple(cells[:4]) == REGISTRY_COLUMNS:
                return tuple(_entries(readme, lines, number))
        header = "| " + " | ".join(REGISTRY_COLUMNS) + " |"
        raise GoldenFileError(readme, None, f"no registry table; expected a header {header}")


def _entries(readme: Path, lines: list[str], header_line: int) -> list[CurveListing]:
    entries: list[CurveListing] = []
    for number in range(header_line + 1, len(lines) + 1):
        cells = _row_cells(lines[number - 1])
        if cells is None:
            break
        if all(set(cell) <= set("-: ") for cell in cells):
            continue
        if len(cells) < len(REGISTRY_COLUMNS):
            raise GoldenFileError(
                readme,
                number,
                f"registry row has {len(cells)} cells; expected {len(REGISTRY_COLUMNS)} "
                "(Model | Method | Golden YAML | Source run)",
            )
        model, method, yaml_cell, run_cell = cells[:4]
        yaml_text, yaml_target = _link(yaml_cell)
        target = Path(yaml_target or yaml_text).name
        if not target.endswith(".yaml"):
            raise GoldenFileError(
                readme, number, f"Golden YAML cell {yaml_cell!r} does not name a .yaml file"
            )
        run_text, run_url = _link(run_cell)
        entries.append(
            CurveListing(
                model=model,
                method=method,
                curve=target.removesuffix(".yaml"),
                yaml_link=yaml_target or yaml_text,
                source_run=run_text,
                source_url=run_url,
                line=number,
            )
        )
    return entries


def _row_cells(line: str) -> list[str] | None:
    stripped = line.strip()
    if not stripped.startswith("|"):
        return None
    return [cell.strip() for cell in stripped.strip("|").split("|")]


def _link(cell: str) -> tuple[str, str | None]:
    match = _LINK_RE.search(cell)
    if match is None:
        return cell.strip("`"), None
    return match.group(1).strip("`"), match.group(2)
