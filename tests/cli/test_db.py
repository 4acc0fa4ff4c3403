"""``infx db`` and ``infx trend`` as a user types them."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from history.inferencex_files import agg, results_bmk
from history.samples import row, stamp
from results.samples import POINT, with_fields

from pytest_infx.cli import main
from pytest_infx.history.store import Store
from pytest_infx.launch.ports import free_port
from pytest_infx.results.verdict import Verdict
from pytest_infx.usage import EXIT_STATUS

INFX = str(Path(sys.executable).parent / "infx")


@pytest.fixture
def db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'h.db'}"
    store = Store.open(url)
    for day, value in enumerate((100.0, 97.0, 94.0, 91.0)):
        store.put(store.add_run(stamp(f"r{day}", day=day)), row(value))
    store.close()
    return url


def test_ingest_prints_what_it_added_and_again_adds_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = results_bmk(tmp_path, [agg(4, 1000.0), agg(8, 0.0, num_requests_successful=0)])
    url = f"sqlite:///{tmp_path / 'new.db'}"
    assert main(["db", "ingest", str(path), "--db", url, "--branch", "main"]) == 1
    out = capsys.readouterr().out
    assert re.search(r"run ingest-[0-9a-f]{12} \(attempt 1, branch main\):", out)
    assert "1 added, 0 unchanged, 0 updated, 0 kept, 1 skipped" in out
    assert "no successful request" in out
    assert main(["db", "ingest", str(path), "--db", url]) == 1
    assert "0 added, 1 unchanged" in capsys.readouterr().out
    whole = results_bmk(tmp_path, [agg(4, 1000.0)])
    assert main(["db", "ingest", str(whole), "--db", url]) == 0, "nothing skipped: exit 0"


def test_ingest_ends_non_zero_when_a_row_was_refused_and_stores_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = results_bmk(tmp_path, [agg(4, 1000.0), agg(8, math.nan)])
    url = f"sqlite:///{tmp_path / 'new.db'}"
    assert main(["db", "ingest", str(path), "--db", url]) == 1
    out = capsys.readouterr().out
    assert "1 added, 0 unchanged, 0 updated, 0 kept, 0 skipped, 1 refused" in out
    assert f"  refused {path}[1]: 'tput_per_gpu' is nan, not a finite number of at least 0" in out


def test_ingest_refuses_our_broken_record_naming_file_and_field_and_ends_non_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(with_fields(POINT, {"requests.error_ratio": math.nan})))
    url = f"sqlite:///{tmp_path / 'new.db'}"
    assert main(["db", "ingest", str(path), "--db", url]) == 1
    out = capsys.readouterr().out
    assert "0 added, 0 unchanged, 0 updated, 0 kept, 0 skipped, 1 refused" in out
    assert f"  refused {path}: 'requests.error_ratio': Input should be a finite number" in out


def test_items_lists_the_trend_keys(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "items", "--db", db]) == 0
    assert capsys.readouterr().out == f"{row().item}\n"


def test_trend_prints_the_table_flags_the_drift_and_writes_the_png(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    assert main(["trend", row().item, "--db", db, "--since", "3650d"]) == 0
    out = capsys.readouterr().out
    assert "smollm2-cpu[tp1-c4]: tput_per_gpu (tok/s/gpu), 4 runs" in out
    assert "! slow drift of tput_per_gpu: 3 consecutive runs each within 5%, -9.0% in all" in out
    assert "wrote smollm2-cpu_tp1-c4.png" in out
    assert (tmp_path / "smollm2-cpu_tp1-c4.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["trend", "nope"], "no stored point 'nope'; infx db items lists the stored points"),
        (["trend", "smollm2-cpu[tp1-c4]", "--metric", "speed"], "'speed' is not a metric"),
        (["trend", "smollm2-cpu[tp1-c4]", "--since", "soon"], "give a span such as 30d"),
    ],
)
def test_trend_errors_say_what_to_do(
    db: str, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*argv, "--db", db]) == EXIT_STATUS
    assert message in capsys.readouterr().err


def test_reading_a_history_that_is_not_there_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["db", "items", "--db", f"sqlite:///{tmp_path / 'none.db'}"]) == EXIT_STATUS
    assert "no history database at" in capsys.readouterr().err
    assert not (tmp_path / "none.db").exists()
    assert main(["db", "items", "--db", "::"]) == EXIT_STATUS
    assert "is not a database URL" in capsys.readouterr().err


def test_dashboard_writes_the_page(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "page.html"
    assert main(["db", "dashboard", "--db", db, "--out", str(out)]) == 0
    data = _embedded(out.read_text())
    assert [run["label"] for run in data["runs"]] == ["r0", "r1", "r2", "r3"]
    assert len(data["points"]) == 4
    assert main(["db", "dashboard", "--db", db, "--out", str(out), "--runs", "2"]) == 0
    assert [run["label"] for run in _embedded(out.read_text())["runs"]] == ["r2", "r3"]


def test_dashboard_shows_failed_points_too(db: str, tmp_path: Path) -> None:
    store = Store.open(db)
    store.put(store.add_run(stamp("r9", day=9)), row(1.0, status=Verdict.FAIL))
    store.close()
    out = tmp_path / "page.html"
    assert main(["db", "dashboard", "--db", db, "--out", str(out)]) == 0
    data = _embedded(out.read_text())
    verdicts = [point[data["columns"].index("verdict")] for point in data["points"]]
    assert verdicts == ["pass"] * 4 + ["fail"]


def test_dashboard_refuses_a_negative_number_of_runs(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["db", "dashboard", "--db", db, "--out", str(tmp_path / "p.html"), "--runs", "-1"])
    assert exited.value.code != 0
    assert "'-1' is not a number of runs: give 0 or more" in capsys.readouterr().err


def _embedded(text: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="infx-data">(.*?)</script>', text)
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_dashboard_writes_into_the_results_folder_by_default(
    db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["db", "dashboard", "--db", db]) == 0
    assert (tmp_path / "infx-results" / "history.html").is_file()
    assert not (tmp_path / "history.html").exists()
    assert "infx-results/history.html" in capsys.readouterr().out


def test_serve_answers_with_the_page_drawn_anew(db: str, tmp_path: Path) -> None:
    port = free_port("127.0.0.1")
    server = subprocess.Popen(
        [INFX, "db", "serve", "--db", db, "--port", str(port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        assert f"http://127.0.0.1:{port}/" in server.stdout.readline()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as answer:
            first = answer.read().decode()
        assert len(_embedded(first)["points"]) == 4
        store = Store.open(db)
        store.put(store.add_run(stamp("r9", day=9)), row(90.0))
        store.close()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as answer:
            again = answer.read().decode()
        assert len(_embedded(again)["points"]) == 5
        with pytest.raises(urllib.error.HTTPError, match="404") as missing:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/other", timeout=10)
        # an HTTPError holds the response body open until closed
        missing.value.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
        if server.stdout is not None:
            server.stdout.close()


def test_promote_makes_a_validated_run_the_branch_s_results_with_provenance(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'h.db'}"
    with Store.open(url) as store:
        store.put(store.add_run(stamp("pr-12", branch="feature")), row())
    argv = ["db", "promote", "pr-12", "--to", "main", "--by", "alice", "--db", url]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "promoted 1 point(s) of run pr-12 to main as run promoted-pr-12-to-main by alice" in out
    with Store.open(url) as store:
        found = store.history(row(), branch="main")
        assert [store.provenance(s.run_id) for s in found] == [("pr-12", "alice")]
    assert main(argv) == 4
    assert "already promoted" in capsys.readouterr().err
    assert main(["db", "promote", "pr-21", "--to", "main", "--db", url]) == 4
    assert "no stored run 'pr-21'; did you mean pr-12?" in capsys.readouterr().err
