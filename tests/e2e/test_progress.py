from __future__ import annotations

import re

import pytest

from .conftest import Sweep

KEY = "slow-cpu-vllm"
PACED = ("--step-delay", "0.12", "--start-delay", "1.5")
CELL_LINE = re.compile(
    r"^infx(?: \[(?P<worker>gw\d)\])? (?P<id>\S+\[k\d-thinking_o\w+\]): (?P<done>\d)/(?P<total>\d) "
    r"requests, (?P<rate>[\d.]+) output tok/s, elapsed \d+:\d\d(?:, ETA \d+:\d\d)?$"
)
SERVER_LINE = re.compile(
    r"^infx(?: \[gw\d\])? starting server \S+ \(\d+:\d\d\)(?:: (?P<tail>.*))?$"
)


def _paced(sweep: Sweep, draft_lengths: tuple[int, ...]) -> None:
    """Four prompts one at a time, each about a second long, behind a server that loads for
    1.5 s: a cell lasts several progress intervals."""
    sweep.add(KEY, extra=PACED, draft_lengths=draft_lengths, concurrency=1)


def _cells(result: pytest.RunResult) -> list[re.Match[str]]:
    return [m for line in result.outlines if (m := CELL_LINE.match(line))]


def test_progress_lines_appear_while_a_cell_runs(sweep: Sweep) -> None:
    _paced(sweep, (1,))
    result = sweep.run("--snapshot-update", "--infx-progress-interval", "0.3")
    result.assert_outcomes(passed=2)
    cells = _cells(result)
    assert {m["id"] for m in cells} == {f"{KEY}[k1-thinking_off]", f"{KEY}[k1-thinking_on]"}
    assert all(m["total"] == "4" and m["worker"] is None for m in cells)
    midway = [m for m in cells if 0 < int(m["done"]) < 4]
    assert midway, "no line was printed while the cell was under way:\n" + result.stdout.str()
    assert any(float(m["rate"]) > 0 and "ETA" in m.group(0) for m in midway)
    tails = [m["tail"] for line in result.outlines if (m := SERVER_LINE.match(line))]
    assert any(t and "loading weights" in t for t in tails), result.stdout.str()


def test_without_a_terminal_progress_leaves_plain_lines(sweep: Sweep) -> None:
    """A CI log: no line of padding, no line that starts with spaces to realign pytest's dots."""
    _paced(sweep, (1,))
    result = sweep.run("--snapshot-update", "--infx-progress-interval", "0.3")
    result.assert_outcomes(passed=2)
    assert _cells(result)
    padded = [line for line in result.outlines if line[:1] == " " and line.strip()[:1] in ".F"]
    blank = [line for line in result.outlines if line and not line.strip()]
    assert padded == [] and blank == [], result.stdout.str()


def test_progress_lines_name_the_worker_under_xdist(sweep: Sweep) -> None:
    _paced(sweep, (1, 2))
    result = sweep.run("-n", "2", "--snapshot-update", "--infx-progress-interval", "0.3")
    result.assert_outcomes(passed=4)
    cells = _cells(result)
    assert cells and all(m["worker"] in ("gw0", "gw1") for m in cells), result.stdout.str()
    assert {m["id"] for m in cells} <= {
        f"{KEY}[k{k}-{mode}]" for k in (1, 2) for mode in ("thinking_off", "thinking_on")
    }
    assert any(0 < int(m["done"]) < 4 for m in cells)


def test_progress_off_prints_nothing(sweep: Sweep) -> None:
    sweep.add(KEY, extra=("--step-delay", "0.05"), draft_lengths=(1,), concurrency=1)
    result = sweep.run(
        "--snapshot-update", "--infx-progress", "off", "--infx-progress-interval", "0.1"
    )
    result.assert_outcomes(passed=2)
    assert _cells(result) == []
    assert not any(SERVER_LINE.match(line) for line in result.outlines)


@pytest.mark.parametrize(
    ("ini", "args", "message"),
    [
        (
            "infx_progress = loud",
            (),
            "ini infx_progress = 'loud': use one of auto, live, lines, off",
        ),
        ("infx_progress_interval = soon", (), "ini infx_progress_interval = 'soon': give a number"),
        ("", ("--infx-progress-interval", "0"), "--infx-progress-interval 0: give a positive"),
    ],
)
def test_a_bad_progress_setting_is_a_usage_error(
    pytester: pytest.Pytester, ini: str, args: tuple[str, ...], message: str
) -> None:
    pytester.makeini(f"[pytest]\ninfx = true\n{ini}\n")
    result = pytester.runpytest("--collect-only", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])


def test_a_server_has_one_name_in_the_plan_the_progress_and_its_log(sweep: Sweep) -> None:
    _paced(sweep, (1, 2))
    result = sweep.run("--snapshot-update", "--infx-plan", "--infx-progress-interval", "0.3")
    result.assert_outcomes(passed=4)
    servers = [line.split()[1] for line in result.outlines if line.startswith("  server ")]
    shared = {line.split()[1] for line in result.outlines if " shared by 2: " in line}
    started = {line.split()[3] for line in result.outlines if SERVER_LINE.match(line)}
    logs = {path.stem.rsplit("-", 1)[0] for path in (sweep.results / "logs").glob("*.log")}
    assert len(set(servers)) == 2, result.stdout.str()
    assert shared == set(servers) == logs == started, (servers, shared, logs, started)
