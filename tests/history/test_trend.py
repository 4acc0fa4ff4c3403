from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from history.samples import row, stamp
from pytest_infx.history.store import Store
from pytest_infx.history.trend import chosen_metric, since, trend
from pytest_infx.report.plots import trend_png
from pytest_infx.results.verdict import Verdict

NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


def _stored(tmp_path: Path, values: list[float], *, failed: int | None = None) -> Store:
    store = Store.open(f"sqlite:///{tmp_path / 'h.db'}")
    for day, value in enumerate(values):
        run = store.add_run(stamp(f"r{day}", day=day))
        store.put(run, row(value, status=Verdict.FAIL if day == failed else "pass"))
    return store


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30d", datetime(2026, 11, 5, 12, 0, tzinfo=UTC)),
        ("12h", datetime(2026, 12, 5, 0, 0, tzinfo=UTC)),
        ("2w", datetime(2026, 11, 21, 12, 0, tzinfo=UTC)),
        ("2026-11-01", datetime(2026, 11, 1, tzinfo=UTC)),
    ],
)
def test_since_takes_a_span_or_a_date(text: str, expected: datetime) -> None:
    assert since(text, now=NOW) == expected


def test_since_names_what_it_takes() -> None:
    with pytest.raises(ValueError, match="give a span such as 30d"):
        since("last tuesday", now=NOW)


def test_the_table_lists_every_run_with_its_change(tmp_path: Path) -> None:
    store = _stored(tmp_path, [100.0, 110.0, 5.0, 99.0], failed=2)
    found = trend(row().item, store.series(row().item), None)
    store.close()
    lines = found.lines()
    assert found.metric == "tput_per_gpu"
    assert lines[0] == "smollm2-cpu[tp1-c4]: tput_per_gpu (tok/s/gpu), 4 runs"
    assert lines[1].split() == [
        "run",
        "started",
        "(UTC)",
        "branch",
        "commit",
        "status",
        "value",
        "change",
    ]
    assert lines[3].split()[-2:] == ["110", "+10.0%"]
    assert lines[4].split()[-3:] == ["fail", "5", "-95.5%"]
    assert lines[5].split()[-2:] == ["99", "-10.0%"]
    assert found.drift is None


def test_a_slow_drift_is_flagged(tmp_path: Path) -> None:
    store = _stored(tmp_path, [100.0, 97.0, 94.0, 91.0, 88.0])
    found = trend(row().item, store.series(row().item), "tput_per_gpu")
    store.close()
    assert found.drift is not None and found.drift.steps == 4
    assert found.lines()[-1].startswith("! slow drift of tput_per_gpu: 4 consecutive runs")


def test_a_metric_is_chosen_or_checked(tmp_path: Path) -> None:
    store = _stored(tmp_path, [1.0])
    rows = store.series(row().item)
    store.close()
    assert chosen_metric(rows, "median_ttft") == "median_ttft"
    with pytest.raises(KeyError, match="not a metric"):
        chosen_metric(rows, "bogus")


def test_the_picture_is_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    store = _stored(tmp_path, [100.0, 90.0, 95.0], failed=1)
    found = trend(row().item, store.series(row().item), None)
    store.close()
    picture = trend_png(found)
    assert picture[:8] == b"\x89PNG\r\n\x1a\n"
