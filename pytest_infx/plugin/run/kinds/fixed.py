"""The pytest side of a fixed-seq-len point: make the random prompts, measure them against the
point's server, write the raw and processed files in InferenceX's shapes and our record, gate
it, and stand in for it with its stored result when ``--infx-resume`` reuses it.

The files are written before the checks run, so a point that fails them still leaves its
numbers and its errors for the reviewer. What a point needs to run (the tokenizer, NumPy) is
imported inside the functions that run it, so collection stays light.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_infx.plugin.output.summary import FIXED_PROPERTY
from pytest_infx.plugin.run.kinds.base import StandsInWithRecord

if TYPE_CHECKING:
    from pytest_infx.fixedseq.prompts import RandomPrompts
    from pytest_infx.launch import ServerHandle
    from pytest_infx.plugin.collect.items import Runnable
    from pytest_infx.plugin.run.session import Run
    from pytest_infx.prepare.preflight import Datasets
    from pytest_infx.recipes.points import Point
    from pytest_infx.recipes.schema import FixedSeqLen
    from pytest_infx.results.records import Record


@dataclass
class FixedSeqLenPoint:
    point: Point
    block: FixedSeqLen
    server: ServerHandle
    run_ctx: Run
    request: pytest.FixtureRequest

    def prompts(self) -> RandomPrompts:
        from pytest_infx.fixedseq.chat import ChatTemplateError, chat_for
        from pytest_infx.fixedseq.prompts import HubTokenizer, TokenizerError, random_prompts

        point, block = self.point, self.block
        assert point.isl is not None and point.osl is not None
        folder = Path(self.run_ctx.model_dir(point))
        try:
            tokenizer = HubTokenizer.load(folder)
            chat = chat_for(block.chat_template, folder)
            return random_prompts(
                tokenizer,
                input_len=point.isl,
                output_len=point.osl,
                num_prompts=block.prompts_per_concurrency * point.concurrency,
                range_ratio=block.random_range_ratio,
                seed=block.seed,
                workers=block.prompt_workers,
                chat=chat,
            )
        except (TokenizerError, ChatTemplateError, ValueError) as exc:
            pytest.fail(f"{point.id}: {exc}", pytrace=False)

    def run(self) -> None:
        __tracebackhide__ = True
        from pytest_infx.files.atomic import atomic_write_json
        from pytest_infx.fixedseq.checks import check
        from pytest_infx.fixedseq.client import FixedClientConfig, run_requests_sync
        from pytest_infx.fixedseq.record import fixed_record, median_pass, with_passes
        from pytest_infx.fixedseq.results import RunInfo, power_report, processed, raw_result
        from pytest_infx.results.records import ServerInfo

        point, block, run = self.point, self.block, self.run_ctx
        recipe = point.recipe
        prompts = self.prompts()
        requests = prompts.requests
        config = FixedClientConfig(
            base_url=self.server.base_url,
            model=recipe.model.served_name,
            concurrency=point.concurrency,
            warmups=block.warmups_per_concurrency * point.concurrency,
            total_timeout_s=block.request_timeout,
            connections=block.connections,
        )
        tracker = run.progress
        repeats = block.repeats or run.settings.history.repeats
        outcomes = []
        with (
            run.measuring(self.server, point),
            tracker.doing("cell", point.id, total=len(requests) * repeats),
        ):
            for _ in range(repeats):
                outcomes.append(
                    run_requests_sync(
                        config,
                        requests,
                        on_done=lambda o: tracker.request_done(o.output_tokens, ok=o.success),
                    )
                )
        identity = run.identity(point)
        info = RunInfo(
            model_id=recipe.model.hub_id,
            tokenizer_id=recipe.model.hub_id,
            num_prompts=len(requests),
            max_concurrency=point.concurrency,
            backend=identity.framework,
        )
        raws = [raw_result(info, requests, outcome) for outcome in outcomes]
        aggs = [processed(identity, raw) for raw in raws]
        chosen = median_pass(aggs)
        outcome, raw, agg = outcomes[chosen], raws[chosen], aggs[chosen]
        layout = run.layout
        raw_path = layout.fixed_raw(identity.file_name())
        agg_path = layout.fixed_processed(identity.file_name())
        atomic_write_json(raw_path, raw)
        atomic_write_json(agg_path, agg)
        power_path = raw_path.with_name(f"power_validation_{raw_path.name}")
        atomic_write_json(power_path, power_report(raw, raw_path.name, identity.gpus))
        checks = [check(requests, each.outputs) for each in outcomes]
        checked = next((each for each in checks if not each.passed), checks[chosen])
        record = fixed_record(
            point,
            identity=identity,
            server=ServerInfo.of(self.server),
            prompts=prompts,
            duration_s=outcome.duration_s,
            checked=checked,
            agg=agg,
            raw_result=layout.relative(raw_path),
            inferencex_result=layout.relative(agg_path),
        )
        if repeats > 1:
            record = with_passes(record, aggs)
        record = run.keep(record, point)
        attach(self.request.node, record)
        if not checked.passed:
            pytest.fail(f"{point.id}: " + "; ".join(checked.problems), pytrace=False)
        run.gate(self.request.node, record, point)


def attach(node: pytest.Item, record: Record) -> None:
    """The junit properties and the point the end-of-run table is built from."""
    from pytest_infx.results.records import FixedRecord

    assert isinstance(record, FixedRecord)
    node.user_properties.append(("completed", record.requests.completed))
    node.user_properties.append(("failed", record.requests.failed))
    for name in ("tput_per_gpu", "output_tput_per_gpu", "median_ttft", "median_tpot"):
        if name in record.figures:
            node.user_properties.append((name, record.figures[name]))
    node.user_properties.append((FIXED_PROPERTY, record.as_json()))


class FixedSeqLenItems(StandsInWithRecord):
    """A fixed-seq-len point: throughput and latency of one TP, ISL/OSL and concurrency."""

    name = "fixed_seq_len"
    attach_record = staticmethod(attach)

    def fresh(
        self, point: Point, server: ServerHandle, run: Run, request: pytest.FixtureRequest
    ) -> Runnable:
        from pytest_infx.fixedseq.record import block_of

        return FixedSeqLenPoint(point, block_of(point), server, run, request)

    def data_sha256(self, point: Point, datasets: Datasets) -> str | None:
        """The prompts follow from the tokenizer, the lengths and the seed, which the
        fingerprint covers but for the tokenizer's files: a stored result is judged by its
        fingerprint alone."""
        return None


FIXED_SEQ_LEN = FixedSeqLenItems()
