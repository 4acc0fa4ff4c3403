from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from e2e.conftest import Sweep
from e2e.helpers import recipe, write_recipe
from results import samples

import pytest_infx.plugin.collect.items as item_functions
import pytest_infx.plugin.run.resume as resume
from pytest_infx.agentic.kind import AgenticBenchmark
from pytest_infx.kinds import KINDS
from pytest_infx.plugin.output.summary import (
    AGENTIC_PROPERTY,
    CELL_PROPERTY,
    FIXED_PROPERTY,
    records_from,
)
from pytest_infx.plugin.run.fixtures import runnable
from pytest_infx.plugin.run.kinds import ADAPTERS, AGENTIC, FIXED_SEQ_LEN
from pytest_infx.plugin.run.kinds.measured import MeasuredPoint, ReusedRecord
from pytest_infx.plugin.run.kinds.speedbench import ReusedCell, SpeedbenchItems
from pytest_infx.plugin.stash import REF, REUSE
from pytest_infx.prepare.preflight import Datasets
from pytest_infx.recipes.loader import load_tree
from pytest_infx.recipes.points import Point, expand_all
from pytest_infx.results.identity import ConfigIdentity
from pytest_infx.results.layout import Layout
from pytest_infx.results.records import Record
from pytest_infx.results.reuse import Reuse

KEY = "fake-cpu-both"


def _both(folder: Path, record: Path) -> list[Point]:
    """A recipe with one SPEED-Bench cell per thinking mode, one AgentX point and one
    fixed-seq-len point."""
    data = recipe(KEY, record=record)
    data["agentic"] = {"points": [{"tp": 1, "concurrency": [2]}], "traces": "builtin"}
    data["fixed-seq-len"] = {"points": [{"tp": 1, "isl": 64, "osl": 8, "concurrency": [2]}]}
    write_recipe(folder, data)
    return expand_all(load_tree(folder))


def _items(sweep: Sweep) -> list[pytest.Item]:
    found, _ = sweep.pytester.inline_genitems("--gpu", "cpu", "--infx-results", str(sweep.results))
    return [item for item in found if KEY in item.nodeid]


def _replaced() -> None:
    """Stands in for the SPEED-Bench item function."""


def _stored(point: Point, datasets: Datasets) -> Record:
    """A passed result of ``point`` in the words of its kind."""
    sha256 = ADAPTERS[point.kind].data_sha256(point, datasets)
    identity = {"id": point.id, "recipe": point.recipe_key, "fingerprint": point.fingerprint}
    if point.kind == "agentic":
        return samples.point(**identity, traces_sha256=sha256)
    if point.kind == "fixed_seq_len":
        assert sha256 is None
        return samples.fixed(**identity)
    return samples.cell(**identity, dataset__sha256=sha256)


SAMPLES: dict[str, Callable[..., Record]] = {
    "speedbench": samples.cell,
    "agentic": samples.point,
    "fixed_seq_len": samples.fixed,
}


def test_the_registry_holds_one_kind_per_kind_of_point(tmp_path: Path) -> None:
    points = _both(tmp_path / "recipes", tmp_path / "starts.jsonl")
    assert sorted(ADAPTERS) == sorted({p.kind for p in points})
    assert all(ADAPTERS[p.kind].name == p.kind for p in points)


def test_collection_takes_the_item_function_and_marker_from_the_kind(
    sweep: Sweep, monkeypatch: pytest.MonkeyPatch
) -> None:
    _both(sweep.recipes, sweep.record)
    monkeypatch.setattr(SpeedbenchItems, "function", property(lambda self: _replaced))
    found = {item.name: item for item in _items(sweep)}
    kinds = {name: item.stash[REF].kind for name, item in found.items()}
    assert sorted(kinds.values()) == ["agentic", "fixed_seq_len", "speedbench", "speedbench"]
    functions = {
        "speedbench": _replaced,
        "agentic": item_functions.recipe_point,
        "fixed_seq_len": item_functions.recipe_point,
    }
    for name, item in found.items():
        function = cast(pytest.Function, item).obj
        assert function is functions[kinds[name]]
        assert item.get_closest_marker(kinds[name]) is not None


class _Kind:
    """A kind that says which of its two runnables the fixture asked for."""

    def fresh(self, point: Point, server: object, run: object, request: object) -> object:
        return ("fresh", point, server)

    def reused(self, point: Point, reuse: Reuse, run: object, request: object) -> object:
        return ("reused", point, reuse)


def _request(reuse: Reuse | None) -> Any:
    node = SimpleNamespace(stash=pytest.Stash())
    if reuse is not None:
        node.stash[REUSE] = reuse
    return SimpleNamespace(node=node, getfixturevalue=lambda name: f"<{name}>")


def test_the_fixture_asks_the_kind_for_a_fresh_runnable_or_the_reused_one(tmp_path: Path) -> None:
    point = _both(tmp_path / "recipes", tmp_path / "starts.jsonl")[0]
    reuse = Reuse(tmp_path / "stored.json", samples.cell(id=point.id))
    kind: Any = _Kind()
    stored: list[object] = []
    run: Any = SimpleNamespace(
        history=SimpleNamespace(
            judge=lambda record, point: None,
            put_missing=lambda record, judged: stored.append(record),
        )
    )
    assert cast(Any, runnable(kind, point, run, _request(None))) == (
        "fresh",
        point,
        "<infx_server>",
    )
    assert stored == []
    fresh_or_reused = cast(Any, runnable(kind, point, run, _request(reuse)))
    assert fresh_or_reused.reused == ("reused", point, reuse)
    assert stored == [reuse.record], "a reused point goes to the history if no run stored it"


def test_each_kind_stands_in_for_its_reused_point_with_its_own_runnable(tmp_path: Path) -> None:
    points = _both(tmp_path / "recipes", tmp_path / "starts.jsonl")
    request: Any = SimpleNamespace(node=None, getfixturevalue=lambda name: f"<{name}>")
    expected = {
        "speedbench": ReusedCell,
        "agentic": ReusedRecord,
        "fixed_seq_len": ReusedRecord,
    }
    attaches = {"agentic": AGENTIC.attach_record, "fixed_seq_len": FIXED_SEQ_LEN.attach_record}
    for point in points:
        reuse = Reuse(tmp_path / "stored.json", SAMPLES[point.kind](id=point.id))
        made = ADAPTERS[point.kind].reused(point, reuse, cast(Any, None), request)
        assert isinstance(made, expected[point.kind])
        if isinstance(made, ReusedRecord):
            assert made.attach == attaches[point.kind], point.kind


def test_each_kind_leaves_the_record_its_summary_reads(tmp_path: Path) -> None:
    points = _both(tmp_path / "recipes", tmp_path / "starts.jsonl")
    reads = {
        "speedbench": CELL_PROPERTY,
        "agentic": AGENTIC_PROPERTY,
        "fixed_seq_len": FIXED_PROPERTY,
    }
    for point in points:
        record = SAMPLES[point.kind]()
        node: Any = SimpleNamespace(user_properties=[])
        ADAPTERS[point.kind].attach(node, point, record)
        left = {name for name, _ in node.user_properties}
        assert records_from(node.user_properties) == [record], point.kind
        assert left.isdisjoint(set(reads.values()) - {reads[point.kind]}), point.kind


def test_a_reused_agentic_point_leaves_what_a_measured_one_leaves() -> None:
    throughput = {
        "method": "inferencex",
        "total_tokens_per_s": 40.0,
        "output_tokens_per_s": 12.5,
        "input_tokens_per_s": 27.5,
        "total_tokens_per_s_per_gpu": 40.0,
        "output_tokens_per_s_per_gpu": 12.5,
        "input_tokens_per_s_per_gpu": 27.5,
        "output_tokens_per_s_per_user": None,
        "duration_s": 10.0,
        "gpus": 1,
        "requests_per_s": 0.4,
    }
    record = samples.point(requests__completed=3, requests__failed=1, throughput=throughput)
    node: Any = SimpleNamespace(user_properties=[])
    reuse = Reuse(Path("stored.json"), record)
    attach = AGENTIC.attach_record
    ReusedRecord(reuse, SimpleNamespace(node=node), attach).run()  # type: ignore[arg-type]
    assert node.user_properties == [
        ("completed", 3),
        ("failed", 1),
        ("output_tokens_per_s_per_gpu", 12.5),
        ("total_tokens_per_s_per_gpu", 40.0),
        (AGENTIC_PROPERTY, record.as_json()),
    ]


def test_resume_judges_the_file_each_kind_names(
    sweep: Sweep, monkeypatch: pytest.MonkeyPatch
) -> None:
    points = _both(sweep.recipes, sweep.record)
    elsewhere = sweep.root / "elsewhere"
    monkeypatch.setattr(
        AgenticBenchmark, "result_path", lambda self, layout, item: elsewhere / f"{item}.json"
    )
    datasets = Datasets(sweep.root)
    layout = Layout(sweep.results)
    for point in points:
        path = KINDS[point.kind].result_path(layout, point.id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(_stored(point, datasets).as_json()))
    items = _items(sweep)
    resume.mark(items, Layout(sweep.results), datasets)
    reused = {item.name: item.stash.get(REUSE, None) for item in items}
    assert {p.id: KINDS[p.kind].result_path(layout, p.id) for p in points} == {
        name: found.path for name, found in reused.items() if found is not None
    }
    agentic = next(p for p in points if p.kind == "agentic")
    assert reused[agentic.id] == Reuse(elsewhere / f"{agentic.id}.json", _stored(agentic, datasets))


def test_a_reused_fixed_seq_len_point_leaves_what_a_measured_one_leaves() -> None:
    record = samples.fixed(requests__completed=39, requests__failed=1)
    node: Any = SimpleNamespace(user_properties=[])
    reuse = Reuse(Path("stored.json"), record)
    attach = FIXED_SEQ_LEN.attach_record
    ReusedRecord(reuse, SimpleNamespace(node=node), attach).run()  # type: ignore[arg-type]
    assert node.user_properties == [
        ("completed", 39),
        ("failed", 1),
        ("tput_per_gpu", 350.0),
        ("output_tput_per_gpu", 40.0),
        ("median_ttft", 0.4),
        ("median_tpot", 0.08),
        (FIXED_PROPERTY, record.as_json()),
    ]
    assert reuse.figure(KINDS) == "40.0 output tok/s/GPU"


class _Measuring:
    """The run a measured AgentX point reports to: it keeps what ``keep`` is given."""

    def __init__(self) -> None:
        self.kept: list[tuple[Record, list[str]]] = []
        self.gated = False
        self.progress = SimpleNamespace(doing=lambda *args, **kwargs: contextlib.nullcontext())

        self.settings = SimpleNamespace(history=SimpleNamespace(repeats=1))

    def say(self, line: str) -> None:
        """Nothing to print here."""

    def identity(self, point: object) -> ConfigIdentity:
        return ConfigIdentity.model_validate(samples.CONFIG)

    @contextlib.contextmanager
    def measuring(self, server: object, point: object) -> Iterator[None]:
        yield

    def keep(self, record: Record, point: object, *, problems: Sequence[str] = ()) -> Record:
        self.kept.append((record, list(problems)))
        return record

    def gate(self, node: object, record: Record, point: object) -> None:
        self.gated = True


def test_a_measured_agentic_point_with_a_nan_figure_fails_and_its_record_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pytest_infx.agentic.measure as measure
    from pytest_infx.agentic.results import parse_export

    data = Path(__file__).parents[2] / "agentic" / "data" / "profile_export_ok.json"
    export = json.loads(data.read_text(encoding="utf-8"))
    export["output_token_throughput"]["avg"] = math.nan
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(export), encoding="utf-8")
    measured = parse_export(path, gpus=1)
    agentic = SimpleNamespace(duration=10, failed_request_threshold=0.1, repeats=1)
    monkeypatch.setattr(measure, "run_aiperf", lambda run: measured)
    monkeypatch.setattr(measure, "agentic_of", lambda point: agentic)
    monkeypatch.setattr(
        measure,
        "aiperf_run",
        lambda point, server, context, shape: SimpleNamespace(artifact_dir=tmp_path),
    )
    monkeypatch.setattr(measure, "aggregate", lambda run, result, shape: (None, None))
    monkeypatch.setattr(measure, "identity", lambda point, server: samples.identity())
    ctx = _Measuring()
    node: Any = SimpleNamespace(user_properties=[])
    point = cast(Any, SimpleNamespace(id="a[tp1-c2]"))
    runnable = MeasuredPoint(
        AGENTIC, point, cast(Any, None), cast(Any, ctx), cast(Any, SimpleNamespace(node=node))
    )
    with pytest.raises(pytest.fail.Exception) as caught:
        runnable.run()
    reason = (
        f"aiperf measured output_token_throughput = nan in {path}, not a finite figure of at "
        "least 0; the point has no such measurement"
    )
    assert str(caught.value) == f"a[tp1-c2]: {reason}"
    [(record, problems)] = ctx.kept
    assert record.verdict == "fail" and record.reasons == [reason] and problems == [reason]
    assert not ctx.gated
    assert records_from(node.user_properties) == [record]
