"""The end-of-run table of fixed-seq-len points, in the units InferenceX's comparison shows:
throughput per GPU in tokens/s, TTFT and TPOT in milliseconds, interactivity in tokens/s per
user."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_infx.results.figure import figure
from pytest_infx.results.records import FixedRecord

_COLUMNS = (
    ("tput/gpu", "tput_per_gpu", 1.0),
    ("out/gpu", "output_tput_per_gpu", 1.0),
    ("TTFT p50 ms", "median_ttft", 1000.0),
    ("TPOT p50 ms", "median_tpot", 1000.0),
    ("intvty p50", "median_intvty", 1.0),
    ("E2EL p99 ms", "p99_e2el", 1000.0),
)


def text_table(records: Sequence[FixedRecord]) -> list[str]:
    """A line per point; mean GPU power and output tokens per joule follow where any point
    was measured with GPU telemetry."""
    power = any(record.gpu_telemetry is not None for record in records)
    head = f"{'point':<48}{'done':>9}" + "".join(f"{title:>13}" for title, _, _ in _COLUMNS)
    lines = [head + (f"{'GPU W':>9}{'tok/J':>9}" if power else "")]
    for record in sorted(records, key=lambda r: r.id):
        done = f"{record.requests.completed}/{record.requests.sent}"
        row = f"{record.id:<48}{done:>9}"
        for _, name, scale in _COLUMNS:
            value = record.figures.get(name)
            row += f"{'-' if value is None else f'{value * scale:.1f}':>13}"
        if power:
            telemetry = record.gpu_telemetry
            watts = None if telemetry is None else telemetry.mean_power_w
            per_joule = None if telemetry is None else telemetry.output_tokens_per_joule
            row += f"{figure(watts, 0):>9}{figure(per_joule, 2):>9}"
        lines.append(row + ("" if record.passed else "  FAIL"))
    return lines
