from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from results.samples import CELL, FIXED, POINT, with_fields

from history.inferencex_files import agg, results_bmk
from history.samples import CONFIG, stamp
from pytest_infx.history.ingest import default_stamp, files, ingest
from pytest_infx.history.rows import row_of
from pytest_infx.history.store import Store
from pytest_infx.kinds import KINDS
from pytest_infx.results.records import parse_record


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    opened = Store.open(db_url)
    yield opened
    opened.close()


def test_a_results_bmk_file_is_stored_once_and_again_adds_nothing(
    store: Store, tmp_path: Path
) -> None:
    rows = [agg(conc, 1000.0 + conc) for conc in (4, 8, 16, 32, 64)]
    rows.append(agg(64, 500.0, isl=8192, osl=1024))
    path = results_bmk(tmp_path, rows)
    run = default_stamp([path], [path], branch="main", commit="abc")
    first = ingest(store, [path], run, KINDS)
    assert first.outcomes["added"] == 6 and not first.skipped
    again = ingest(store, [path], default_stamp([path], [path], branch="main", commit="abc"), KINDS)
    assert again.outcomes["added"] == 0 and again.outcomes["unchanged"] == 6
    assert again.lines()[0] == "0 added, 6 unchanged, 0 updated, 0 kept, 0 skipped"
    assert store.count() == 6
    stored = store.passing()
    assert {s.config["hardware"] for s in stored} == {"b200"}
    assert {s.config["engine_version"] for s in stored} == {"v0.5.21-cu130"}
    assert {s.kind for s in stored} == {"fixed-seq-len"}


def test_a_row_without_successful_requests_is_skipped_never_stored_as_zero(
    store: Store, tmp_path: Path
) -> None:
    path = results_bmk(
        tmp_path, [agg(4, 0.0, num_requests_successful=0), agg(8, 900.0), {"hw": "b200"}, 3]
    )
    tally = ingest(store, [path], stamp("r"), KINDS)
    assert tally.outcomes["added"] == 1
    assert len(tally.skipped) == 3
    assert "[0]: no successful request, so no measurement" in tally.skipped[0]
    assert "[2]: not a result we know (no framework, precision, tp, conc)" in tally.skipped[1]
    assert "[3]: not an object" in tally.skipped[2]


DIGEST = "lmsysorg/sglang:v0.5.21-cu130@sha256:" + "ab" * 32


def test_nightly_files_of_one_point_from_any_runner_are_one_config_and_one_item(
    store: Store, tmp_path: Path
) -> None:
    """InferenceX's file names end with the runner instance and the recipe fingerprint, and
    its configs pin images by digest: neither may split one point's trend."""
    for night, (runner, image) in enumerate(
        [("b200-nv_3", DIGEST), ("b200-nv_7", "lmsysorg/sglang:v0.5.21-cu130")]
    ):
        path = tmp_path / f"agg_dsr1_fp4_sglang_tp8_conc4_{runner}_f{night}e3a.json"
        path.write_text(json.dumps(agg(4, 1200.0 + night, hw=runner, image=image)))
        ingest(store, [path], stamp(f"night{night}", day=night), KINDS)
    assert store.items() == [
        "dsr1_fp4_sglang_tp8-ep1-dpafalse_spec-none_isl1024-osl1024_conc4_b200"
    ]
    rows = store.passing()
    assert [found.config["engine_version"] for found in rows] == ["v0.5.21-cu130"] * 2
    assert len({tuple(sorted(found.config.items())) for found in rows}) == 1


def test_the_same_files_ingested_three_ways_are_one_run(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    for conc in (4, 8, 16):
        (folder / f"agg_c{conc}_h200-nv_{conc}.json").write_text(json.dumps(agg(conc, 900.0)))
    copy = tmp_path / "copy"
    copy.mkdir()
    for path in folder.iterdir():
        (copy / f"copied-{path.name}").write_bytes(path.read_bytes())
    named = sorted(folder.iterdir())
    ways = [[folder], list(reversed(named)), [copy]]
    stamps = set()
    for paths in ways:
        found = list(files(paths))
        stamped = default_stamp(paths, found, branch="main", commit="")
        stamps.add(stamped.run_id)
        ingest(store, found, stamped, KINDS)
    assert len(stamps) == 1
    assert store.count() == 3


def test_a_multinode_file_is_a_multinode_point_keyed_on_its_prefill_and_decode_sizes(
    store: Store, tmp_path: Path
) -> None:
    def multinode(decode_workers: int) -> dict[str, object]:
        row = agg(64, 3000.0, is_multinode=True, disagg=True, prefill_num_workers=1,
                  prefill_tp=8, prefill_ep=8, prefill_dp_attention="false",
                  decode_num_workers=decode_workers, decode_tp=8, decode_ep=8,
                  decode_dp_attention="true", num_prefill_gpu=8,
                  num_decode_gpu=8 * decode_workers)  # fmt: skip
        del row["tp"], row["ep"]
        return row

    for workers in (1, 2):
        path = tmp_path / f"agg_mn{workers}.json"
        path.write_text(json.dumps(multinode(workers)))
        tally = ingest(store, [path], stamp(f"mn{workers}"), KINDS)
        assert tally.outcomes["added"] == 1 and not tally.skipped
    rows = store.passing()
    assert [found.config["topology"] for found in rows] == [
        "p1-tp8-ep8-dpafalse_d1-tp8-ep8-dpatrue",
        "p1-tp8-ep8-dpafalse_d2-tp8-ep8-dpatrue",
    ]
    assert [found.config["gpus"] for found in rows] == [16, 24]
    assert rows[0].item.startswith("dsr1_fp4_sglang_p1-tp8-ep8-dpafalse_d1-tp8-ep8-dpatrue_")


@pytest.mark.parametrize(
    ("field", "value"), [("decode_num_workers", "two"), ("prefill_tp", 0), ("num_decode_gpu", 8.5)]
)
def test_a_multinode_row_with_a_bad_size_is_refused_rather_than_read_as_one(
    store: Store, tmp_path: Path, field: str, value: object
) -> None:
    row = agg(64, 3000.0, is_multinode=True, prefill_num_workers=1, prefill_tp=8, prefill_ep=8,
              decode_num_workers=2, decode_tp=8, decode_ep=8, num_prefill_gpu=8,
              num_decode_gpu=16)  # fmt: skip
    del row["tp"], row["ep"]
    path = tmp_path / "agg_mn.json"
    path.write_text(json.dumps({**row, field: value}))
    tally = ingest(store, [path], stamp("mn"), KINDS)
    assert store.count() == 0
    assert len(tally.refused) == 1 and tally.refused[0].startswith(
        f"{path}: '{field}' is {value!r}"
    )


@pytest.mark.parametrize(
    ("field", "value", "need"),
    [
        ("tput_per_gpu", math.nan, "a finite number of at least 0"),
        ("tput_per_gpu", math.inf, "a finite number of at least 0"),
        ("tput_per_gpu", -1000.0, "a finite number of at least 0"),
        ("median_ttft", -5, "a finite number of at least 0"),
        ("isl", -1024, "a whole number from 1"),
        ("conc", -4, "a whole number from 1"),
        ("conc", 4.5, "a whole number from 1"),
        ("conc", True, "a whole number from 1"),
        ("tp", 0, "a whole number from 1"),
        ("tp", "eight", "a whole number from 1"),
        ("hw", None, "a name (a non-empty string)"),
    ],
)
def test_a_row_with_a_bad_figure_or_key_is_refused_and_the_others_are_stored(
    store: Store, tmp_path: Path, field: str, value: object, need: str
) -> None:
    path = results_bmk(tmp_path, [agg(4, 1000.0), {**agg(8, 900.0), field: value}])
    tally = ingest(store, [path], stamp("r"), KINDS)
    assert tally.outcomes["added"] == 1 and store.count() == 1
    assert tally.refused == [
        f"{path}[1]: '{field}' is {value!r}, not {need}; fix or remove this entry"
    ]
    assert tally.lines()[0].endswith("0 skipped, 1 refused")
    assert {s.conc for s in store.passing()} == {4}


def test_the_figures_of_an_agentx_aggregate_are_checked_where_they_are_read(
    store: Store, tmp_path: Path
) -> None:
    path = tmp_path / "agg_agentic.json"
    block = {"latency": {"ttft": {"p50": math.inf}}}
    path.write_text(
        json.dumps({**agg(4, 1.0, scenario_type="agentic-coding"), "request_metrics": block})
    )
    tally = ingest(store, [path], stamp("r"), KINDS)
    assert store.count() == 0
    assert tally.refused == [
        f"{path}: 'request_metrics.latency.ttft.p50' is inf, not a finite number of at least 0;"
        " fix or remove this entry"
    ]


def test_infinity_written_as_1e999_is_refused_like_infinity(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "agg_a.json"
    path.write_text(json.dumps(agg(4, 1000.0)).replace("1000.0", "1e999"))
    tally = ingest(store, [path], stamp("r"), KINDS)
    assert store.count() == 0 and len(tally.refused) == 1
    assert "'tput_per_gpu' is inf" in tally.refused[0]


def test_a_repeated_key_refuses_its_file_naming_the_key(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "agg_a.json"
    path.write_text(json.dumps(agg(4, 1000.0))[:-1] + ', "tput_per_gpu": 5.0}')
    other = tmp_path / "agg_b.json"
    other.write_text(json.dumps(agg(8, 900.0)))
    tally = ingest(store, [path, other], stamp("r"), KINDS)
    assert tally.refused == [
        f"{path}: key 'tput_per_gpu' appears twice in one object; keep the one that is meant"
    ]
    assert tally.outcomes["added"] == 1 and store.count() == 1


def test_our_results_folder_is_read_and_an_old_record_is_skipped(
    store: Store, tmp_path: Path
) -> None:
    config = CONFIG.model_dump()
    (tmp_path / "cells").mkdir()
    (tmp_path / "agentic").mkdir()
    (tmp_path / "cells" / "a.json").write_text(json.dumps({**CELL, "config": config}))
    (tmp_path / "agentic" / "b.json").write_text(json.dumps({**POINT, "config": config}))
    old = with_fields(CELL, {"id": "old", "config!": None})
    (tmp_path / "cells" / "old.json").write_text(json.dumps(old))
    (tmp_path / "cells" / "broken.json").write_text("{")
    tally = ingest(store, files([tmp_path]), stamp("r"), KINDS)
    assert tally.outcomes["added"] == 2
    reasons = "\n".join(tally.skipped)
    assert "old: the record has no config identity" in reasons
    assert "broken.json: not a JSON file we can read" in reasons
    assert sorted(store.items()) == ["a[tp1-c2]", "r[k2-thinking_off]"]


def test_a_fixed_seq_len_record_and_inferencex_s_processed_file_share_one_key(
    store: Store, tmp_path: Path
) -> None:
    """Ours and InferenceX's rows of the same config and point land on one natural key, so
    one is the other's baseline."""
    config = CONFIG.model_dump()
    (tmp_path / "fixed-seq-len" / "inferencex").mkdir(parents=True)
    ours = {**FIXED, "config": config}
    (tmp_path / "fixed-seq-len" / "x.json").write_text(json.dumps(ours))
    (tmp_path / "fixed-seq-len" / "inferencex" / "agg_x.json").write_text("{}")
    tally = ingest(store, files([tmp_path]), stamp("ours"), KINDS)
    assert tally.outcomes["added"] == 1 and not tally.skipped
    [stored] = store.passing()
    assert stored.kind == "fixed-seq-len" and stored.conc == 4
    assert stored.metrics["median_intvty"] == 12.5
    theirs = tmp_path / "theirs.json"
    processed = agg(4, 900.0, isl=256, osl=32)
    processed.update({"hw": config["hardware"], "framework": config["framework"],
                      "precision": config["precision"], "spec_decoding": config["spec_method"],
                      "infmax_model_prefix": config["model_prefix"],
                      "image": f"x:{config['engine_version']}", "tp": 1, "ep": 1})  # fmt: skip
    theirs.write_text(json.dumps(processed))
    assert ingest(store, [theirs], stamp("theirs"), KINDS).outcomes["added"] == 1
    found = store.history(row_of(parse_record(ours), KINDS))
    assert [s.item for s in found] == [
        FIXED["id"],
        "smollm2_bf16_vllm_tp1-ep1-dpafalse_spec-none_isl256-osl32_conc4_cpu",
    ]


def test_an_agentx_aggregate_is_an_agentic_row(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "dsr1_agentic.json"
    path.write_text(
        json.dumps(
            {
                **agg(16, 0.0),
                "scenario_type": "agentic-coding",
                "num_requests_successful": 40,
                "request_metrics": {"throughput": {"per_gpu": {"total_tput_tps": 700.0}}},
            }
        )
    )
    ingest(store, [path], stamp("r"), KINDS)
    [stored] = store.passing()
    assert stored.kind == "agentic" and stored.metrics["tput_per_gpu"] == 700.0


def test_in_our_results_folder_only_the_records_are_read(tmp_path: Path) -> None:
    for name in (
        "cells/a[k1-thinking_on].json",
        "agentic/b[tp1-c2].json",
        "agentic/inferencex/b_tp1_conc2.json",
        "agentic/b[tp1-c2]/profile_export_aiperf.json",
        "logs/x.json",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    assert [p.relative_to(tmp_path).as_posix() for p in files([tmp_path])] == [
        "cells/a[k1-thinking_on].json",
        "agentic/b[tp1-c2].json",
    ]


def test_files_are_found_in_a_stable_order(tmp_path: Path) -> None:
    for name in ("b/2.json", "a/1.json", "c.txt", "a/.hidden.json"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("{}")
    assert [p.relative_to(tmp_path).as_posix() for p in files([tmp_path])] == [
        "a/1.json",
        "b/2.json",
    ]


def test_our_fixed_seq_len_record_with_a_nan_figure_is_never_stored(
    store: Store, tmp_path: Path
) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps(with_fields(FIXED, {"figures.tput_per_gpu": math.nan})))
    tally = ingest(store, [path], stamp("r"), KINDS)
    assert store.count() == 0
    assert tally.skipped == []
    assert tally.refused == [
        f"{path}: 'figures.tput_per_gpu': Input should be a finite number; fix or remove this file"
    ]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"throughput.output_tokens_per_s_per_gpu": math.nan}, "output_tokens_per_s_per_gpu"),
        ({"latency_ms.ttft.p50": math.inf}, "latency_ms.ttft.p50"),
        ({"aiperf.duration_s": -20.0}, "aiperf.duration_s"),
    ],
)
def test_our_broken_agentic_record_is_refused_naming_file_and_field(
    store: Store, tmp_path: Path, fields: dict[str, float], field: str
) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(with_fields(POINT, fields)))
    good = tmp_path / "q.json"
    good.write_text(json.dumps(with_fields(POINT, {"id": "q"})))
    tally = ingest(store, [path, good], stamp("r"), KINDS)
    assert tally.skipped == []
    [refused] = tally.refused
    assert refused.startswith(f"{path}: '") and field in refused
    assert refused.endswith("; fix or remove this file")
    assert tally.outcomes["added"] == 1 and store.count() == 1


def test_our_record_of_a_newer_version_is_skipped_while_a_broken_one_is_refused(
    store: Store, tmp_path: Path
) -> None:
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(with_fields(POINT, {"version": 99})))
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(with_fields(POINT, {"requests.error_ratio": -0.5})))
    tally = ingest(store, [newer, broken], stamp("r"), KINDS)
    [skipped] = tally.skipped
    assert skipped.startswith(f"{newer}: is a version 99 record, written by a newer pytest-infx")
    [refused] = tally.refused
    assert refused.startswith(f"{broken}: 'requests.error_ratio': Input should be greater")
    assert store.count() == 0


def test_a_record_of_a_kind_another_package_provides_is_skipped_by_name(
    store: Store, tmp_path: Path
) -> None:
    """``infx db ingest`` knows the built-in kinds only; a provided kind's record is stored by
    the pytest run that measured it, and an ingest says why it leaves the file alone."""
    common = {name: FIXED[name] for name in ("version", "recipe", "fingerprint", "server")}
    record = {
        **common,
        "kind": "evals",
        "id": "e[c1]",
        "verdict": "pass",
        "reasons": [],
        "config": CONFIG.model_dump(),
        "model": "m",
        "gpu": "cpu",
        "point": {"tp": 1, "concurrency": 1},
        "figures": {"output_tput_per_gpu": 3.5},
    }
    assert parse_record(record).kind == "evals"
    (tmp_path / "e.json").write_text(json.dumps(record))
    tally = ingest(store, files([tmp_path]), stamp("r"), KINDS)
    assert tally.outcomes["added"] == 0 and not tally.refused
    assert tally.skipped == [
        f"{tmp_path / 'e.json'}: a record of the kind 'evals', which another package provides"
        " to pytest runs; its points are stored as they run"
    ]
