from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_infx.files.textio import InputFileError
from pytest_infx.kinds import KINDS
from pytest_infx.results.files import write_result
from pytest_infx.results.layout import Layout
from pytest_infx.results.records import (
    RECORD_VERSION,
    CellRecord,
    PointRecord,
    RecordError,
    parse_record,
    read_record,
)
from results.samples import CELL, FIXED, POINT, TELEMETRY, cell, point, with_fields


@pytest.mark.parametrize("record", [cell(), point()], ids=["cell", "point"])
def test_a_record_reads_back_equal_from_its_file(tmp_path: Path, record: Any) -> None:
    path = write_result(Layout(tmp_path), record, KINDS)
    assert read_record(path) == record
    assert json.loads(path.read_text())["version"] == RECORD_VERSION


def test_the_kind_picks_the_model() -> None:
    assert isinstance(parse_record(CELL), CellRecord)
    assert isinstance(parse_record(POINT), PointRecord)
    assert isinstance(parse_record(with_fields(CELL, {"kind!": None})), CellRecord)


def test_a_file_without_a_version_is_version_one_without_a_config() -> None:
    old = parse_record(with_fields(CELL, {"version!": None, "config!": None}))
    assert (old.version, old.config) == (1, None)


def test_a_point_s_gpu_telemetry_reads_back_and_a_version_two_file_has_none() -> None:
    record = parse_record(with_fields(POINT, {"gpu_telemetry": TELEMETRY}))
    assert record.gpu_telemetry is not None
    assert record.gpu_telemetry.gpus == [0, 1] and record.gpu_telemetry.energy_j == 15890.2
    assert record.as_json()["gpu_telemetry"] == TELEMETRY
    older = parse_record(with_fields(POINT, {"version": 2}))
    assert older.gpu_telemetry is None
    with pytest.raises(RecordError, match=r"'gpu_telemetry\.samples'"):
        parse_record(with_fields(POINT, {"gpu_telemetry": {**TELEMETRY, "samples": -1}}))


def test_a_newer_record_is_refused_by_name() -> None:
    newer = f"version {RECORD_VERSION + 1} record, written by a newer pytest-infx"
    with pytest.raises(RecordError, match=newer):
        parse_record(with_fields(POINT, {"version": RECORD_VERSION + 1}))


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"point.draft_length": "2"}, "'point.draft_length'"),
        ({"point.draft_length": True}, "'point.draft_length'"),
        ({"al": "2.1"}, "'al'"),
        ({"al": float("nan")}, "'al': Input should be a finite number"),
        ({"al_standard_error": float("inf")}, "'al_standard_error': Input should be a finite"),
        ({"requests.completed": -1}, "'requests.completed'"),
        ({"verdict": "ok"}, "'verdict'.*'ok' is not a verdict"),
        ({"surprise": 1}, "'surprise'.*not permitted"),
        ({"dataset!": None}, "'dataset'.*required"),
    ],
)
def test_a_wrong_field_is_named(fields: dict[str, Any], where: str) -> None:
    with pytest.raises(RecordError, match=where):
        parse_record(with_fields(CELL, fields))


def test_throughput_has_one_shape_per_method() -> None:
    inferencex = {"method": "inferencex", "output_tokens_per_s": 1.0}
    with pytest.raises(RecordError, match=r"'throughput\.inferencex\.total_tokens_per_s'"):
        parse_record(with_fields(POINT, {"throughput": inferencex}))


def test_older_verdict_words_still_pass_and_a_cell_without_al_never_does() -> None:
    assert point(verdict="passed").passed
    assert not point(verdict="failed").passed
    assert not point(verdict=None).passed
    assert cell().passed
    assert not cell(al=None).passed


def test_each_kind_names_the_digest_of_its_data() -> None:
    assert cell(dataset__sha256="12").data_sha256 == "12"
    assert point(traces_sha256=None).data_sha256 is None


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("[]", "holds a JSON list, not a result record"),
        ("{not json", "does not parse"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ],
)
def test_a_file_that_is_not_a_record_says_so_with_its_path(
    tmp_path: Path, content: str, problem: str
) -> None:
    path = tmp_path / "r.json"
    path.write_text(content)
    with pytest.raises(RecordError, match=problem) as caught:
        read_record(path)
    assert str(caught.value).startswith(f"{path}: ")


def test_a_pipe_is_refused_without_blocking(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    os.mkfifo(path)
    with pytest.raises(InputFileError, match="is a pipe"):
        read_record(path)
    with pytest.raises(FileNotFoundError):
        read_record(tmp_path / "absent.json")


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"figures.tput_per_gpu": math.nan}, "'figures.tput_per_gpu': Input should be a finite"),
        ({"figures.median_ttft": math.inf}, "'figures.median_ttft': Input should be a finite"),
        ({"figures.tput_per_gpu": -1000.0}, "'figures.tput_per_gpu': Input should be greater"),
        ({"duration_s": -30.0}, "'duration_s': Input should be greater than or equal to 0"),
    ],
)
def test_a_fixed_seq_len_file_with_a_broken_figure_is_refused_naming_the_file(
    tmp_path: Path, fields: dict[str, Any], where: str
) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps(with_fields(FIXED, fields)))
    with pytest.raises(RecordError) as caught:
        read_record(path)
    assert str(caught.value).startswith(f"{path}: {where}")


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"requests.error_ratio": math.nan}, "'requests.error_ratio': Input should be a finite"),
        ({"latency_ms.tpot": {"p50": 5.0, "p90": math.inf, "p99": 9.0}}, "'latency_ms.tpot.p90'"),
        ({"interactivity_tokens_per_s_per_user": -3.0}, "'interactivity_tokens_per_s_per_user'"),
        ({"aiperf.duration_s": math.nan}, "'aiperf.duration_s': Input should be a finite"),
        ({"throughput.requests_per_s": -0.5}, "'throughput.aiperf.requests_per_s': Input"),
    ],
)
def test_an_agentic_file_with_a_broken_figure_is_refused_naming_the_file(
    tmp_path: Path, fields: dict[str, Any], where: str
) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(with_fields(POINT, fields)))
    with pytest.raises(RecordError) as caught:
        read_record(path)
    assert str(caught.value).startswith(f"{path}: {where}")


def test_a_cell_whose_wall_time_gives_an_infinite_rate_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(with_fields(CELL, {"requests.wall_s": 1e-320})))
    with pytest.raises(RecordError, match=r"'requests\.wall_s' is 1e-320, not a time") as caught:
        read_record(path)
    assert str(caught.value).startswith(f"{path}: ")


def test_a_repeated_key_in_a_result_file_is_refused_at_that_key(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(CELL)[:-1] + ', "al": 9.99}')
    with pytest.raises(RecordError) as caught:
        read_record(path)
    assert str(caught.value) == (
        f"{path}: does not parse (key 'al' appears twice in one object; keep the one that is meant)"
    )
