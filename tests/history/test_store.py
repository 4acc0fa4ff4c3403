from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect

from history.samples import CONFIG, row, stamp
from pytest_infx.history.schema import METADATA
from pytest_infx.history.store import Store, StoreError, head_revision, migrate
from pytest_infx.results.verdict import Verdict


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    opened = Store.open(db_url)
    yield opened
    opened.close()


def test_a_run_is_added_once_by_its_id_and_attempt(store: Store) -> None:
    first = store.add_run(stamp("r1"))
    assert store.add_run(stamp("r1")) == first
    assert store.add_run(stamp("r1", attempt=2)) != first


def test_a_stored_run_is_known_by_its_id(store: Store) -> None:
    store.add_run(stamp("12345"))
    assert store.has_run("12345")
    assert not store.has_run("main")


def test_a_point_is_added_then_unchanged_then_updated(store: Store) -> None:
    run = store.add_run(stamp("r1"))
    assert store.put(run, row()) == "added"
    assert store.put(run, row()) == "unchanged"
    assert store.put(run, row(120.0)) == "updated"
    assert store.count() == 1
    assert store.series(row().item)[0].metrics["tput_per_gpu"] == 120.0


def test_a_failed_retry_never_replaces_a_passed_point(store: Store) -> None:
    run = store.add_run(stamp("r1"))
    store.put(run, row())
    assert store.put(run, row(0.0, status=Verdict.FAIL)) == "kept"
    assert store.series(row().item)[0].status == "pass"


def test_the_natural_key_separates_cells_configs_and_concurrencies(store: Store) -> None:
    run = store.add_run(stamp("r1"))
    store.put(run, row())
    store.put(run, row(conc=8))
    store.put(run, row(cell="k2-thinking_on"))
    store.put(run, row(config=CONFIG.model_copy(update={"tp": 2})))
    store.put(run, row(isl=1024, osl=1024, kind="fixed-seq-len"))
    assert store.count() == 5


def test_a_stored_row_reads_back_with_its_sequence_lengths(store: Store) -> None:
    run = store.add_run(stamp("r1"))
    store.put(run, row(isl=8192, osl=1024, kind="fixed-seq-len"))
    store.put(run, row())
    assert sorted((s.isl, s.osl) for s in store.passing()) == [(0, 0), (8192, 1024)]


def test_the_baseline_is_the_latest_passing_row_of_the_branch(store: Store) -> None:
    for run_id, day, tput, branch, status in (
        ("old", 0, 90.0, "main", "pass"),
        ("latest", 2, 100.0, "main", "pass"),
        ("broken", 3, 1.0, "main", Verdict.FAIL),
        ("feature", 4, 50.0, "feature", "pass"),
    ):
        run = store.add_run(stamp(run_id, day=day, branch=branch))
        store.put(run, row(tput, status=status))
    found = store.history(row(), branch="main")
    assert [s.run_id for s in found] == ["old", "latest"]
    assert found[-1].metrics["tput_per_gpu"] == 100.0
    by_run = store.history(row(), run_id="old")
    assert [s.metrics["tput_per_gpu"] for s in by_run] == [90.0]
    assert store.history(row(conc=64), branch="main") == []


def test_the_current_run_is_never_its_own_baseline(store: Store) -> None:
    run = store.add_run(stamp("now"))
    store.put(run, row())
    assert store.history(row(), branch="main", exclude_run=run) == []


def test_the_migrated_database_has_exactly_the_declared_tables(db_url: str) -> None:
    Store.open(db_url).close()
    engine = create_engine(db_url)
    try:
        found = inspect(engine)
        for table in METADATA.sorted_tables:
            assert {c["name"] for c in found.get_columns(table.name)} == set(table.columns.keys())
            uniques = {u["name"] for u in found.get_unique_constraints(table.name)}
            declared = {str(c.name) for c in table.constraints if str(c.name).startswith("uq_")}
            assert declared <= uniques
            assert {i.name for i in table.indexes} <= {
                i["name"] for i in found.get_indexes(table.name)
            }
    finally:
        engine.dispose()


def test_an_older_database_is_upgraded_and_keeps_its_rows(db_url: str) -> None:
    old = Store.open(db_url, migrate_to="0001")
    run = old.add_run(stamp("r1"))
    with old.engine.begin() as connection:
        connection.exec_driver_sql(
            "INSERT INTO configs (model_prefix, hardware, framework, engine_version, precision, "
            "spec_method, topology, tp, ep, dp_attention, gpus) "
            "VALUES ('m', 'cpu', 'vllm', '1', 'bf16', 'none', 'tp1', 1, 1, false, 1)"
        )
        connection.exec_driver_sql(
            "INSERT INTO points (run, config, kind, isl, osl, conc, offload_mode, cell, item, "
            "recipe, dataset, status, metrics, written) VALUES "
            f"({run}, 1, 'agentic', 0, 0, 4, 'none', '', 'i', 'r', 'd', 'pass', "
            "'{\"tput_per_gpu\": 1.0}', '2026-11-01 12:00:00')"
        )
    old.close()
    store = Store.open(db_url)
    try:
        assert store.count() == 1
        assert [found.reason for found in store.series("i")] == [""]
        with store.engine.connect() as connection:
            indexes = {i["name"] for i in inspect(connection).get_indexes("points")}
        assert "ix_points_lookup" in indexes
    finally:
        store.close()


def test_a_newer_database_is_refused_by_name(db_url: str) -> None:
    Store.open(db_url).close()
    engine = create_engine(db_url)
    with engine.begin() as connection:
        connection.exec_driver_sql("UPDATE alembic_version SET version_num = '0099_future'")
    engine.dispose()
    with pytest.raises(StoreError, match=r"0099_future.*newer pytest-infx"):
        Store.open(db_url)


def test_migrating_twice_changes_nothing(db_url: str) -> None:
    Store.open(db_url).close()
    engine = create_engine(db_url)
    try:
        with engine.begin() as connection:
            migrate(connection)
            found = connection.exec_driver_sql("SELECT version_num FROM alembic_version").all()
        assert [tuple(row) for row in found] == [(head_revision(),)]
    finally:
        engine.dispose()


def test_sqlite_runs_in_wal_mode(tmp_path: Path) -> None:
    Store.open(f"sqlite:///{tmp_path / 'h.db'}").close()
    with sqlite3.connect(tmp_path / "h.db") as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_the_sqlite_folder_is_made(tmp_path: Path) -> None:
    Store.open(f"sqlite:///{tmp_path / 'a' / 'b' / 'h.db'}").close()
    assert (tmp_path / "a" / "b" / "h.db").is_file()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("nonsense", "give a URL such as"),
        ("mysqlx://u@h/d", "give a URL such as"),
        ("sqlite:////proc/no/such/folder/h.db", "cannot make its folder"),
    ],
)
def test_a_bad_url_is_a_store_error_saying_what_to_give(url: str, message: str) -> None:
    with pytest.raises(StoreError, match=message):
        Store.open(url)


@pytest.mark.engine
def test_an_unreachable_server_is_a_store_error() -> None:
    from pytest_infx.launch.ports import free_port

    port = free_port("127.0.0.1")
    with pytest.raises(StoreError, match=r"cannot open it.*check the URL and that the server"):
        Store.open(f"postgresql+psycopg://postgres@127.0.0.1:{port}/none")


def test_a_baseline_names_a_stored_run_or_branch_and_a_typo_names_the_close_ones(
    store: Store,
) -> None:
    store.put(store.add_run(stamp("1234", branch="main")), row())
    store.add_run(stamp("empty", branch="release"))
    assert store.baseline_kind("main") == "branch"
    assert store.baseline_kind("1234") == "run"
    with pytest.raises(StoreError, match=r"'mian': no branch or run .* did you mean 'main'\?"):
        store.baseline_kind("mian")
    with pytest.raises(StoreError, match=r"'release': .*stored branches: main"):
        store.baseline_kind("release")


def test_a_failed_row_keeps_its_reason(store: Store) -> None:
    store.put(store.add_run(stamp("r1")), row(status=Verdict.FAIL, reason="beyond tolerance"))
    (found,) = store.series(row().item)
    assert (found.status, found.reason) == ("fail", "beyond tolerance")


def test_promote_copies_a_validated_run_to_the_branch_with_its_provenance(store: Store) -> None:
    run = store.add_run(stamp("pr-7", branch="feature"))
    store.put(run, row())
    store.put(run, row(conc=8))
    promoted, count = store.promote("pr-7", "main", by="alice")
    assert count == 2 and promoted.branch == "main"
    assert store.provenance(promoted.run_id) == ("pr-7", "alice")
    assert store.provenance("pr-7") is None
    found = store.history(row(), branch="main")
    assert [s.run_id for s in found] == [promoted.run_id]
    with pytest.raises(StoreError, match="already promoted"):
        store.promote("pr-7", "main", by="alice")


def test_promote_refuses_a_run_with_a_failed_point_or_an_unknown_run(store: Store) -> None:
    run = store.add_run(stamp("pr-8", branch="feature"))
    store.put(run, row())
    store.put(run, row(conc=8, status=Verdict.FAIL, reason="slower"))
    with pytest.raises(StoreError, match=r"'pr-8' is not validated: 1 point\(s\) failed.*slower"):
        store.promote("pr-8", "main", by="alice")
    with pytest.raises(StoreError, match=r"no stored run 'pr-9'; did you mean pr-8\?"):
        store.promote("pr-9", "main", by="alice")
    assert store.history(row(), branch="main") == []


def test_every_row_is_read_with_its_verdict_for_a_view_to_show(store: Store) -> None:
    run = store.add_run(stamp("r1"))
    store.put(run, row())
    store.put(run, row(conc=8, status=Verdict.FAIL, reason="beyond its tolerance"))
    assert [(found.conc, found.status, found.reason) for found in store.points()] == [
        (4, "pass", ""),
        (8, "fail", "beyond its tolerance"),
    ]
    assert len(store.passing()) == 1
