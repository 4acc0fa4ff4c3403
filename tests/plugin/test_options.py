"""The run's settings are one value: lint, Slurm and the golden folder are built with the rest,
once, from the options and their ini twins; a bad value (``infx_engine_check`` and
``--infx-engine-check`` here) is a usage error before anything runs."""

from __future__ import annotations

import pytest
from known_recipes import copy_recipes

import pytest_infx.plugin.options as options
from pytest_infx.settings import DEFAULT_GOLDEN_DIR, LintSettings, Settings, SlurmSettings

pytest_plugins = ["pytester"]


def _settings(pytester: pytest.Pytester, *args: str) -> Settings:
    return options.settings(pytester.parseconfigure("-p", "no:cacheprovider", *args))


def test_without_options_lint_slurm_and_golden_have_their_defaults(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\ninfx = true\n")
    found = _settings(pytester)
    assert found.lint == LintSettings()
    assert found.slurm is None
    assert found.golden == (pytester.path / DEFAULT_GOLDEN_DIR).resolve()


def test_the_lint_settings_come_from_the_ini_and_the_options(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\ninfx = true\ninfx_lint_root = repo\ninfx_base = origin/release\n"
        "infx_lint_select = changelog, comments-header\ninfx_lint_ignore = golden\n"
        "infx_changelog_only_entries = repeat\n"
        "infx_scenario_types =\n    fixed-seq-len\n    disagg\ninfx_lint = true\n"
    )
    pytester.mkdir("repo").joinpath("perf-changelog.yaml").write_text("")
    found = _settings(pytester, "--infx-pr", "12", "--infx-lint-all")
    assert found.lint == LintSettings(
        root=(pytester.path / "repo").resolve(),
        root_option=False,
        base="origin/release",
        select=("changelog", "comments-header"),
        ignore=("golden",),
        changelog_only_entries="repeat",
        scenario_types=("fixed-seq-len", "disagg"),
        include=True,
        audit=True,
        pr=12,
        main=False,
    )


def test_a_lint_option_wins_over_its_ini_twin(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ninfx = true\ninfx_lint_root = repo\ninfx_base = origin/release\n")
    pytester.mkdir("other").joinpath("perf-changelog.yaml").write_text("")
    found = _settings(pytester, "--infx-lint-root", "other", "--infx-base", "v1", "--infx-main")
    assert (found.lint.root, found.lint.root_option) == ((pytester.path / "other").resolve(), True)
    assert (found.lint.base, found.lint.main) == ("v1", True)


def test_the_slurm_settings_come_from_the_options_over_their_ini_twins(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini(
        "[pytest]\ninfx = true\ninfx_slurm = 2\ninfx_slurm_partition = ini-part\n"
        "infx_slurm_args = --qos=bench --exclusive\ninfx_slurm_wait = 300\n"
    )
    args = ("--infx-slurm-partition", "h200", "--infx-slurm-gpus", "4")
    found = _settings(pytester, *args, "--infx-slurm-time", "2:00:00")
    assert found.slurm == SlurmSettings(
        workers=2,
        partition="h200",
        gpus=4,
        time="2:00:00",
        account=None,
        extra=("--qos=bench", "--exclusive"),
        wait_s=300.0,
    )


def test_slurm_options_without_workers_are_not_read(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ninfx = true\ninfx_slurm_args = 'unclosed\n")
    assert _settings(pytester, "--infx-slurm-wait", "soon").slurm is None


def test_a_bad_slurm_value_is_a_usage_error_of_the_settings(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ninfx = true\n")
    with pytest.raises(pytest.UsageError, match=r"^--infx-slurm-wait: expected seconds > 0"):
        _settings(pytester, "--infx-slurm", "1", "--infx-slurm-wait", "soon")


def test_the_golden_ini_moves_the_golden_folder(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ninfx = true\ninfx_golden = curves/al\n")
    assert _settings(pytester).golden == (pytester.path / "curves" / "al").resolve()


def test_a_bad_ini_value_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\ninfx = true\naddopts = -p no:cacheprovider\ninfx_engine_check = perhaps\n"
    )
    copy_recipes(pytester.path / "recipes")
    result = pytester.runpytest("--collect-only", "-q", "--gpu", "b300")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: infx_engine_check = 'perhaps': use one of auto, always, off"]
    )


def test_a_bad_option_value_is_refused_by_the_parser(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ninfx = true\naddopts = -p no:cacheprovider\n")
    result = pytester.runpytest("--collect-only", "--infx-engine-check", "sometimes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--infx-engine-check: invalid choice: 'sometimes'*"])


def test_the_history_defaults_to_sqlite_in_the_results_folder(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("INFX_DB_URL", raising=False)
    pytester.makeini("[pytest]\ninfx = true\n")
    found = _settings(pytester)
    assert found.history.url == f"sqlite:///{found.results / 'history.db'}"
    assert found.history.baseline is None


def test_the_history_url_comes_from_the_option_then_the_ini_then_the_environment(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INFX_DB_URL", "postgresql+psycopg://env/db")
    pytester.makeini("[pytest]\ninfx = true\n")
    assert _settings(pytester).history.url == "postgresql+psycopg://env/db"
    pytester.makeini("[pytest]\ninfx = true\ninfx_db = sqlite:///ini.db\n")
    assert _settings(pytester).history.url == "sqlite:///ini.db"
    found = _settings(pytester, "--infx-db", "off", "--infx-baseline", "main")
    assert found.history.url is None
    assert found.history.baseline == "main"


def test_the_tolerance_ini_is_checked_before_anything_runs(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\ninfx = true\naddopts = -p no:cacheprovider\n"
        "infx_baseline_tolerance =\n    tput_per_gpu: -5%\n    median_ttft: -10%\n"
    )
    result = pytester.runpytest("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: ini infx_baseline_tolerance: 'median_ttft: -10%': median_ttft hurts when it "
            "rises, so its tolerance is written median_ttft: +10%"
        ]
    )


def test_the_gate_s_noise_band_and_repeats_come_from_the_ini(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ninfx = true\n")
    found = _settings(pytester).history
    assert (found.mad_k, found.window, found.repeats) == (3.0, 10, 1)
    pytester.makeini(
        "[pytest]\ninfx = true\ninfx_baseline_mad_k = 2.5\ninfx_baseline_window = 20\n"
        "infx_repeats = 3\n"
    )
    found = _settings(pytester).history
    assert (found.mad_k, found.window, found.repeats) == (2.5, 20, 3)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("infx_baseline_mad_k = nan", "ini infx_baseline_mad_k = 'nan': give a number above 0"),
        ("infx_baseline_mad_k = -1", "ini infx_baseline_mad_k = '-1': give a number above 0"),
        ("infx_baseline_window = 2.5", "ini infx_baseline_window = '2.5': give a whole number"),
        (
            "infx_repeats = 21",
            "ini infx_repeats = '21': give a whole number above 0 and at most 20",
        ),
    ],
)
def test_a_bad_gate_number_is_a_usage_error(
    pytester: pytest.Pytester, line: str, message: str
) -> None:
    pytester.makeini(f"[pytest]\ninfx = true\n{line}\n")
    with pytest.raises(pytest.UsageError, match=f"^{message}"):
        _settings(pytester)


def test_a_tolerance_ini_that_can_never_fire_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\ninfx = true\naddopts = -p no:cacheprovider\n"
        "infx_baseline_tolerance =\n    tput_per_gpu: -100%\n"
    )
    result = pytester.runpytest("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: ini infx_baseline_tolerance: 'tput_per_gpu: -100%': tput_per_gpu cannot fall by*"]
    )
