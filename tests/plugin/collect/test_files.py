from __future__ import annotations

import json
import os
import re
import textwrap
from pathlib import Path

import pytest
from core.helpers import agentic, changed, dump, line_of, speedbench, write


def collected(pytester: pytest.Pytester, *args: str) -> list[str]:
    result = pytester.runpytest("--collect-only", "-q", *args)
    assert result.ret == 0, result.stdout.str()
    return [line for line in result.outlines if "::" in line and "infx-lint::" not in line]


def test_speedbench_items_are_draft_length_by_thinking_mode(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    write(recipes / "a.yaml", speedbench("mimo-b300-dflash", draft_lengths=(3, 1)))
    assert collected(pytester, "--gpu", "b300") == [
        "recipes/a.yaml::mimo-b300-dflash[k1-thinking_off]",
        "recipes/a.yaml::mimo-b300-dflash[k1-thinking_on]",
        "recipes/a.yaml::mimo-b300-dflash[k3-thinking_off]",
        "recipes/a.yaml::mimo-b300-dflash[k3-thinking_on]",
    ]


def test_agentic_items_are_tp_by_concurrency(recipes: Path, pytester: pytest.Pytester) -> None:
    write(recipes / "a.yaml", agentic("mimo-b200-agentic", points={4: (32, 1), 2: (8,)}))
    assert collected(pytester, "--gpu", "b200") == [
        "recipes/a.yaml::mimo-b200-agentic[tp2-c8]",
        "recipes/a.yaml::mimo-b200-agentic[tp4-c1]",
        "recipes/a.yaml::mimo-b200-agentic[tp4-c32]",
    ]


def test_ids_are_stable_across_runs_and_sorted_per_recipe(
    mixed_tree: Path, pytester: pytest.Pytester
) -> None:
    first = collected(pytester, "--gpu", "b200")
    second = collected(pytester, "--gpu", "b200")
    assert first == second
    assert len(first) == 10
    by_file: dict[str, list[str]] = {}
    for node_id in first:
        by_file.setdefault(node_id.split("::")[0], []).append(node_id)
    assert list(by_file) == ["recipes/b200/agentic.yaml", "recipes/b200/sb.yaml"]
    tp_conc = [
        tuple(int(n) for n in re.findall(r"\d+", node_id.split("[")[1]))
        for node_id in by_file["recipes/b200/agentic.yaml"]
    ]
    assert len(tp_conc) == 8
    assert tp_conc == sorted(tp_conc)


def test_items_are_functions_selectable_by_id(recipes: Path, pytester: pytest.Pytester) -> None:
    write(recipes / "a.yaml", speedbench("a-b300", draft_lengths=(1, 3)))
    assert collected(pytester, "--gpu", "b300", "-k", "k3 and thinking_on") == [
        "recipes/a.yaml::a-b300[k3-thinking_on]"
    ]
    pytester.makeconftest(
        textwrap.dedent(
            """
            import json

            def pytest_collection_finish(session):
                rows = [
                    [type(i).__name__, i.name, i.originalname, [m.name for m in i.iter_markers()]]
                    for i in session.items
                ]
                (session.config.rootpath / "items.json").write_text(json.dumps(rows))
            """
        )
    )
    collected(pytester, "--gpu", "b300", "-k", "k1-thinking_off")
    ((kind, name, original, markers),) = json.loads((pytester.path / "items.json").read_text())
    assert (kind, name, original) == ("Function", "a-b300[k1-thinking_off]", "a-b300")
    assert "speedbench" in markers and "agentic" not in markers


def test_only_yaml_under_the_recipe_folder_outside_bases_is_collected(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    write(recipes / "a.yaml", speedbench("a-b300", draft_lengths=[1], modes=["thinking_on"]))
    write(recipes / "_base" / "b.yaml", speedbench("base-b300"))
    write(recipes / ".hidden" / "c.yaml", speedbench("hidden-b300"))
    write(pytester.path / "golden" / "x.yaml", speedbench("golden-b300"))
    write(pytester.path / "other.yml", speedbench("other-b300"))
    result = pytester.runpytest("--collect-only", "-q", "--gpu", "b300", ".")
    assert [line for line in result.outlines if "::" in line] == [
        "recipes/a.yaml::a-b300[k1-thinking_on]"
    ]


def test_recipe_folder_from_option(recipes: Path, pytester: pytest.Pytester) -> None:
    write(pytester.path / "bench" / "a.yml", speedbench("a-b300", draft_lengths=[2]))
    write(recipes / "b.yaml", speedbench("b-b300", draft_lengths=[2]))
    ids = collected(pytester, "--gpu", "b300", "--infx-recipes", "bench", "bench")
    assert ids == [
        "bench/a.yml::a-b300[k2-thinking_off]",
        "bench/a.yml::a-b300[k2-thinking_on]",
    ]


def test_bad_file_is_a_collection_error_and_the_others_collect(
    mixed_tree: Path, pytester: pytest.Pytester
) -> None:
    recipe = speedbench("bad-b300")
    recipe["speedbench"]["sampling"]["temprature"] = 0.5
    bad = write(mixed_tree / "bad.yaml", recipe)
    line = line_of(dump(recipe), "temprature")
    result = pytester.runpytest("--collect-only", "-q", "--gpu", "b300")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting recipes/bad.yaml*",
            f"{bad}:{line}: speedbench.sampling.temprature: unknown field",
            "  hint: did you mean 'temperature'? *",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert [n for n in result.outlines if "::" in n] == [
        f"recipes/a-b300.yaml::a-b300[k{k}-{mode}]"
        for k in (1, 3)
        for mode in ("thinking_off", "thinking_on")
    ]
    run = pytester.runpytest("--continue-on-collection-errors", "--gpu", "h100")
    run.assert_outcomes(errors=1, deselected=16)


def test_invalid_override_is_that_files_collection_error(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    recipe = speedbench("o-b300", draft_lengths=(1, 3))
    recipe["overrides"] = [{"when": {"draft-length": 3}, "engine": {"port": 0}}]
    path = write(recipes / "o.yaml", recipe)
    write(recipes / "p.yaml", speedbench("p-b300", draft_lengths=[2]))
    result = pytester.runpytest("--collect-only", "-q", "--gpu", "b300")
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting recipes/o.yaml*",
            f"{path}:{line_of(dump(recipe), 'port: 0')}: engine.port: *greater than or equal to 1*",
        ]
    )
    assert [n for n in result.outlines if "::" in n] == [
        "recipes/p.yaml::p-b300[k2-thinking_off]",
        "recipes/p.yaml::p-b300[k2-thinking_on]",
    ]


def test_duplicate_key_fails_the_second_file_only(recipes: Path, pytester: pytest.Pytester) -> None:
    write(recipes / "a.yaml", speedbench("same-b300", draft_lengths=[1]))
    second = write(recipes / "b.yaml", speedbench("same-b300", draft_lengths=[2]))
    result = pytester.runpytest("--collect-only", "-q", "--gpu", "b300")
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting recipes/b.yaml*",
            f"{second}:1: key: duplicate recipe key 'same-b300' (also in *a.yaml:1)",
        ]
    )
    assert [n for n in result.outlines if "::" in n] == [
        "recipes/a.yaml::same-b300[k1-thinking_off]",
        "recipes/a.yaml::same-b300[k1-thinking_on]",
    ]


RECORDING_CONFTEST = """
import json
import os
import os

import pytest


class Recorder:
    def __init__(self, request):
        self.node_id = request.node.nodeid

    def run(self):
        row = {"id": self.node_id, "worker": os.environ.get("PYTEST_XDIST_WORKER")}
        with open(os.environ["INFX_RAN"], "a") as out:
            out.write(json.dumps(row) + "\\n")


@pytest.fixture
def infx_speedbench(request):
    return Recorder(request)


@pytest.fixture
def infx_runnable(request):
    return Recorder(request)
"""


def test_two_xdist_workers_collect_the_same_items_and_run_each_once(
    mixed_tree: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(6):
        recipe = changed(
            speedbench(f"s{n}-b200", runner="b200"), "speedbench.draft-lengths", [7, n + 1]
        )
        write(mixed_tree / f"extra{n}.yaml", recipe)
    write(mixed_tree / "extra-agentic.yaml", agentic("x-b200-agentic", points={8: (64, 2)}))
    pytester.makeconftest(RECORDING_CONFTEST)
    ran = pytester.path / "ran.jsonl"
    monkeypatch.setenv("INFX_RAN", str(ran))
    expected = collected(pytester, "--gpu", "b200")
    assert len(expected) == 10 + 24 + 2
    result = pytester.runpytest_subprocess("-n", "2", "--gpu", "b200")
    assert "Different tests were collected" not in result.stdout.str()
    result.assert_outcomes(passed=len(expected))
    rows = [json.loads(line) for line in ran.read_text().splitlines()]
    assert sorted(row["id"] for row in rows) == sorted(expected)
    assert {row["worker"] for row in rows} == {"gw0", "gw1"}


def test_rootdir_reached_through_a_symlink_still_collects(
    recipes: Path, pytester: pytest.Pytester, tmp_path: Path
) -> None:
    write(recipes / "a.yaml", speedbench("a-b300", draft_lengths=[1], modes=["thinking_on"]))
    link = tmp_path / "link"
    link.symlink_to(pytester.path, target_is_directory=True)
    result = pytester.runpytest("--collect-only", "-q", "--gpu", "b300", str(link / "recipes"))
    assert [n.split("::")[1] for n in result.outlines if "::" in n] == ["a-b300[k1-thinking_on]"]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("speedbench.draft-lengths", [1, 3, 1], "draft length 1 is listed twice"),
        ("engine.args", {"tensor_parallel_size": 8}, "pytest-infx sets this flag itself"),
        ("overrides", [{"when": {"draft-length": 9}, "tp": 8}], "matches no point"),
    ],
)
def test_a_new_load_error_is_reported_on_warm_runs(
    mixed_tree: Path, pytester: pytest.Pytester, field: str, value: object, message: str
) -> None:
    path = mixed_tree / "a-b300.yaml"
    assert len(collected(pytester, "--gpu", "b300")) == 4
    recipe = changed(speedbench("a-b300", draft_lengths=(3, 1)), field, value)
    write(path, recipe)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    for _ in range(2):
        result = pytester.runpytest("--collect-only", "-q", "--gpu", "b300")
        assert result.ret == pytest.ExitCode.INTERRUPTED
        assert f"{path}:" in result.stdout.str()
        assert message in result.stdout.str()
    write(path, speedbench("a-b300", draft_lengths=(3, 1)))
    assert len(collected(pytester, "--gpu", "b300")) == 4


@pytest.mark.parametrize(
    ("markexpr", "marks"),
    [
        ("speedbench", {"speedbench"}),
        ("speedbench or agentic", {"speedbench", "agentic"}),
        ("speedbench and not slow", {"speedbench"}),
        ("(speedbench or fixed_seq_len) and (a or not b)", {"speedbench", "fixed_seq_len"}),
        ("speedbench or slurm", set()),
        ("not speedbench", set()),
        ("speedbench or not lint", set()),
        ("lint", set()),
        ("speedbench or (a and not b)", set()),
    ],
)
def test_which_expressions_select_only_recipe_items(markexpr: str, marks: set[str]) -> None:
    from pytest_infx.plugin.collect.files import recipe_marks_only

    assert recipe_marks_only(markexpr) == marks


def test_a_recipe_only_selection_imports_no_test_module_that_cannot_carry_its_marker(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    write(recipes / "mimo.yaml", speedbench("mimo-b300-dflash", draft_lengths=[1]))
    tests = pytester.path / "tests"
    tests.mkdir()
    (tests / "test_heavy.py").write_text(
        "import package_that_is_not_installed\n\ndef test_needs_it():\n    pass\n"
    )
    (tests / "test_own.py").write_text(
        "import pytest\n\n@pytest.mark.speedbench\ndef test_own_bench():\n    pass\n"
    )
    plan = ("--collect-only", "-q", "--gpu", "b300", "--infx-plan", "tests", "recipes")
    result = pytester.runpytest("-m", "speedbench", *plan)
    assert result.ret == 0, result.stdout.str()
    assert "package_that_is_not_installed" not in result.stdout.str()
    result.stdout.fnmatch_lines(["tests/test_own.py::test_own_bench", "3 tests collected*"])
    widened = pytester.runpytest("-m", "speedbench or heavy", *plan)
    widened.stdout.fnmatch_lines(["*ModuleNotFoundError*package_that_is_not_installed*"])
