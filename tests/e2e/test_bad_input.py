"""One bad input file is an error at that file, and every other recipe still collects."""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from core.helpers import agentic, speedbench, write
from known_recipes import longest_shipped_key

from pytest_infx.lint.builtin import all_rules

from .conftest import Sweep
from .fake_vllm import DEFAULT_PATTERN, expected_al
from .helpers import MODES, records

LAUGHS = (
    "key: laughs\na0: &a0 ["
    + ", ".join(["lol"] * 10)
    + "]\n"
    + "".join(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 9))
)
DEEP = "key: deep\nx: " + "{a: " * 990 + "1" + "}" * 990 + "\n"


def _good_items(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line]


NUL = "key: nul-b300\nrunner: b300\nx: a\x00b\n"
ESC = "key: esc-b300\nrunner: b300\nx: a\x1b[31mb\n"


@pytest.mark.parametrize(
    "text", [LAUGHS, DEEP, NUL, ESC], ids=["billion-laughs", "deep-nesting", "nul", "esc"]
)
def test_hostile_yaml_is_one_error_at_its_file_and_the_others_collect(
    recipes: Path, pytester: pytest.Pytester, text: str
) -> None:
    write(recipes / "good.yaml", speedbench("good-b300", draft_lengths=(1,)))
    bad = write(recipes / "hostile.yaml", text)
    result = pytester.runpytest_subprocess("--collect-only", "-q", "--gpu", "b300", timeout=60)
    out = result.stdout.str()
    assert "Traceback" not in out and "RecursionError" not in out
    assert out.count(f"{bad}:") == 1
    assert len(out) < 5000
    assert _good_items(result) == [
        "recipes/good.yaml::good-b300[k1-thinking_off]",
        "recipes/good.yaml::good-b300[k1-thinking_on]",
    ]


@pytest.mark.parametrize("text", [NUL, ESC], ids=["nul", "esc"])
def test_a_control_byte_is_one_lint_finding_at_its_line(
    recipes: Path, pytester: pytest.Pytester, text: str
) -> None:
    write(recipes / "good.yaml", speedbench("good-b300", draft_lengths=(1,)))
    write(recipes / "bad.yaml", text)
    result = pytester.runpytest_subprocess("-m", "infx_lint", "-k", "recipes-load", timeout=60)
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "Traceback" not in out and len(out) < 5000
    failure = out.split("infx-lint::recipes-load _", 1)[1].split("infx lint ---", 1)[0]
    shown = [line for line in failure.splitlines() if line.startswith("recipes/bad.yaml")]
    assert len(shown) == 1 and shown[0].startswith("recipes/bad.yaml:3: invalid YAML: ")
    assert "is not allowed in YAML (control characters are not allowed)" in shown[0]


def _overflowing(recipes: Path) -> Path:
    write(recipes / "good.yaml", agentic("good-b200", points={4: (1,)}))
    recipe = agentic("bad-b200", points={4: (1, 32)})
    recipe["agentic"]["admission-factor"] = 1.0e308
    return write(recipes / "bad.yaml", recipe)


def test_a_value_that_overflows_is_an_error_in_its_file_alone(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    bad = _overflowing(recipes)
    result = pytester.runpytest("--collect-only", "-q", "--gpu", "b200")
    result.stdout.fnmatch_lines([f"{bad}:*: agentic.admission-factor: *less than or equal to*"])
    assert "OverflowError" not in result.stdout.str()
    assert _good_items(result) == ["recipes/good.yaml::good-b200[tp4-c1]"]


def test_a_value_that_overflows_fails_lint(recipes: Path, pytester: pytest.Pytester) -> None:
    bad = _overflowing(recipes)
    result = pytester.runpytest("-m", "infx_lint", "-k", "recipes-load")
    result.assert_outcomes(failed=1, deselected=len(all_rules()) - 1)
    result.stdout.fnmatch_lines([f"*{bad.name}:*admission-factor*"])


def test_under_xdist_a_recipe_error_is_reported_while_the_others_run(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    _overflowing(recipes)
    result = pytester.runpytest_subprocess("-n", "2", "--gpu", "h100", timeout=120)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*bad.yaml:*: agentic.admission-factor: *", "ERROR recipes/bad.yaml*"]
    )
    assert "ERROR recipes/good.yaml" not in result.stdout.str()


@pytest.mark.parametrize(
    ("args", "ini", "shown"),
    [
        (("--infx-results", "afile"), "", "--infx-results */afile: is a file, not a folder; *"),
        (
            ("--infx-results", "afile/sub"),
            "",
            "--infx-results */afile/sub: cannot be created: */afile is a file; *",
        ),
        (("--infx-gpu-count", "-1"), "", "--infx-gpu-count -1: give 0 to 1024 GPUs *"),
        (("--infx-gpu-count", "10000000"), "", "--infx-gpu-count 10000000: give 0 to 1024 GPUs *"),
        (("--infx-recipes", "nope"), "", "--infx-recipes */nope: does not exist; *"),
        (("--infx-dataset-dir", "nope"), "", "--infx-dataset-dir */nope: does not exist; *"),
        (("--infx-progress-interval", "0.001"), "", "--infx-progress-interval 0.001: *at least*"),
        ((), "infx_resume = perhaps", "ini infx_resume = 'perhaps': give true or false*"),
        ((), "infx_lint = maybe", "ini infx_lint = 'maybe': give true or false*"),
        ((), "infx_recipes = nowhere", "ini infx_recipes */nowhere: does not exist; *"),
        (("--infx-results", "loop"), "", "--infx-results loop: is a symbolic link loop; *"),
        (("--infx-results", "x" * 300), "", "--infx-results */xxx*: is too long a path; *"),
        (("--infx-results", "/proc/x"), "", "--infx-results /proc/x: cannot be created: /proc is*"),
        (("--infx-recipes", "loop"), "", "--infx-recipes */loop: is a symbolic link loop; *"),
        (("--infx-dataset-dir", "loop"), "", "--infx-dataset-dir loop: is a symbolic link loop*"),
        (("--infx-download-root", "afile"), "", "--infx-download-root afile: is a file, not a*"),
        (("--infx-staged-root", "afile"), "", "--infx-staged-root afile: is a file, not a folder*"),
        (("--infx-lint-root", "loop"), "", "--infx-lint-root */loop: is a symbolic link loop; *"),
        ((), "infx_golden = loop", "ini infx_golden */loop: is a symbolic link loop; *"),
        ((), "infx_download_root = afile", "ini infx_download_root afile: is a file, not a*"),
        ((), "infx_golden = afile", "ini infx_golden */afile: is a file, not a folder; *"),
        ((), "infx_golden = /dev/null", "ini infx_golden /dev/null: is a character device*"),
        (("-o", "infx_lint_root=/"), "", "ini infx_lint_root /: is not a repository *"),
        (("--infx-lint-root=/proc",), "", "--infx-lint-root /proc: is not a repository *"),
    ],
)
def test_a_value_that_cannot_be_used_is_one_usage_line_before_anything_starts(
    recipes: Path, pytester: pytest.Pytester, args: tuple[str, ...], ini: str, shown: str
) -> None:
    write(recipes / "good.yaml", speedbench("good-b300", draft_lengths=(1,)))
    (pytester.path / "afile").write_text("")
    (pytester.path / "loop").symlink_to("loop")
    pytester.makeini(f"[pytest]\ninfx = true\naddopts = -p no:cacheprovider\n{ini}\n")
    result = pytester.runpytest("--collect-only", "-q", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.errlines if line.startswith("ERROR: ")]
    assert len(errors) == 1, result.errlines
    result.stderr.fnmatch_lines([f"ERROR: {shown}"])
    assert "Traceback" not in result.stderr.str() + result.stdout.str()
    assert "INTERNALERROR" not in result.stderr.str() + result.stdout.str()


def test_an_unusable_cache_folder_is_a_usage_error_of_the_run(
    recipes: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(recipes / "good.yaml", speedbench("good-b300", draft_lengths=(1,)))
    (pytester.path / "afile").write_text("")
    monkeypatch.setenv("INFX_CACHE_DIR", str(pytester.path / "afile"))
    result = pytester.runpytest("-q", "--gpu", "b300")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: INFX_CACHE_DIR */afile: is a file, not a folder; *"])


@pytest.mark.parametrize("value", ["abc", "0", "-3", "inf", "1e400"])
def test_an_unusable_input_limit_is_one_usage_error_naming_the_variable(
    recipes: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    for key in ("a-b300", "b-b300"):
        write(recipes / f"{key}.yaml", speedbench(key, draft_lengths=(1,)))
    monkeypatch.setenv("INFX_MAX_INPUT_MB", value)
    result = pytester.runpytest("-q", "--gpu", "b300")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"ERROR: $INFX_MAX_INPUT_MB: '{value}' is not a size; give a positive number of MiB"]
    )
    assert result.stderr.str().count("INFX_MAX_INPUT_MB") == 1


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (["changed", "--recipes", "{tmp}/nonexistent"], "infx changed: error: --recipes *"),
        (["recipes", "--recipes", "{tmp}/nonexistent"], "infx recipes: error: --recipes *"),
        (["lint", "--root", "{tmp}/nonexistent"], "infx lint: error: --root *"),
        (["lint", "--root", "/proc"], "infx lint: error: --root /proc: is not a repository *"),
        (
            ["engine", "install", "aiperf", "--cache-dir", "{tmp}/afile/x"],
            "infx engine: error: --cache-dir */afile/x: cannot be created: */afile is a file; *",
        ),
    ],
)
def test_infx_names_a_path_that_cannot_be_used_with_the_usage_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], shown: str
) -> None:
    from pytest_infx.cli import main

    (tmp_path / "afile").write_text("")
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 4
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and fnmatch.fnmatch(err[0], shown), err


def test_infx_engine_install_names_an_unusable_cache_variable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_infx.cli import main

    (tmp_path / "afile").write_text("")
    monkeypatch.setenv("INFX_CACHE_DIR", str(tmp_path / "afile"))
    assert main(["engine", "install", "aiperf"]) == 4
    assert capsys.readouterr().err.startswith(f"infx engine: error: INFX_CACHE_DIR {tmp_path}/")


def test_a_dangling_symlink_in_the_recipe_folder_is_an_error_naming_its_target(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    write(recipes / "good.yaml", speedbench("good-b300", draft_lengths=(1,)))
    (recipes / "gone.yaml").symlink_to(pytester.path / "nowhere.yaml")
    result = pytester.runpytest("--collect-only", "-q", "--gpu", "b300")
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting recipes/gone.yaml*",
            f"{recipes / 'gone.yaml'}:1: a symbolic link to *nowhere.yaml, which does not exist",
        ]
    )
    assert len(_good_items(result)) == 2


def test_an_extends_that_leaves_the_recipe_folder_is_an_error_at_its_line(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    whole = speedbench("ext-b300", draft_lengths=(1,))
    write(pytester.path / "elsewhere" / "_b.yaml", {"model": whole.pop("model")})
    write(recipes / "ext.yaml", {"extends": "../elsewhere/_b.yaml", **whole})
    result = pytester.runpytest("--collect-only", "-q", "--gpu", "b300")
    result.stdout.fnmatch_lines(
        [f"{recipes / 'ext.yaml'}:1: extends: base file */elsewhere/_b.yaml is outside the recipe*"]
    )
    assert _good_items(result) == []


def test_an_unknown_runner_says_which_runners_exist(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    write(recipes / "good.yaml", speedbench("good-b300", draft_lengths=(1,)))
    typo = write(recipes / "typo.yaml", speedbench("typo-b300", runner="b3000"))
    result = pytester.runpytest("--collect-only", "-q", "--gpu", "b300")
    result.stdout.fnmatch_lines(
        [f"{typo}:*: runner: *no runner type 'b3000'; did you mean b300*? runners: cpu, h100, *"]
    )
    assert len(_good_items(result)) == 2
    flag = pytester.runpytest("--collect-only", "-q", "--gpu", "b3000")
    assert flag.ret == pytest.ExitCode.USAGE_ERROR
    flag.stderr.fnmatch_lines(["ERROR: --gpu b3000: no runner type 'b3000'; did you mean *"])


def test_the_plan_never_shows_a_secret(recipes: Path, pytester: pytest.Pytester) -> None:
    recipe = speedbench("tok-b300", draft_lengths=(1,))
    recipe["engine"]["env"] = {"HF_TOKEN": "hf_secret_value", "VLLM_USE_V1": "1"}
    recipe["engine"]["args"]["api-key"] = "sk-secret-value"
    write(recipes / "tok.yaml", recipe)
    result = pytester.runpytest("--collect-only", "-q", "--infx-plan", "--gpu", "b300")
    out = result.stdout.str()
    assert result.ret == 0, out
    assert "secret_value" not in out and "secret-value" not in out
    result.stdout.fnmatch_lines(
        ["*env: HF_TOKEN='[*][*][*]' VLLM_USE_V1=1", "*--api-key '[*][*][*]'*"]
    )


@pytest.mark.parametrize(
    ("make", "shown"),
    [
        (os.mkfifo, "is a pipe, not a regular file; give a file"),
        (lambda p: p.symlink_to(p.name), "is a symbolic link loop; point the link at a file"),
    ],
    ids=["pipe", "link-loop"],
)
def test_a_recipe_that_is_not_a_file_is_an_error_naming_it_and_the_others_collect(
    recipes: Path, pytester: pytest.Pytester, make: Callable[[Path], object], shown: str
) -> None:
    write(recipes / "good.yaml", speedbench("good-b300", draft_lengths=(1,)))
    make(recipes / "odd.yaml")
    result = pytester.runpytest_subprocess("--collect-only", "-q", "--gpu", "b300", timeout=60)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([f"*/recipes/odd.yaml:1: {shown}"])
    assert _good_items(result) == [
        "recipes/good.yaml::good-b300[k1-thinking_off]",
        "recipes/good.yaml::good-b300[k1-thinking_on]",
    ]


def test_a_golden_file_or_script_that_is_a_pipe_never_blocks_lint(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    write(recipes / "good.yaml", speedbench("good-b300", draft_lengths=(1,)))
    (pytester.path / "golden").mkdir()
    os.mkfifo(pytester.path / "golden" / "demo.yaml")
    os.mkfifo(pytester.path / "collect_al")
    result = pytester.runpytest_subprocess("-m", "infx_lint", "-k", "golden", timeout=60)
    result.stdout.fnmatch_lines(["golden/demo.yaml: is a pipe, not a regular file; give a file.*"])
    assert "Traceback" not in result.stdout.str()


def test_the_longest_shipped_recipe_key_plans_and_launches(sweep: Sweep) -> None:
    """Rule 3: a label is derived within the launcher's bound, so a key of any length runs."""
    key = longest_shipped_key()
    sweep.add(key)
    sweep.commit_golden({m: {1: expected_al(DEFAULT_PATTERN, 1)} for m in MODES})
    plan = sweep.pytester.runpytest("--gpu", "cpu", "--collect-only", "-q", "--infx-plan")
    assert plan.ret == pytest.ExitCode.OK, plan.stdout.str()
    assert "SpecError" not in plan.stdout.str()
    result = sweep.run()
    assert "must be 1-64 characters" not in result.stdout.str()
    result.assert_outcomes(passed=len(MODES))
    assert len(records(sweep.record)) == 1


@pytest.mark.parametrize(
    "flag", ["--infx-results", "--infx-dataset-dir", "--infx-staged-root", "--infx-download-root"]
)
def test_a_folder_outside_the_project_in_the_space_form_is_never_a_silent_empty_run(
    recipes: Path, pytester: pytest.Pytester, flag: str
) -> None:
    """Rule 3: pytest picks its rootdir before the plugin's options are known, and took the
    value for a test path; the run said nothing and exited 5, which CI reads as a pass."""
    write(recipes / "good.yaml", speedbench("good-b300", draft_lengths=(1,)))
    pytester.makeini("[pytest]\ninfx = true\naddopts = -p no:cacheprovider\n")
    outside = pytester.path.parent / f"outside-{flag.strip('-')}"
    outside.mkdir()
    result = pytester.runpytest("--collect-only", "-q", "--gpu", "b300", flag, str(outside))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"ERROR: {flag} {outside}: pytest took this folder for a test path *; write {flag}=*"]
    )
    joined = pytester.runpytest("--collect-only", "-q", "--gpu", "b300", f"{flag}={outside}")
    assert joined.ret == pytest.ExitCode.OK


def test_a_truncated_golden_curve_is_named_by_preflight_before_any_server_starts(
    sweep: Sweep,
) -> None:
    """Rule 3: the curve has one cell of the four the recipe needs; the other three are named,
    and since every server would serve a missing cell, none starts."""
    sweep.add("fake-cpu-vllm", draft_lengths=(1, 2))
    sweep.commit_golden({"thinking_on": {1: expected_al(DEFAULT_PATTERN, 1)}})
    result = sweep.run("-k", "not k1-thinking_on")
    result.assert_outcomes(errors=3)
    out = result.stdout.str()
    for mode, k in (("thinking_off", 1), ("thinking_off", 2), ("thinking_on", 2)):
        assert f"has no cell {mode} k={k} (it has thinking_on k=1)" in out, out
    assert records(sweep.record) == []


RULE4 = [
    (["report", "{tmp}/" + "x" * 300], "infx report: error: */xxx*: File name too long; *"),
    (
        ["db", "items", "--db", "sqlite:///{tmp}/notdb.db"],
        "infx db: error: history database sqlite:///*/notdb.db: file is not a database; *",
    ),
    (
        ["db", "dashboard", "--db", "sqlite:///{tmp}/notdb.db", "--since", "99999999999d"],
        "infx db: error: --since '99999999999d': reaches before the first year; *",
    ),
    (["db", "dashboard", "--out", "{tmp}"], "infx db: error: --out *: is a folder; *"),
    (
        ["db", "dashboard", "--out", "/proc/x.html"],
        "infx db: error: --out /proc/x.html: its folder /proc is not writable; *",
    ),
    (["db", "serve", "--port", "99999"], "infx db: error: --port 99999: not a port; *"),
    (
        ["db", "ingest", "{tmp}/loops", "--db", "sqlite:///{tmp}/new.db"],
        "infx db: error: no JSON result file in */loops; *",
    ),
    (["cache", "--cache-dir", "{tmp}/afile"], "infx cache: error: --cache-dir */afile: is a file*"),
    (
        ["engine", "check", "--recipes", "{tmp}/empty", "--golden", "{tmp}", "--no-install"],
        "infx engine check: error: no points in */empty; give the recipe folder that holds them",
    ),
    (
        ["engine", "check", "--recipes", "{tmp}/one", "--golden", "{tmp}", "--gpu", "h100"],
        "infx engine check: error: no points in */one for --gpu h100; *, or another runner",
    ),
]


@pytest.mark.parametrize(("argv", "shown"), RULE4, ids=[" ".join(a[:2]) for a, _ in RULE4])
def test_rule4_each_infx_failure_is_one_line_naming_the_input_with_a_usage_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], shown: str
) -> None:
    """Rule 4: no traceback, one line naming the input, what is wrong and what to do."""
    from pytest_infx.cli import main

    (tmp_path / "afile").write_text("")
    (tmp_path / "notdb.db").write_text("not a database\n" * 10)
    (tmp_path / "loops").mkdir()
    (tmp_path / "loops" / "a.json").symlink_to("b.json")
    (tmp_path / "loops" / "b.json").symlink_to("a.json")
    (tmp_path / "empty").mkdir()
    write(tmp_path / "one" / "good.yaml", speedbench("good-b300", draft_lengths=(1,)))
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 4
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and fnmatch.fnmatch(err[0], shown), err


def test_rule4_a_bad_file_in_an_ingest_of_many_is_skipped_and_the_others_are_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Deep JSON aborted the ingest of every file after it."""
    from history.inferencex_files import agg

    from pytest_infx.cli import main

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "agg_a_deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "in" / "agg_dsr1_tp8_conc4_b200.json").write_text(json.dumps(agg(4, 1200.0)))
    db = f"sqlite:///{tmp_path / 'h.db'}"
    assert main(["db", "ingest", str(tmp_path / "in"), "--db", db]) == 1, "a file was skipped"
    out = capsys.readouterr().out
    assert "1 added" in out and "1 skipped" in out
    assert "agg_a_deep.json: not a JSON file we can read" in out
    assert main(["db", "items", "--db", db]) == 0
    (item,) = capsys.readouterr().out.splitlines()
    assert item.endswith("_conc4_b200")


def test_rule4_a_read_only_history_database_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from history.inferencex_files import agg

    from pytest_infx.cli import main

    (tmp_path / "agg_dsr1_tp8_conc4_b200.json").write_text(json.dumps(agg(4, 1200.0)))
    db = tmp_path / "h.db"
    assert main(["db", "ingest", str(tmp_path), "--db", f"sqlite:///{db}"]) == 0
    capsys.readouterr()
    read_only = f"sqlite:///file:{db}?mode=ro&uri=true"
    assert main(["db", "ingest", str(tmp_path), "--db", read_only, "--run-id", "again"]) == 4
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("infx db: error: history database sqlite:///file")
    assert "attempt to write a readonly database; give a database" in err[0]


def test_rule4_infx_cache_names_a_cache_variable_that_is_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_infx.cli import main

    (tmp_path / "afile").write_text("")
    monkeypatch.setenv("INFX_CACHE_DIR", str(tmp_path / "afile"))
    assert main(["cache", "--recipes", str(tmp_path)]) == 4
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"infx cache: error: INFX_CACHE_DIR {tmp_path}/afile: is a file, not a folder;"
        " give the cache folder"
    ]


def test_rule4_a_port_in_use_is_one_line_from_infx_db_serve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    from history.inferencex_files import agg

    from pytest_infx.cli import main

    (tmp_path / "agg_dsr1_tp8_conc4_b200.json").write_text(json.dumps(agg(4, 1200.0)))
    db = f"sqlite:///{tmp_path / 'h.db'}"
    assert main(["db", "ingest", str(tmp_path), "--db", db]) == 0
    capsys.readouterr()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["db", "serve", "--db", db, "--port", str(port)]) == 4
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"infx db: error: --host 127.0.0.1 --port {port}: Address already in use; give another"
        " port, or an address of this machine"
    ]
