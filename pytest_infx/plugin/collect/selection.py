"""Which points run here, and in what order.

``--gpu`` keeps the points of one runner type. The order groups items that share a server
launch configuration, so each server starts once and stops after its last item, while staying
deterministic so every xdist worker collects the same list.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pytest

from pytest_infx.prepare.catalog import PointRef


@dataclass(frozen=True)
class Selection:
    keep: list[pytest.Item]
    drop: list[pytest.Item]
    reasons: list[str]


def select(
    items: Sequence[pytest.Item],
    point_of: Callable[[pytest.Item], PointRef | None],
    runner: str,
    changed: frozenset[str] | None = None,
) -> Selection:
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    other_runners: Counter[str] = Counter()
    unchanged = 0
    for item in items:
        point = point_of(item)
        if point is None:
            keep.append(item)
        elif point.runner != runner:
            other_runners[point.runner] += 1
            drop.append(item)
        elif changed is not None and point.recipe_key not in changed:
            unchanged += 1
            drop.append(item)
        else:
            keep.append(item)
    reasons = []
    if other_runners:
        listed = ", ".join(f"{name} ({n})" for name, n in sorted(other_runners.items()))
        reasons.append(
            f"{sum(other_runners.values())} points of other runners deselected "
            f"(runner {runner} selected): {listed}"
        )
    if unchanged:
        reasons.append(f"{unchanged} points of unchanged recipe keys deselected")
    return Selection(keep, drop, reasons)


def group_by_server(
    items: list[pytest.Item], server_key: Callable[[pytest.Item], str | None]
) -> list[pytest.Item]:
    """Stable reorder: items sharing a server key become contiguous, at their first position."""
    first: dict[str | None, int] = {}
    order: list[tuple[int, int, pytest.Item]] = []
    for index, item in enumerate(items):
        key = server_key(item)
        if key is None:
            order.append((index, index, item))
            continue
        rank = first.setdefault(key, index)
        order.append((rank, index, item))
    order.sort(key=lambda t: (t[0], t[1]))
    return [item for _, _, item in order]


def mark_server_groups(
    items: list[pytest.Item], server_key: Callable[[pytest.Item], str | None]
) -> None:
    """Under ``--dist loadgroup``, every item of one server goes to one worker: workers on other
    nodes cannot attach to a server, so splitting its items would start it once per node."""
    import hashlib

    for item in items:
        key = server_key(item)
        if key is not None:
            group = "infx-" + hashlib.sha256(key.encode()).hexdigest()[:12]
            item.add_marker(pytest.mark.xdist_group(group))
