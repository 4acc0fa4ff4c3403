from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from pytest_infx.plugin.output.activity import Activity, Tracker, read_activities, render


def test_a_line_says_done_total_rate_elapsed_and_eta() -> None:
    cell = Activity("gw1", "cell", "k[k2-thinking_on]", started=100.0, done=2, total=8, tokens=300)
    assert render(cell, 130.0, tagged=True) == (
        "infx [gw1] k[k2-thinking_on]: 2/8 requests, 10.0 output tok/s, elapsed 0:30, ETA 1:30"
    )
    failed = replace(cell, done=8, failed=1)
    assert render(failed, 4000.0, tagged=False) == (
        "infx k[k2-thinking_on]: 8/8 requests, 1 failed, 0.1 output tok/s, elapsed 1:05:00"
    )


def test_a_starting_server_shows_its_logs_last_line(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("INFO loading\n\x1b[32mINFO\x1b[0m\tcompiling graphs 3/7\r\n\n")
    server = Activity("main", "server", "k-k2", started=0.0, log=str(log))
    assert render(server, 75.0, tagged=False) == (
        "infx starting server k-k2 (1:15): INFO compiling graphs 3/7"
    )
    preparing = Activity("gw2", "preparing", "k[k2-thinking_off]", started=0.0)
    assert render(preparing, 3700.0, tagged=True) == (
        "infx [gw2] preparing the server of k[k2-thinking_off]: engine, checkpoint (1:01:40)"
    )
    point = Activity("main", "point", "k[tp1-c4]", started=0.0, duration_s=60.0, log=str(log))
    assert render(point, 20.0, tagged=False) == (
        "infx k[tp1-c4]: elapsed 0:20, ETA 0:40 | INFO compiling graphs 3/7"
    )


def test_a_long_server_line_is_shortened_at_a_word(tmp_path: Path) -> None:
    from pytest_infx.plugin.output.activity import last_line

    log = tmp_path / "server.log"
    log.write_text("INFO " + "abcdefghij " * 30 + "compiling graphs 3/7\n")
    shown = last_line(str(log), width=60)
    assert shown.startswith("... abcdefghij ") and shown.endswith(" compiling graphs 3/7")
    assert len(shown) <= 60


def test_the_tracker_mirrors_its_activity_to_a_file_until_idle(tmp_path: Path) -> None:
    tracker = Tracker(tmp_path, "gw3", flush_s=0.05)
    tracker.begin("cell", "k[k1-thinking_off]", total=4)
    for tokens in (10, 20):
        tracker.request_done(tokens, ok=True)
    tracker.request_done(None, ok=False)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        (found,) = read_activities(tmp_path)
        if found.done == 3:
            break
        time.sleep(0.02)
    assert (found.worker, found.done, found.failed, found.tokens) == ("gw3", 3, 1, 30)
    tracker.idle()
    assert read_activities(tmp_path) == []
    tracker.close()
