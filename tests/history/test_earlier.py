"""The earlier results a sweep's chart draws under its points: each point's latest passing row
from another run, never this run's, a failed one, or one without both figures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from history.samples import row, stamp
from pytest_infx.history.earlier import earlier_points
from pytest_infx.history.store import Store
from pytest_infx.results.verdict import Verdict

ITEM = "smollm2-cpu[tp1-c4]"
OTHER = "smollm2-cpu[tp1-c8]"


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    opened = Store.open(db_url)
    yield opened
    opened.close()


def figures(tput: float, intvty: float = 20.0) -> dict[str, float]:
    return {"output_tput_per_gpu": tput, "median_intvty": intvty}


def test_the_latest_passing_row_of_another_run_is_drawn(store: Store) -> None:
    old, newer, failed, now = (
        store.add_run(stamp(run_id, day=day)) for day, run_id in enumerate(("r1", "r2", "r3", "r4"))
    )
    store.put(old, row(item=ITEM, metrics=figures(100.0)))
    store.put(newer, row(item=ITEM, metrics=figures(110.0, 22.0)))
    store.put(failed, row(item=ITEM, metrics=figures(10.0), status=Verdict.FAIL))
    store.put(now, row(item=ITEM, metrics=figures(130.0)))
    found = earlier_points(store, [ITEM, OTHER], this_run="r4")
    assert set(found) == {ITEM}
    earlier = found[ITEM]
    assert (earlier.throughput_per_gpu, earlier.interactivity, earlier.run) == (110.0, 22.0, "r2")


def test_a_point_only_this_run_measured_has_no_earlier_result(store: Store) -> None:
    run = store.add_run(stamp("r1"))
    store.put(run, row(item=ITEM, metrics=figures(100.0)))
    assert earlier_points(store, [ITEM], this_run="r1") == {}
    assert set(earlier_points(store, [ITEM], this_run=None)) == {ITEM}


def test_a_row_without_interactivity_is_passed_over(store: Store) -> None:
    first, second = store.add_run(stamp("r1")), store.add_run(stamp("r2", day=1))
    store.put(first, row(item=ITEM, metrics=figures(90.0)))
    store.put(second, row(item=ITEM, metrics={"output_tput_per_gpu": 95.0}))
    assert earlier_points(store, [ITEM], this_run="r3")[ITEM].throughput_per_gpu == 90.0
