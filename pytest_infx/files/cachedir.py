"""Where pytest-infx keeps per-user caches (engine environments, parsed recipe trees)."""

from __future__ import annotations

from pathlib import Path

from pytest_infx.settings import Environment, environment


def cache_root(cache_dir: Path | None = None, env: Environment | None = None) -> Path:
    """``cache_dir``, else ``$INFX_CACHE_DIR``, else ``$XDG_CACHE_HOME/pytest-infx``, else
    ``~/.cache/pytest-infx``."""
    if cache_dir is not None:
        return Path(cache_dir)
    env = env or environment()
    if env.cache_dir:
        return Path(env.cache_dir)
    if env.xdg_cache_home:
        return Path(env.xdg_cache_home) / "pytest-infx"
    return Path.home() / ".cache" / "pytest-infx"
