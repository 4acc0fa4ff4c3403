"""Where ``folder_lock`` was: :mod:`pytest_infx.files.locks` holds every lock now."""

from __future__ import annotations

from pytest_infx.files.locks import folder_lock as folder_lock
