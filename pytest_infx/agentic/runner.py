"""Drive ``aiperf profile`` for one AgentX point.

aiperf is a separate tool in its own environment, so it is run as a subprocess with an argv built
from a frozen :class:`AgenticRun`. Things learnt from aiperf 0.13.0 that shape this module:

- The ``inferencex-agentx-mvp`` scenario locks agentic replay, streaming, ``ignore_eos``, the
  first-turn-prefix cache-bust and a Weka loader. A local trace directory goes through the same
  loader (``--input-file DIR --custom-dataset-type weka_trace``) but is "unpinned", and a duration
  under 900 s breaks the floor; both need ``--unsafe-override``, which stamps
  ``submission_valid=false`` in the export. :attr:`AgenticRun.override` adds it only then.
- There is no ``--warmup-requests-per-lane`` in 0.13.0: agentic replay warms each lane by
  replaying its trajectory up to a random start turn (``--trajectory-start-min/max-ratio``; the
  scenario fills in 0.0-1.0 when they are not given, so InferenceX's 0.25-0.75 is passed), and
  its warm-up waits ``--agentic-warmup-grace-period`` (``--warmup-grace-period`` applies to a
  declared warm-up phase only). The argv is checked against ``aiperf profile --help`` before
  launch, so a flag the installed aiperf lacks fails in a second with its name instead of
  after start-up.
- The scenario forbids ``--trace-idle-gap-cap-seconds`` (InferenceX's 300 s per-trajectory idle
  cap); passing it would make the run non-submittable, so it is passed only on a run that
  overrides the scenario anyway.
- ``--failed-request-threshold`` stops the run once the failed ratio of profiling records passes
  it; aiperf then exits non-zero after writing its export, so the numbers are still read.
- With ``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE`` set, aiperf looks a local tokenizer folder
  up as a hub repo id and fails; without them it loads a local folder with no network access.
  Those two variables are therefore removed from aiperf's environment for a local tokenizer.
- The ``builtin`` tokenizer needs tiktoken's ``o200k_base`` file from the network; offline, pass
  a local tokenizer folder (the served model's own folder is the right one).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from pytest_infx.agentic.results import EXPORT_NAME, AgenticResult, parse_export
from pytest_infx.launch.guard import command as guard_command
from pytest_infx.launch.process import start_guarded

SCENARIO = "inferencex-agentx-mvp"
SCENARIO_MIN_DURATION_S = 900.0
CONSOLE_LOG_NAME = "aiperf-console.log"
_OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
_TAIL_LINES = 40
_KILL_GRACE_S = 10.0

LineSink = Callable[[str], None]


class AgenticRunError(RuntimeError):
    """aiperf could not run or did not finish; the message carries the reason and a log tail."""


@dataclass(frozen=True, kw_only=True)
class AgenticRun:
    """Everything one ``aiperf profile`` call needs, as a plain value.

    Exactly one of ``public_dataset`` (a pinned hub corpus, online) and ``traces`` (a local Weka
    trace file or folder, offline) is set. ``gpus`` is only used to express throughput per GPU.
    """

    aiperf: Path
    url: str
    model: str
    tokenizer: str
    concurrency: int
    duration_s: float
    artifact_dir: Path
    public_dataset: str | None = None
    traces: Path | None = None
    endpoint: str = "/v1/chat/completions"
    streaming: bool = True
    seed: int = 42
    gpus: int = 1
    scenario: str | None = SCENARIO
    warmup_requests_per_lane: int | None = None
    trajectory_start_ratio: tuple[float, float] | None = None
    trace_idle_gap_cap_s: float | None = None
    warmup_grace_period_s: float | None = None
    failed_request_threshold: float | None = None
    max_context_length: int | None = None
    request_count: int | None = None
    num_dataset_entries: int | None = None
    grace_period_s: float | None = None
    use_server_token_count: bool = True
    apply_chat_template: bool = False
    extra_args: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if (self.public_dataset is None) == (self.traces is None):
            raise ValueError("AgenticRun needs exactly one of public_dataset and traces")
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {self.concurrency}")
        if self.duration_s <= 0:
            raise ValueError(f"duration_s must be > 0, got {self.duration_s}")
        if self.gpus < 1:
            raise ValueError(f"gpus must be >= 1, got {self.gpus}")
        if self.trajectory_start_ratio is not None:
            low, high = self.trajectory_start_ratio
            if not 0.0 <= low <= high <= 1.0:
                raise ValueError(
                    f"trajectory_start_ratio must satisfy 0 <= min <= max <= 1, got {low}, {high}"
                )

    @property
    def override(self) -> bool:
        """Whether the scenario lock must be overridden, which makes the run non-submittable."""
        if self.scenario is None:
            return False
        return self.traces is not None or self.duration_s < SCENARIO_MIN_DURATION_S

    @property
    def export_path(self) -> Path:
        return self.artifact_dir / EXPORT_NAME


def build_argv(run: AgenticRun) -> list[str]:
    argv = [str(run.aiperf), "profile"]
    if run.scenario is not None:
        argv += ["--scenario", run.scenario]
        if run.override:
            argv.append("--unsafe-override")
    argv += ["--url", run.url, "--model", run.model, "--tokenizer", run.tokenizer]
    argv += ["--endpoint-type", "chat", "--endpoint", run.endpoint]
    if run.streaming:
        argv.append("--streaming")
    argv += ["--concurrency", str(run.concurrency)]
    argv += ["--benchmark-duration", _number(run.duration_s)]
    if run.grace_period_s is not None:
        argv += ["--benchmark-grace-period", _number(run.grace_period_s)]
    argv += ["--random-seed", str(run.seed)]
    if run.warmup_requests_per_lane is not None:
        argv += ["--warmup-requests-per-lane", str(run.warmup_requests_per_lane)]
    if run.trajectory_start_ratio is not None:
        low, high = run.trajectory_start_ratio
        argv += ["--trajectory-start-min-ratio", _number(low)]
        argv += ["--trajectory-start-max-ratio", _number(high)]
    if run.trace_idle_gap_cap_s is not None and (run.scenario is None or run.override):
        argv += ["--trace-idle-gap-cap-seconds", _number(run.trace_idle_gap_cap_s)]
    if run.warmup_grace_period_s is not None:
        argv += ["--agentic-warmup-grace-period", _number(run.warmup_grace_period_s)]
    if run.failed_request_threshold is not None:
        argv += ["--failed-request-threshold", _number(run.failed_request_threshold)]
    if run.max_context_length is not None:
        argv += ["--max-context-length", str(run.max_context_length)]
    if run.request_count is not None:
        argv += ["--request-count", str(run.request_count)]
    if run.use_server_token_count:
        argv.append("--use-server-token-count")
    if run.apply_chat_template:
        argv.append("--apply-chat-template")
    if run.num_dataset_entries is not None:
        argv += ["--num-dataset-entries", str(run.num_dataset_entries)]
    if run.public_dataset is not None:
        argv += ["--public-dataset", run.public_dataset]
    else:
        argv += ["--input-file", str(run.traces), "--custom-dataset-type", "weka_trace"]
    argv += ["--artifact-dir", str(run.artifact_dir), "--ui-type", "none"]
    argv += list(run.extra_args)
    return argv


def aiperf_env(run: AgenticRun, base: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    if Path(run.tokenizer).is_dir():
        for name in _OFFLINE_VARS:
            env.pop(name, None)
    env.setdefault("COLUMNS", "160")
    env["NO_COLOR"] = "1"
    return env


def missing_flags(argv: list[str], help_text: str) -> list[str]:
    """The ``--flags`` of an argv that the help text does not list."""
    known = set(re.findall(r"(?<![\w-])--[a-z0-9][a-z0-9-]*", help_text))
    return [arg for arg in argv[2:] if arg.startswith("--") and arg not in known]


@functools.lru_cache(maxsize=8)
def _profile_help(aiperf: str, mtime_ns: int) -> str:
    proc = subprocess.run(
        guard_command([aiperf, "profile", "--help"], grace_s=5.0, parent_pid=os.getpid()),
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "400", "NO_COLOR": "1"},
        check=False,
    )
    if proc.returncode != 0:
        raise AgenticRunError(
            f"{aiperf} profile --help exited with {proc.returncode}:\n{proc.stderr[-2000:]}"
        )
    return proc.stdout


def preflight(run: AgenticRun) -> None:
    """Fail before launch on a missing executable, unknown flags or bad local inputs."""
    if not run.aiperf.is_file():
        raise AgenticRunError(
            f"aiperf not found at {run.aiperf}; install it with 'infx engine install aiperf' "
            "or point the run at an existing aiperf executable"
        )
    help_text = _profile_help(str(run.aiperf), run.aiperf.stat().st_mtime_ns)
    unknown = missing_flags(build_argv(run), help_text)
    if unknown:
        hint = ""
        if "--warmup-requests-per-lane" in unknown:
            hint = (
                "; this aiperf warms agentic lanes by replaying each trajectory up to a random "
                "start turn instead: use trajectory_start_ratio"
            )
        raise AgenticRunError(
            f"{run.aiperf} does not know {', '.join(unknown)}" + hint + " (checked against "
            "'aiperf profile --help')"
        )
    if run.traces is not None and not run.traces.exists():
        raise AgenticRunError(f"{run.traces}: trace file or folder does not exist")
    if run.tokenizer.startswith(("/", "./", "../")) and not Path(run.tokenizer).is_dir():
        raise AgenticRunError(f"{run.tokenizer}: tokenizer folder does not exist")


def run_aiperf(
    run: AgenticRun,
    *,
    on_line: LineSink | None = None,
    timeout_s: float | None = None,
    env: Mapping[str, str] | None = None,
) -> AgenticResult:
    """Run aiperf to the end and parse its export; a run that exits non-zero after writing
    its export (the failed-request threshold stopped it) is returned with ``exit_code`` set.

    aiperf runs under the launcher's guard, in its own process group: the whole group is ended
    on timeout, on Ctrl-C, on any error here and when this process dies, since aiperf forks
    worker and service processes of its own. Every output line
    goes to ``on_line`` and to ``aiperf-console.log`` in the artifact dir.
    """
    preflight(run)
    run.artifact_dir.mkdir(parents=True, exist_ok=True)
    run.export_path.unlink(missing_ok=True)
    argv = build_argv(run)
    limit = timeout_s if timeout_s is not None else _default_timeout(run)
    tail: deque[str] = deque(maxlen=_TAIL_LINES)
    log_path = run.artifact_dir / CONSOLE_LOG_NAME
    with log_path.open("w", encoding="utf-8") as log:
        log.write(" ".join(argv) + "\n")
        guarded = start_guarded(
            argv,
            grace_s=_KILL_GRACE_S,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
            env=aiperf_env(run, env),
        )
        proc = guarded.popen
        reader = threading.Thread(
            target=_pump, args=(proc, log, tail, on_line), name="aiperf-output", daemon=True
        )
        reader.start()
        try:
            rc = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            guarded.stop()
            reader.join(timeout=5)
            raise AgenticRunError(
                f"aiperf ran past {limit:.0f} s and was stopped; log {log_path}\n" + _tail(tail)
            ) from None
        except BaseException:
            guarded.stop()
            raise
        reader.join(timeout=30)
        guarded.stop()
    if rc != 0 and not run.export_path.is_file():
        raise AgenticRunError(f"aiperf exited with {rc}; log {log_path}\n" + _tail(tail))
    result = parse_export(run.export_path, gpus=run.gpus)
    if rc == 0:
        return result
    return dataclasses.replace(result, exit_code=rc, console_tail=tuple(tail))


def _pump(
    proc: subprocess.Popen[str], log: TextIO, tail: deque[str], on_line: LineSink | None
) -> None:
    if proc.stdout is None:
        return
    sink = on_line
    with proc.stdout:
        for raw in proc.stdout:
            line = raw.rstrip("\n")
            tail.append(line)
            log.write(raw)
            log.flush()
            if sink is None:
                continue
            try:
                sink(line)
            except Exception as exc:
                # A broken display must not stop the drain, or aiperf blocks on a full pipe.
                tail.append(f"[infx] output callback failed and was dropped: {exc!r}")
                sink = None


def _default_timeout(run: AgenticRun) -> float:
    """Start-up (about 20 s on 2 CPUs), the run, its grace period and export, with slack."""
    grace = run.grace_period_s if run.grace_period_s is not None else 30.0
    return 180.0 + run.duration_s * 1.25 + grace


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _tail(lines: deque[str]) -> str:
    return "\n".join(lines)
