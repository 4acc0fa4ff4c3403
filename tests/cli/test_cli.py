"""The ``infx`` console script as a shell user meets it: help that reads as text, and a closed
pipe or Ctrl-C that ends the command quietly, as git and ripgrep do."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_infx.cli import build_parser, main

REPO = Path(__file__).resolve().parents[2]


def _parsers(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield parser.prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from _parsers(child)


def test_every_argument_of_every_command_has_help() -> None:
    missing = [
        f"{prog}: {action.dest}"
        for prog, parser in _parsers(build_parser())
        for action in parser._actions
        if not isinstance(action, argparse._SubParsersAction | argparse._HelpAction)
        and not action.help
    ]
    assert missing == []


def test_help_shows_no_markup() -> None:
    texts = [build_parser().format_help()]
    texts += [parser.format_help() for _, parser in _parsers(build_parser())]
    assert not [text for text in texts if "``" in text]


def test_a_closed_pipe_ends_the_listing_quietly() -> None:
    """``infx recipes | head -1``: the reader goes away, the command ends with 141 (128 +
    SIGPIPE) and no traceback. The reader is gone before the first write, so the test does not
    depend on how much of the listing a pipe's buffer holds."""
    read, write = os.pipe()
    os.close(read)
    try:
        writer = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from pytest_infx.cli import main; sys.exit(main())",
                "recipes",
            ],
            cwd=REPO,
            check=False,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write)
    assert writer.stderr == ""
    assert writer.returncode == 141


def test_ctrl_c_ends_a_command_with_130_and_one_line(tmp_path: Path) -> None:
    script = tmp_path / "slow.py"
    script.write_text(
        "import sys, time\n"
        "import pytest_infx.cli as cli\n"
        "def slow(args):\n"
        "    print('ready', flush=True)\n"
        "    time.sleep(60)\n"
        "    return 0\n"
        "class Fake:\n"
        "    def parse_args(self, argv):\n"
        "        import argparse\n"
        "        return argparse.Namespace(func=slow, command='slow')\n"
        "cli.build_parser = Fake\n"
        "sys.exit(cli.main([]))\n"
    )
    process = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    assert process.stdout.readline() == "ready\n"
    time.sleep(0.2)
    os.kill(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130
    assert err == "infx slow: interrupted\n"


def test_main_still_returns_the_commands_status(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["golden", "--root", str(REPO / "golden"), "list"]) == 0
    assert capsys.readouterr().out
