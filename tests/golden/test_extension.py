from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_infx.golden.curve import Curve, Provenance
from pytest_infx.golden.io import dump_curve, load_curve

pytest_plugins = ["pytester"]

GATE_TEST = """
import json
from pathlib import Path

import pytest

from pytest_infx.golden.curve import Curve, Provenance
from pytest_infx.golden.extension import assert_curve

CASES = json.loads(Path(__file__).with_name("cases.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_gate(snapshot, case):
    measured = Curve(
        name=case["curve"],
        model_key=case["model_key"],
        modes={
            mode: {int(k): al for k, al in cells.items()} for mode, cells in case["modes"].items()
        },
        header=Provenance(source=case.get("source", ""), dataset="coding", dataset_n=80),
    )
    assert_curve(
        snapshot,
        measured,
        tolerance=case.get("tolerance"),
        stderr={(mode, k): value for mode, k, value in case.get("stderr", [])},
        partial=case.get("partial", False),
        rebaseline=case.get("rebaseline", False),
    )
"""

GOLDEN = Curve(
    name="demo_mtp",
    model_key="demo-model",
    modes={
        "thinking_on": {1: 1.80, 2: 2.40, 3: 2.90},
        "thinking_off": {1: 1.70, 2: 2.20, 3: 2.60},
    },
    header=Provenance(source="https://github.com/o/r/actions/runs/1", dataset="coding"),
)
OTHER = Curve(
    name="other_eagle3",
    model_key="other-model",
    modes={"thinking_on": {1: 1.75, 2: 2.30}},
    header=Provenance(source="https://github.com/o/r/actions/runs/2", reference=True),
)
NEW_SOURCE = "https://github.com/o/r/actions/runs/99"
RELATE_WARNING_IS_AN_ERROR = (
    "[pytest]\ninfx = true\nfilterwarnings = error:\\s*Can not relate snapshot:UserWarning\n"
)

Run = Callable[..., pytest.RunResult]


def cells(curve: Curve, **changes: float) -> dict[str, dict[str, float | None]]:
    """The curve's cells as JSON, with ``on2=2.5`` style overrides (mode on/off, then k)."""
    out: dict[str, dict[str, float | None]] = {}
    for mode, k, al in curve.cells():
        out.setdefault(mode, {})[str(k)] = al
    for key, value in changes.items():
        mode = "thinking_on" if key.startswith("on") else "thinking_off"
        out.setdefault(mode, {})[key.removeprefix("on").removeprefix("off")] = value
    return out


def case(case_id: str, modes: dict[str, dict[str, float | None]], **extra: Any) -> dict[str, Any]:
    return {
        "id": case_id,
        "curve": "demo_mtp",
        "model_key": "demo-model",
        "modes": modes,
        "source": NEW_SOURCE,
        **extra,
    }


@pytest.fixture(params=["inprocess", "xdist"])
def run(request: pytest.FixtureRequest, pytester: pytest.Pytester) -> Run:
    pytester.makeini(RELATE_WARNING_IS_AN_ERROR)
    pytester.makepyfile(test_gate=GATE_TEST)

    def _run(*args: str) -> pytest.RunResult:
        base = ("-p", "no:infx", "-p", "no:cacheprovider")
        if request.param == "xdist":
            return pytester.runpytest_subprocess("-n", "2", *base, *args)
        return pytester.runpytest(*base, *args)

    return _run


def setup(pytester: pytest.Pytester, cases: list[dict[str, Any]], *curves: Curve) -> Path:
    golden = pytester.path / "golden"
    golden.mkdir(exist_ok=True)
    for curve in curves:
        (golden / f"{curve.name}.yaml").write_text(dump_curve(curve))
    (pytester.path / "cases.json").write_text(json.dumps(cases))
    return golden


def test_identical_curve_passes_and_header_is_ignored(pytester: pytest.Pytester, run: Run) -> None:
    golden = setup(pytester, [case("same", cells(GOLDEN))], GOLDEN)
    before = (golden / "demo_mtp.yaml").read_bytes()
    result = run("--snapshot-update")
    result.assert_outcomes(passed=1)
    assert (golden / "demo_mtp.yaml").read_bytes() == before
    assert "Can not relate" not in result.stdout.str()


def test_in_tolerance_drift_passes_and_leaves_the_file_byte_identical(
    pytester: pytest.Pytester, run: Run
) -> None:
    drift = cells(GOLDEN, on1=1.85, on3=2.86, off2=2.25)
    golden = setup(pytester, [case("drift", drift)], GOLDEN)
    before = (golden / "demo_mtp.yaml").read_bytes()
    run().assert_outcomes(passed=1)
    run("--snapshot-update").assert_outcomes(passed=1)
    assert (golden / "demo_mtp.yaml").read_bytes() == before


def test_out_of_tolerance_drift_fails_listing_only_the_drifted_cells(
    pytester: pytest.Pytester, run: Run
) -> None:
    drift = cells(GOLDEN, on2=2.50, on1=1.83, off3=2.40)
    golden = setup(pytester, [case("drift", drift)], GOLDEN)
    before = (golden / "demo_mtp.yaml").read_bytes()
    result = run()
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "2 of 6 compared cells out of tolerance 0.05 AL" in output
    assert "k=2 thinking_on: golden 2.40, measured 2.50, delta +0.10, allowed 0.05" in output
    assert "k=3 thinking_off: golden 2.60, measured 2.40, delta -0.20, allowed 0.05" in output
    assert "k=1 thinking_on:" not in output
    assert "k=1 thinking_off:" not in output
    assert (golden / "demo_mtp.yaml").read_bytes() == before


def test_missing_cells_fail_with_their_own_messages(pytester: pytest.Pytester, run: Run) -> None:
    modes = cells(GOLDEN, on4=3.20)
    del modes["thinking_off"]["3"]
    setup(pytester, [case("missing", modes)], GOLDEN)
    result = run()
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "k=3 thinking_off is in the golden curve but was not measured" in output
    assert "k=4 thinking_on was measured but not in the golden curve" in output
    assert "0 of 5 compared cells out of tolerance" in output


def test_snapshot_update_creates_the_file_with_its_header(
    pytester: pytest.Pytester, run: Run
) -> None:
    golden = setup(pytester, [case("new", cells(GOLDEN))])
    result = run()
    result.assert_outcomes(failed=1)
    assert "golden curve demo_mtp does not exist" in result.stdout.str()
    assert not (golden / "demo_mtp.yaml").exists()
    run("--snapshot-update").assert_outcomes(passed=1)
    text = (golden / "demo_mtp.yaml").read_text()
    assert text.splitlines()[0] == f"# Source GitHub Actions run: {NEW_SOURCE}"
    assert "# dataset: coding" in text
    assert "# dataset_n: 80" in text
    assert load_curve(golden / "demo_mtp.yaml").modes == GOLDEN.modes
    assert list(golden.iterdir()) == [golden / "demo_mtp.yaml"]
    run().assert_outcomes(passed=1)


def test_snapshot_update_rewrites_only_the_drifted_cells(
    pytester: pytest.Pytester, run: Run
) -> None:
    drift = cells(GOLDEN, on2=2.70, off1=1.73)
    golden = setup(pytester, [case("drift", drift)], GOLDEN)
    result = run("--snapshot-update")
    result.assert_outcomes(passed=1)
    updated = load_curve(golden / "demo_mtp.yaml")
    assert updated.al("thinking_on", 2) == 2.70
    assert updated.al("thinking_off", 1) == 1.70
    assert updated.header.source == NEW_SOURCE
    run().assert_outcomes(passed=1)


def test_snapshot_update_keeps_every_comment_line_of_the_body(
    pytester: pytest.Pytester, run: Run
) -> None:
    golden = setup(pytester, [case("drift", cells(GOLDEN, on2=2.70))])
    body = [
        "# rerun 2026-11-02 after the driver update",
        "demo-model:  # served as demo-model-rl",
        "  # thinking on: 80 coding prompts",
        "  thinking_on:",
        "    1: 1.80  # stable across three runs",
        "    # k=2 was 2.38 on the first run",
        "    2: 2.40",
        "    3: 2.90",
        "  thinking_off:",
        "    # k=1 measured twice",
        "    1: 1.70",
        "    2: 2.20",
        "    3: 2.60",
        "# end of curve",
    ]
    head = dump_curve(GOLDEN).split("demo-model:")[0]
    path = golden / "demo_mtp.yaml"
    path.write_text(head + "\n".join(body) + "\n")
    run("--snapshot-update").assert_outcomes(passed=1)
    text = path.read_text()
    assert load_curve(path).al("thinking_on", 2) == 2.70
    for line in body:
        if "#" in line:
            assert line.split("#", 1)[1] in text, line
    lines = text.splitlines()
    assert lines[lines.index("    # k=2 was 2.38 on the first run") + 1] == "    2: 2.70"
    assert "    1: 1.80  # stable across three runs" in lines
    assert lines[lines.index("    # k=1 measured twice") + 1] == "    1: 1.70"
    assert lines[-1] == "# end of curve"
    run().assert_outcomes(passed=1)


def test_other_golden_files_survive_an_update_of_a_subset(
    pytester: pytest.Pytester, run: Run
) -> None:
    other_case = {**case("other", cells(OTHER)), "curve": OTHER.name, "model_key": "other-model"}
    golden = setup(pytester, [case("drift", cells(GOLDEN, on2=2.90)), other_case], GOLDEN, OTHER)
    (golden / "README.md").write_text("| Model | Method | Golden YAML | Source run |\n")
    stray = golden / "stray_mtp.yaml"
    stray.write_text(
        dump_curve(Curve(name="stray_mtp", model_key="m", modes={"thinking_on": {1: 2.0}}))
    )
    kept = {path.name: path.read_bytes() for path in (golden / "other_eagle3.yaml", stray)}
    result = run("--snapshot-update", "-k", "drift")
    result.assert_outcomes(passed=1)
    assert "unused" not in result.stdout.str().lower()
    assert load_curve(golden / "demo_mtp.yaml").al("thinking_on", 2) == 2.90
    result = run("--snapshot-update", "-k", "drift or other")
    result.assert_outcomes(passed=2)
    result = run("--snapshot-update")
    result.assert_outcomes(passed=2)
    assert "deleted" not in result.stdout.str()
    assert {name: (golden / name).read_bytes() for name in kept} == kept
    assert sorted(p.name for p in golden.iterdir()) == [
        "README.md",
        "demo_mtp.yaml",
        "other_eagle3.yaml",
        "stray_mtp.yaml",
    ]


def test_rebaseline_records_in_tolerance_drift(pytester: pytest.Pytester, run: Run) -> None:
    drift = cells(GOLDEN, on1=1.82)
    golden = setup(pytester, [case("rebase", drift, rebaseline=True)], GOLDEN)
    result = run()
    result.assert_outcomes(failed=1)
    assert "delta +0.02, allowed 0.00" in result.stdout.str()
    run("--snapshot-update").assert_outcomes(passed=1)
    assert load_curve(golden / "demo_mtp.yaml").al("thinking_on", 1) == 1.82


def test_parallel_partial_cells_all_land_in_one_file(pytester: pytest.Pytester, run: Run) -> None:
    single = [
        case(f"{mode}-k{k}", {mode: {str(k): al}}, partial=True) for mode, k, al in GOLDEN.cells()
    ]
    golden = setup(pytester, single)
    run("--snapshot-update").assert_outcomes(passed=6)
    assert load_curve(golden / "demo_mtp.yaml").modes == GOLDEN.modes
    assert [p.name for p in golden.iterdir()] == ["demo_mtp.yaml"]
    run().assert_outcomes(passed=6)


def test_stderr_and_caller_tolerance_reach_the_comparison(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_gate=GATE_TEST)
    drift = cells(GOLDEN, on2=2.50)
    setup(
        pytester,
        [
            case("noisy", drift, stderr=[["thinking_on", 2, 0.03]]),
            case("loose", drift, tolerance=0.2),
            case("tight", cells(GOLDEN, on1=1.82), tolerance=0.01),
        ],
        GOLDEN,
    )
    result = pytester.runpytest("-p", "no:infx", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    assert "k=1 thinking_on: golden 1.80, measured 1.82, delta +0.02, allowed 0.01" in (
        result.stdout.str()
    )


def test_header_tolerance_is_used_when_the_caller_gives_none(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_gate=GATE_TEST)
    loose = Curve(
        name=GOLDEN.name,
        model_key=GOLDEN.model_key,
        modes=GOLDEN.modes,
        header=Provenance(source="desc", tolerance=0.15),
    )
    setup(pytester, [case("drift", cells(GOLDEN, on2=2.50))], loose)
    pytester.runpytest("-p", "no:infx", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_broken_golden_file_fails_with_its_line_and_is_not_overwritten(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_gate=GATE_TEST)
    golden = setup(pytester, [case("same", cells(GOLDEN))])
    broken = "demo-model:\n  thinking_on:\n    1: 1.80\n    1: 1.90\n"
    (golden / "demo_mtp.yaml").write_text(broken)
    result = pytester.runpytest("-p", "no:infx", "-p", "no:cacheprovider", "--snapshot-update")
    result.assert_outcomes(failed=1)
    assert "demo_mtp.yaml:4: duplicate key 1 (first on line 3)" in result.stdout.str()
    assert (golden / "demo_mtp.yaml").read_text() == broken


def test_a_model_key_change_is_a_mismatch(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_gate=GATE_TEST)
    setup(pytester, [{**case("renamed", cells(GOLDEN)), "model_key": "demo-model-v2"}], GOLDEN)
    result = pytester.runpytest("-p", "no:infx", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert "model key: golden 'demo-model', measured 'demo-model-v2'" in result.stdout.str()


def test_the_folder_given_is_where_curves_are_read_and_recorded(
    pytester: pytest.Pytester,
) -> None:
    """The caller passes the run's golden folder; the extension reads no setting itself, so
    an ``infx_golden`` ini that only the extension would see moves nothing."""
    folder = pytester.path / "curves" / "al"
    pytester.makepyfile(
        test_gate=GATE_TEST.replace(
            'rebaseline=case.get("rebaseline", False),',
            f'rebaseline=case.get("rebaseline", False), folder=Path({str(folder)!r}),',
        )
    )
    pytester.makeconftest(
        "def pytest_addoption(parser):\n"
        "    parser.addini('infx_golden', 'golden folder', default='golden')\n"
    )
    pytester.makeini("[pytest]\ninfx = true\ninfx_golden = elsewhere\n")
    setup(pytester, [case("new", cells(GOLDEN))])
    args = ("-p", "no:infx", "-p", "no:cacheprovider", "--snapshot-update")
    pytester.runpytest(*args).assert_outcomes(passed=1)
    assert load_curve(folder / "demo_mtp.yaml").modes == GOLDEN.modes
    assert not (pytester.path / "elsewhere").exists()
    assert not (pytester.path / "golden" / "demo_mtp.yaml").exists()
    golden_on2 = GOLDEN.al("thinking_on", 2)
    assert golden_on2 is not None
    drifted = cells(GOLDEN, on2=golden_on2 + 0.5)
    (pytester.path / "cases.json").write_text(json.dumps([case("drift", drifted)]))
    result = pytester.runpytest("-p", "no:infx", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*golden curve demo_mtp ({folder}/demo_mtp.yaml) drifted:*"])


def test_a_partial_update_keeps_the_provenance_of_the_cells_it_did_not_measure(
    pytester: pytest.Pytester, run: Run
) -> None:
    golden = setup(pytester, [case("one", {"thinking_on": {"2": 2.70}}, partial=True)], GOLDEN)
    run("--snapshot-update").assert_outcomes(passed=1)
    text = (golden / "demo_mtp.yaml").read_text()
    updated = load_curve(golden / "demo_mtp.yaml")
    assert updated.al("thinking_on", 2) == 2.70 and updated.al("thinking_off", 1) == 1.70
    assert updated.header.source == NEW_SOURCE
    assert (
        "# not re-recorded (k=1 thinking_on, k=3 thinking_on, k=1 thinking_off, k=2 thinking_off,"
        " k=3 thinking_off), recorded with: Source GitHub Actions run:"
        f" {GOLDEN.header.source}"
    ) in text.splitlines()
    run("--snapshot-update").assert_outcomes(passed=1)
    assert (golden / "demo_mtp.yaml").read_text() == text
