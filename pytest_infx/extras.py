"""The optional dependencies and the extra that installs each.

A plain ``pip install pytest-infx`` is what lint needs; it must bring no pytest plugin but
pytest-infx's own, since pytest loads every installed plugin in every run of the environment
(tokenizers pulls in huggingface_hub, httpx and anyio, whose plugin runs a foreign project's
``anyio``-marked tests; pytest-xdist adds ``-n`` and its hooks). What only a benchmark run, the
results history or a Slurm sweep uses is therefore an extra, imported where it is used, and
code that needs one asks :func:`require` first, so a missing extra is one line naming the
``pip install`` that brings it rather than an ``ImportError`` traceback.
"""

from __future__ import annotations

import importlib.util

from pytest_infx.usage import UsageError

EXTRA_OF: dict[str, tuple[str, str]] = {
    "sqlalchemy": ("SQLAlchemy", "history"),
    "alembic": ("alembic", "history"),
    "numpy": ("numpy", "fixedseq"),
    "tokenizers": ("tokenizers", "fixedseq"),
    "jinja2": ("Jinja2", "fixedseq"),
    "xdist": ("pytest-xdist", "xdist"),
    "syrupy": ("syrupy", "golden"),
}
"""Each optional top-level module: its distribution and the extra that installs it (the ``run``
and ``dev`` extras install them all)."""


class MissingExtra(UsageError):
    """An optional dependency is not installed; ``str()`` names the extra to install."""


def missing_message(module: str, purpose: str) -> str:
    distribution, extra = EXTRA_OF[module]
    return (
        f"{purpose} needs {distribution}, which pytest-infx installs only with its {extra!r} "
        f"extra: pip install 'pytest-infx[{extra}]' (or 'pytest-infx[run]' for everything a "
        "benchmark run uses)"
    )


def require(*modules: str, purpose: str) -> None:
    """Raise :class:`MissingExtra` for the first of ``modules`` that is not installed; looking
    a module up does not import it, so this costs nothing where the import follows anyway."""
    for module in modules:
        if importlib.util.find_spec(module) is None:
            raise MissingExtra(missing_message(module, purpose))
