"""Where pytest-infx keeps per-user caches (engine environments, parsed recipe trees)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root(cache_dir: Path | None = None) -> Path:
    """``cache_dir``, else ``$INFX_CACHE_DIR``, else ``$XDG_CACHE_HOME/pytest-infx``, else
    ``~/.cache/pytest-infx``."""
    if cache_dir is not None:
        return Path(cache_dir)
    explicit = os.environ.get("INFX_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg) / "pytest-infx"
    return Path.home() / ".cache" / "pytest-infx"
