from __future__ import annotations

import json
import os
from pathlib import Path

from pytest_infx.results.sweep import AgenticPoint, AgenticRecipe, read_sweep
from pytest_infx.results.verdict import Verdict
from results.samples import CELL, POINT, with_fields


def point(item_id: str, tp: int, concurrency: int) -> AgenticPoint:
    return AgenticPoint(
        id=item_id,
        tp=tp,
        concurrency=concurrency,
        throughput_per_gpu=1.0,
        interactivity=1.0,
        ttft_p50_ms=1.0,
        failed=0,
        total=1,
        verdict=Verdict.PASS,
        reasons=(),
        submission_valid=True,
        file=Path(f"{item_id}.json"),
        log=None,
    )


def test_arms_keep_the_variants_of_one_tp_apart() -> None:
    recipe = AgenticRecipe(
        key="q",
        points=(
            point("q[tp8-c64-hicache]", 8, 64),
            point("q[tp8-c64]", 8, 64),
            point("q[tp8-c1]", 8, 1),
            point("q[tp8-c72-hicache]", 8, 72),
            point("q[tp4-c8-ep4-dpa]", 4, 8),
        ),
    )
    arms = {label: [p.id for p in points] for label, points in recipe.arms().items()}
    assert arms == {
        "TP8": ["q[tp8-c1]", "q[tp8-c64]"],
        "TP8 hicache": ["q[tp8-c64-hicache]", "q[tp8-c72-hicache]"],
        "TP4 ep4-dpa": ["q[tp4-c8-ep4-dpa]"],
    }


def test_points_written_with_the_older_words_read_back_in_the_one_vocabulary(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "agentic"
    folder.mkdir()
    words = {"q[tp1-c1]": "passed", "q[tp1-c2]": "failed", "q[tp1-c4]": "pass", "q[tp1-c8]": "?"}
    for concurrency, (item_id, word) in zip((1, 2, 4, 8), words.items(), strict=True):
        fields = {"id": item_id, "recipe": "q", "concurrency": concurrency, "verdict": word}
        (folder / f"{item_id}.json").write_text(json.dumps(with_fields(POINT, fields)))
    sweep = read_sweep(tmp_path, tmp_path / "golden")
    (agentic,) = sweep.agentic
    assert [p.verdict for p in agentic.by_tp()[1]] == [Verdict.PASS, Verdict.FAIL, Verdict.PASS]
    (problem,) = sweep.problems
    assert "q[tp1-c8].json: 'verdict'" in problem and "'?' is not a verdict" in problem
    assert problem.endswith("it is left out of the report")


def test_a_result_entry_that_is_not_a_file_is_a_problem_never_a_hang(tmp_path: Path) -> None:
    (tmp_path / "cells").mkdir()
    os.mkfifo(tmp_path / "cells" / "r[k1-thinking_off].json")
    (tmp_path / "cells" / "r[k2-thinking_off].json").symlink_to("/dev/zero")
    (tmp_path / "agentic" / "q[tp1-c1].json").mkdir(parents=True)
    deep = tmp_path / "cells" / "r[k3-thinking_off].json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    sweep = read_sweep(tmp_path, tmp_path / "golden")
    assert (sweep.al, sweep.agentic) == ((), ())
    assert sorted(sweep.problems) == sorted(
        [
            f"{tmp_path}/agentic/q[tp1-c1].json: is a folder, not a regular file; give a file;"
            " it is left out of the report",
            f"{tmp_path}/cells/r[k1-thinking_off].json: is a pipe, not a regular file; give a"
            " file; it is left out of the report",
            f"{tmp_path}/cells/r[k2-thinking_off].json: is a character device, not a regular"
            " file; give a file; it is left out of the report",
            f"{deep}: nested too deeply to be a result record; it is left out of the report",
        ]
    )


def test_a_record_s_golden_curve_outside_the_golden_folder_is_not_shown(tmp_path: Path) -> None:
    results = tmp_path / "results"
    (results / "cells").mkdir(parents=True)
    golden = tmp_path / "golden"
    golden.mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "g.yaml").write_text("m:\n  thinking_off:\n    2: 9.99\n")
    record = results / "cells" / "r[k2-thinking_off].json"
    record.write_text(json.dumps(with_fields(CELL, {"golden.curve": "../outside/g"})))
    sweep = read_sweep(results, golden)
    (recipe,) = sweep.al
    assert recipe.golden is None
    problem = (
        f"{record}: 'golden.curve' is '../outside/g.yaml', which leads outside "
        f"{golden.resolve()}; give a path inside {golden.resolve()}"
    )
    assert recipe.golden_problem == problem
    assert problem in sweep.problems


VLLM_TEARDOWN = [
    "(APIServer pid=1) INFO [loggers.py:335] Engine 000: Running: 0 reqs",
    'INFO:     127.0.0.1:34196 - "GET /metrics HTTP/1.1" 200 OK',
    "guard: signal (SIGTERM); stopping its process group",
    *[f"(APIServer pid=1) INFO [launcher.py:254] [shutdown] step {n}" for n in range(40)],
    "Traceback (most recent call last):",
    "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.",
    "/usr/lib/python3.11/multiprocessing/resource_tracker.py:254: UserWarning: resource_tracker:"
    " There appear to be 1 leaked semaphore objects to clean up at shutdown",
    "  warnings.warn('resource_tracker: There appear to be %d '",
]


def test_a_clean_shutdown_is_not_the_servers_last_word(tmp_path: Path) -> None:
    logs = tmp_path / "results" / "logs"
    logs.mkdir(parents=True)
    (logs / "stopped.log").write_text("\n".join(VLLM_TEARDOWN) + "\n")
    (logs / "died.log").write_text(
        "INFO loading\nRuntimeError: CUDA out of memory\n" + "\n".join(VLLM_TEARDOWN[-2:]) + "\n"
    )
    found = {log.path.name: log for log in read_sweep(tmp_path / "results", tmp_path).logs}
    stopped = found["stopped.log"]
    assert (stopped.last, stopped.stopped) == (VLLM_TEARDOWN[1], True)
    assert stopped.tail[-1] == VLLM_TEARDOWN[-1]
    died = found["died.log"]
    assert (died.last, died.stopped) == ("RuntimeError: CUDA out of memory", False)
