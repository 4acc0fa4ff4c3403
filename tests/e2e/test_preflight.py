from __future__ import annotations

from typing import Any

import yaml

from .conftest import Sweep
from .helpers import fake_command, lit, prompts, recipe, records


def _assert_preflight_errors(sweep: Sweep, n: int, *lines: str) -> None:
    result = sweep.run()
    result.assert_outcomes(errors=n)
    result.stdout.fnmatch_lines(["*preflight failed (no server was started):", *lines])
    assert not sweep.record.exists(), records(sweep.record)


def test_an_invalid_dflash_draft_length_never_starts_a_server(sweep: Sweep) -> None:
    dflash = {"method": "dflash", "draft-subfolder": "dflash", "block-size": 4}
    sweep.add("fake-cpu-vllm", speculative=dflash, draft_lengths=(4,))
    _assert_preflight_errors(
        sweep,
        2,
        "*speedbench.draft-lengths[[]0]: draft length 4 is not valid for dflash with block size 4:"
        " it drafts 1 to 3 tokens; use draft lengths 1 to 3",
    )


def test_thinking_on_kwargs_that_leave_thinking_off_never_start_a_server(sweep: Sweep) -> None:
    sweep.add("fake-cpu-vllm", thinking_modes={"thinking_on": {"thinking": True}})
    _assert_preflight_errors(
        sweep,
        1,
        '*speedbench.thinking-modes.thinking_on: {"thinking": true} does not turn thinking on'
        ' for smollm2 models; use {"enable_thinking": true}',
    )


def test_a_placeholder_row_never_starts_a_server(sweep: Sweep) -> None:
    prompts(sweep.root / "hub.jsonl", placeholder_at=2)
    sweep.add("fake-cpu-vllm", dataset={"category": "coding", "path": "hub.jsonl"})
    _assert_preflight_errors(sweep, 2, "*hub.jsonl:3: question_id 'fake-002' is a placeholder row*")


def test_an_agentic_point_without_its_golden_curve_never_starts_a_server(sweep: Sweep) -> None:
    data: dict[str, Any] = recipe("fake-cpu-vllm-agentic", record=sweep.record)
    del data["speedbench"]
    data["engine"]["command"] = fake_command(sweep.record)
    data["agentic"] = {
        "points": [{"tp": 1, "concurrency": [1, 2]}],
        "speculative": {"method": "ngram", "draft-length": 2, "golden": "missing_curve"},
        "duration": 5,
        "request-count": 2,
        "traces": "builtin",
        "num-dataset-entries": None,
    }
    (sweep.recipes / "agentic.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    _assert_preflight_errors(
        sweep,
        2,
        lit(
            "*fake-cpu-vllm-agentic[tp1-c1]: synthetic acceptance needs its golden curve:"
            "*missing_curve*"
        ),
    )


def test_a_dataset_path_out_of_the_repository_never_starts_a_server(sweep: Sweep) -> None:
    outside = sweep.root.parent / "outside"
    outside.mkdir()
    prompts(outside / "ds.jsonl")
    sweep.add("fake-cpu-vllm", dataset={"category": "coding", "path": "../outside/ds.jsonl"})
    _assert_preflight_errors(
        sweep,
        2,
        lit(
            f"*fake-cpu-vllm.yaml: 'speedbench.dataset.path' is '../outside/ds.jsonl', which"
            f" leads outside {sweep.root.resolve()}; give a path inside {sweep.root.resolve()}"
        ),
    )
