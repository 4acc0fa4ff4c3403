from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pytest_infx.envs import aiperf, toolenv
from pytest_infx.files.atomic import atomic_write_text as write_atomic


def test_spec_pins_aiperf_and_checks_its_cli() -> None:
    assert aiperf.SPEC.requirements == ("aiperf==0.13.0",)
    assert aiperf.SPEC.check == ("aiperf", "--help")


def test_installed_aiperf_paths(tmp_path: Path) -> None:
    assert aiperf.installed_aiperf(cache_dir=tmp_path) is None
    env = toolenv.locate(aiperf.SPEC, cache_dir=tmp_path)
    env.env_dir.mkdir(parents=True)
    write_atomic(env.marker_path, "{}\n")
    found = aiperf.ensure_aiperf(cache_dir=tmp_path)
    assert found == aiperf.installed_aiperf(cache_dir=tmp_path)
    assert found.aiperf == env.env_dir / "bin" / "aiperf"
    assert found.python == env.env_dir / "bin" / "python"
    assert found.version == "0.13.0"


@pytest.mark.engine
def test_real_aiperf_runs(pytestconfig: pytest.Config) -> None:
    env = aiperf.ensure_aiperf(progress=pytestconfig.get_terminal_writer().line)
    result = subprocess.run(
        [str(env.aiperf), "--help"], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "profile" in result.stdout
