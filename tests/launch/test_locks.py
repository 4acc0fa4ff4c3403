from __future__ import annotations

import os
import stat
from pathlib import Path

from pytest_infx.launch.locks import try_lock


def test_a_held_lock_is_refused_until_its_descriptor_is_closed(tmp_path: Path) -> None:
    path = tmp_path / "a.lock"
    fd = try_lock(path, 0o600)
    assert fd is not None
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert try_lock(path) is None
    os.close(fd)
    again = try_lock(path)
    assert again is not None
    os.close(again)
