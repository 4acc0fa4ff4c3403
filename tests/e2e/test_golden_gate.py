from __future__ import annotations

import pytest

from pytest_infx.golden.io import load_curve

from .conftest import Sweep
from .fake_vllm import DEFAULT_PATTERN, expected_al
from .helpers import CURVE, MODES, lit

KS = (1, 2)
KEY = "fake-cpu-vllm"


def _measured(k: int) -> float:
    return round(expected_al(DEFAULT_PATTERN, k), 2)


def test_a_cell_off_by_more_than_the_tolerance_fails_with_the_numbers(sweep: Sweep) -> None:
    sweep.add(KEY, draft_lengths=KS)
    sweep.commit_golden({m: {1: _measured(1) + 0.3, 2: _measured(2)} for m in MODES})
    result = sweep.run()
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            f"*golden curve {CURVE} (*{CURVE}.yaml) drifted:",
            "*1 of 1 compared cells out of tolerance 0.05 AL*",
            f"*k=1 thinking_off: golden {_measured(1) + 0.3:.2f}, measured {_measured(1):.2f},"
            " delta -0.30, allowed 0.05",
        ]
    )
    result.stdout.fnmatch_lines([lit(f"FAILED recipes/{KEY}.yaml::{KEY}[k1-thinking_on]*")])
    result.stdout.fnmatch_lines([f"  1 *{_measured(1):.2f}* *{_measured(1):.2f}*"])
    cell = sweep.cell(f"{KEY}[k1-thinking_off]")
    assert cell["verdict"] == "fail" and cell["golden"]["ok"] is False
    assert cell["golden"]["largest_delta"] == pytest.approx(-0.3)


def test_a_cell_within_the_tolerance_passes_and_leaves_the_file_alone(sweep: Sweep) -> None:
    sweep.add(KEY, draft_lengths=KS)
    path = sweep.commit_golden({m: {k: _measured(k) + 0.03 for k in KS} for m in MODES})
    before = path.read_bytes()
    result = sweep.run()
    result.assert_outcomes(passed=4)
    assert path.read_bytes() == before
    assert sweep.cell(f"{KEY}[k2-thinking_on]")["golden"]["largest_delta"] == pytest.approx(-0.03)


def test_snapshot_update_writes_a_missing_curve(sweep: Sweep) -> None:
    sweep.add(KEY, draft_lengths=KS)
    missing = sweep.run()
    missing.assert_outcomes(errors=4)
    missing.stdout.fnmatch_lines(
        [f"*no golden curve '{CURVE}' in *; record it with --snapshot-update or name an existing*"]
    )
    assert not (sweep.golden / f"{CURVE}.yaml").exists()
    assert not sweep.record.exists(), "a cell without a curve to gate on started no server"
    sweep.run("--snapshot-update").assert_outcomes(passed=4)
    curve = load_curve(sweep.golden / f"{CURVE}.yaml")
    assert {m: dict(curve.modes[m]) for m in MODES} == {
        m: {k: _measured(k) for k in KS} for m in MODES
    }
    assert curve.header.dataset == "prompts/coding" and curve.header.tp == 1
    sweep.run().assert_outcomes(passed=4)


def test_snapshot_update_records_every_cell_as_passing(sweep: Sweep) -> None:
    sweep.add(KEY, draft_lengths=KS)
    result = sweep.run("--snapshot-update")
    result.assert_outcomes(passed=4)
    verdicts = {(k, m): sweep.cell(f"{KEY}[k{k}-{m}]")["verdict"] for k in KS for m in MODES}
    assert set(verdicts.values()) == {"pass"}, verdicts
    golden = sweep.cell(f"{KEY}[k2-thinking_on]")["golden"]
    assert (golden["ok"], golden["recorded"], golden["lines"]) == (True, True, [])
    table = result.stdout.str().split("infx acceptance length")[1].split("snapshot report")[0]
    rows = [line for line in table.splitlines() if line[:3] in ("  1", "  2")]
    assert len(rows) == len(KS) and not any("*" in row for row in rows), rows


def test_a_golden_name_close_to_an_existing_curve_fails_before_any_server(sweep: Sweep) -> None:
    typo = CURVE[:-1]
    sweep.add(KEY, draft_lengths=KS, golden=typo)
    sweep.commit_golden({m: {k: _measured(k) for k in KS} for m in MODES})
    result = sweep.run("--snapshot-update")
    result.assert_outcomes(errors=4)
    result.stdout.fnmatch_lines(
        [
            "*preflight failed (no server was started):",
            f"*recipes/{KEY}.yaml:*: speedbench.golden: no golden curve '{typo}' in *,"
            f" and the name is close to '{CURVE}': a typo would record a new, misnamed curve;"
            " name the existing curve, or, to start a new curve with this name on purpose, add"
            " its row to */golden/README.md first, then record it with --snapshot-update",
        ]
    )
    assert not (sweep.golden / f"{typo}.yaml").exists()
    assert not sweep.record.exists()


def test_a_close_new_curve_listed_in_the_registry_is_recorded(sweep: Sweep) -> None:
    new = CURVE + "2"
    sweep.add(KEY, draft_lengths=KS, golden=new)
    sweep.commit_golden({m: {k: _measured(k) for k in KS} for m in MODES})
    (sweep.golden / "README.md").write_text(
        "| Model | Method | Golden YAML | Source run |\n|---|---|---|---|\n"
        f"| SmolLM2 | ngram | [{new}.yaml]({new}.yaml) | pending |\n"
    )
    sweep.run("--snapshot-update").assert_outcomes(passed=4)
    assert load_curve(sweep.golden / f"{new}.yaml").modes.keys() == set(MODES)


def test_a_drift_failure_says_what_drifted_in_a_few_lines_without_plugin_source(
    sweep: Sweep,
) -> None:
    sweep.add(KEY, draft_lengths=(1,))
    sweep.commit_golden({m: {1: _measured(1) + 0.3} for m in MODES})
    result = sweep.run("-p", "no:randomly")
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    failures = out.split("= FAILURES =", 1)[1].split("infx report:", 1)[0]
    sections = [s for s in failures.split("\n_") if "drifted" in s]
    assert len(sections) == 2
    for section in sections:
        lines = [line for line in section.splitlines() if line.strip()]
        assert len(lines) <= 12, section
        assert "pytest_infx" not in section and "def " not in section, section
        assert f"golden {_measured(1) + 0.3:.2f}, measured {_measured(1):.2f}" in section
