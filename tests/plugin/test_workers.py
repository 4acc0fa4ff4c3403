from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import pytest

from pytest_infx.plugin.workers import GOLDEN_TREE, golden_tree, worker_input


def _config(**attributes: object) -> pytest.Config:
    return cast(pytest.Config, SimpleNamespace(**attributes))


def test_the_controller_is_no_worker_and_was_sent_nothing() -> None:
    controller = _config()
    assert worker_input(controller) == {}
    assert golden_tree(controller) is None


def test_a_worker_is_told_by_what_its_controller_sent() -> None:
    worker = _config(workerinput={GOLDEN_TREE: ["a.yaml"]})
    assert worker_input(worker) == {GOLDEN_TREE: ["a.yaml"]}
    assert golden_tree(worker) == ["a.yaml"]
