"""Engine adapters from outside the package: a conftest hook and an installed entry point."""

from __future__ import annotations

from pathlib import Path

import pytest
from core.helpers import speedbench, write

ADAPTER = """
from pytest_infx.engines.base import make_plan, speculation


class LmdeployAdapter:
    name = NAME

    def plan(self, point, paths, *, synthetic=None, embedded_python=None):
        _, k = speculation(point)
        argv = ["lmdeploy-serve", paths.target, "--port", "{port}", "--tp_size", str(point.tp)]
        argv += ["--spec-draft-len", str(k)]
        return make_plan(self.name, point, argv, {"LMDEPLOY_FROM": SOURCE}, k)

    async def rendered_prompt(self, base_url, *, model, messages, chat_template_kwargs,
                              timeout_s=60.0):
        return None
"""

HOOK = """

def pytest_infx_register_engines():
    return [LmdeployAdapter]
"""

PLAN = ("--collect-only", "-q", "--gpu", "b300", "--infx-plan")


def _adapter(name: str = "lmdeploy", source: str = "conftest") -> str:
    return ADAPTER.replace("NAME", repr(name)).replace("SOURCE", repr(source))


@pytest.fixture
def provided_recipe(recipes: Path) -> Path:
    return write(
        recipes / "t.yaml", speedbench("t-b300-lmdeploy", engine="lmdeploy", draft_lengths=[2])
    )


def test_a_conftest_hook_adds_an_engine(provided_recipe: Path, pytester: pytest.Pytester) -> None:
    pytester.makeconftest(_adapter() + HOOK)
    result = pytester.runpytest(*PLAN)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "t-b300-lmdeploy[[]k2-thinking_off[]]  (fingerprint *",
            "  server * (lmdeploy, image lmdeploy/*, 4 GPU(s), port 8888 preferred)",
            "    argv: lmdeploy-serve '$MODEL_ROOT/MiMo-V2.6-Flash-RL' --port '{port}' --tp_size 4 "
            "--spec-draft-len 2",
            "    env: LMDEPLOY_FROM=conftest",
        ]
    )


def test_a_provided_engine_may_have_a_name_pytest_infx_does_not_know(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    write(recipes / "t.yaml", speedbench("t-b300-tgi", engine="tgi", draft_lengths=[2]))
    pytester.makeconftest(_adapter("tgi") + HOOK)
    result = pytester.runpytest(*PLAN)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(["  server * (tgi, image tgi/*", "    argv: lmdeploy-serve *"])


def test_an_engine_no_adapter_provides_is_an_error_at_the_recipe_line(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    path = write(recipes / "t.yaml", speedbench("t-b300", engine="sglng", draft_lengths=[2]))
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "sglng" in text)
    result = pytester.runpytest(*PLAN)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        [f"*{path}:{line}: engine.name: no engine 'sglng'; did you mean 'sglang'? engines: *"]
    )
    pytester.makeconftest(_adapter("sglng") + HOOK)
    assert pytester.runpytest(*PLAN).ret == 0


def test_without_an_adapter_the_recipe_error_says_how_to_add_one(
    provided_recipe: Path, pytester: pytest.Pytester
) -> None:
    result = pytester.runpytest(*PLAN)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        [
            "*t.yaml:*: engine.name: no engine 'lmdeploy'; engines: *",
            "  hint: name one of those engines, or install the package that provides its adapter",
        ]
    )


def test_an_installed_entry_point_adds_an_engine(
    provided_recipe: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A separately installed package (here a distribution on PYTHONPATH, with its own
    ``entry_points.txt``) provides the adapter; nothing in pytest-infx names it."""
    site = pytester.path / "site"
    (site / "infx_lmdeploy").mkdir(parents=True)
    (site / "infx_lmdeploy" / "__init__.py").write_text(_adapter(source="entry point"))
    info = site / "infx_lmdeploy-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: infx-lmdeploy\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[pytest_infx_engines]\nlmdeploy = infx_lmdeploy:LmdeployAdapter\n"
    )
    monkeypatch.setenv("PYTHONPATH", str(site))
    result = pytester.runpytest_subprocess(*PLAN)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(
        ["    argv: lmdeploy-serve *", "    env: LMDEPLOY_FROM='entry point'"]
    )


@pytest.mark.parametrize(
    ("conftest", "message"),
    [
        (
            _adapter("vllm") + HOOK,
            "ERROR: pytest_infx_register_engines in */conftest.py: engine 'vllm' is already "
            "provided by pytest-infx itself; *",
        ),
        (
            "class Half:\n    name = 'atom'\n" + HOOK.replace("LmdeployAdapter", "Half"),
            "ERROR: pytest_infx_register_engines in */conftest.py: <class 'conftest.Half'> is "
            "not an engine adapter: it lacks `plan()`, `rendered_prompt()` *",
        ),
    ],
    ids=["taken-name", "not-an-adapter"],
)
def test_a_bad_provider_stops_the_run_naming_itself(
    provided_recipe: Path, pytester: pytest.Pytester, conftest: str, message: str
) -> None:
    pytester.makeconftest(conftest)
    result = pytester.runpytest(*PLAN)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_two_providers_of_one_engine_are_refused(
    provided_recipe: Path, pytester: pytest.Pytester
) -> None:
    pytester.makeconftest(_adapter() + HOOK)
    pytester.makepyfile(other_plugin=_adapter(source="plugin") + HOOK)
    pytester.syspathinsert()
    result = pytester.runpytest("-p", "other_plugin", *PLAN)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: pytest_infx_register_engines in *: engine 'lmdeploy' is already provided by "
            "pytest_infx_register_engines in *; *"
        ]
    )
