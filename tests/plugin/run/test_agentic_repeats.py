"""An AgentX point measured in ``repeats:`` passes: aiperf runs once per pass against the same
server, the record keeps each pass's figures and their median, its files are the median pass's,
and the history's row holds the median. aiperf's part is its export of a stand-in run
(``tests/agentic/data``) with the output rate each pass is given; the whole chain through the
real aiperf is ``tests/e2e/test_agentic_repeats.py``."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from results import samples

import pytest_infx.agentic.measure as measure
from pytest_infx.agentic.results import AgenticResult, parse_export
from pytest_infx.agentic.runner import AgenticRun
from pytest_infx.history.rows import row_of
from pytest_infx.kinds import KINDS
from pytest_infx.plugin.run.kinds import AGENTIC
from pytest_infx.plugin.run.kinds.measured import MeasuredPoint
from pytest_infx.results.identity import ConfigIdentity
from pytest_infx.results.records import PointRecord, Record

EXPORT = Path(__file__).parents[2] / "agentic" / "data" / "profile_export_ok.json"
RATES = {"pass-1": 70.0, "pass-2": 50.0, "pass-3": 90.0}
"""Each pass's output rate (tokens/s on one GPU): the median pass is the first."""


class _Run:
    """The run a measured point reports to: it keeps its record and counts its servers' uses."""

    def __init__(self, ini_repeats: int) -> None:
        self.kept: list[Record] = []
        self.measured = 0
        self.settings = SimpleNamespace(history=SimpleNamespace(repeats=ini_repeats))
        self.progress = SimpleNamespace(doing=lambda *args, **kwargs: contextlib.nullcontext())

    def say(self, line: str) -> None:
        """Nothing to print here."""

    def identity(self, point: object) -> ConfigIdentity:
        return ConfigIdentity.model_validate(samples.CONFIG)

    @contextlib.contextmanager
    def measuring(self, server: object, point: object) -> Iterator[None]:
        self.measured += 1
        yield

    def keep(self, record: Record, point: object, *, problems: Sequence[str] = ()) -> Record:
        self.kept.append(record)
        return record

    def gate(self, node: object, record: Record, point: object) -> None:
        """The baseline gate is the history's, tested there."""


def _export(folder: Path, rate: float) -> AgenticResult:
    data = json.loads(EXPORT.read_text(encoding="utf-8"))
    data["output_token_throughput"]["avg"] = rate
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "profile_export_aiperf.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return parse_export(path, gpus=1)


def _measure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, repeats: int | None, ini_repeats: int
) -> tuple[PointRecord, _Run, list[Path]]:
    folders: list[Path] = []

    def run_aiperf(run: AgenticRun) -> AgenticResult:
        folders.append(run.artifact_dir)
        return _export(run.artifact_dir, RATES.get(run.artifact_dir.name, 60.0))

    base = AgenticRun(
        aiperf=Path("aiperf"),
        url="http://127.0.0.1:1",
        model="m",
        tokenizer="m",
        concurrency=2,
        duration_s=10,
        artifact_dir=tmp_path / "a[tp1-c2]",
        traces=tmp_path,
    )
    agentic = SimpleNamespace(duration=10, failed_request_threshold=0.1, repeats=repeats)
    monkeypatch.setattr(measure, "run_aiperf", run_aiperf)
    monkeypatch.setattr(measure, "agentic_of", lambda point: agentic)
    monkeypatch.setattr(measure, "aiperf_run", lambda point, server, context, shape: base)
    monkeypatch.setattr(measure, "aggregate", lambda run, result, shape: (None, None))
    monkeypatch.setattr(measure, "identity", lambda point, server: samples.identity())
    ctx = _Run(ini_repeats)
    node: Any = SimpleNamespace(user_properties=[])
    point = MeasuredPoint(
        AGENTIC,
        cast(Any, SimpleNamespace(id="a[tp1-c2]")),
        cast(Any, None),
        cast(Any, ctx),
        cast(Any, SimpleNamespace(node=node)),
    )
    point.run()
    [record] = ctx.kept
    assert isinstance(record, PointRecord)
    return record, ctx, folders


def test_a_point_in_three_passes_keeps_each_pass_and_the_median_the_history_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record, ctx, folders = _measure(tmp_path, monkeypatch, repeats=3, ini_repeats=5)
    assert [folder.name for folder in folders] == ["pass-1", "pass-2", "pass-3"]
    assert ctx.measured == 1, "every pass runs against the same server, measured once"
    assert record.passes is not None and record.median is not None
    assert [each["output_tput_per_gpu"] for each in record.passes] == [70.0, 50.0, 90.0]
    assert record.median["output_tput_per_gpu"] == 70.0
    assert record.aiperf.export == str(folders[0] / "profile_export_aiperf.json")
    assert record.throughput.output_tokens_per_s_per_gpu == 70.0
    config = ConfigIdentity.model_validate(samples.CONFIG)
    row = row_of(record.model_copy(update={"config": config}), KINDS)
    assert row.metrics["output_tput_per_gpu"] == 70.0
    assert {name: row.metrics[name] for name in record.median} == record.median
    assert record.as_json()["median"] == record.median


def test_the_ini_repeats_reaches_a_point_whose_recipe_names_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record, _, folders = _measure(tmp_path, monkeypatch, repeats=None, ini_repeats=3)
    assert len(folders) == 3 and record.passes is not None and len(record.passes) == 3


def test_a_point_measured_once_keeps_its_folder_and_its_file_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record, _, folders = _measure(tmp_path, monkeypatch, repeats=None, ini_repeats=1)
    assert folders == [tmp_path / "a[tp1-c2]"]
    assert record.passes is None and record.median is None
    assert not {"passes", "median"} & set(record.as_json())
