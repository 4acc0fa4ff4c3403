"""Isolated, cached, pinned tool environments.

An engine (vLLM on the CPU, aiperf) must never share the plugin's dependency set, so each one
lives in its own virtualenv in a per-user cache. The folder name carries a hash of everything that
decides its content (pins, pip options, post-install scripts and their data, the interpreter's
version), so a changed spec installs next to the old one instead of mutating it. A marker written
last makes a folder reusable; a folder without it is what a killed installer left: it is redone.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Generic, Literal, Self, TypeVar

from pytest_infx.files.atomic import atomic_write_text as write_atomic
from pytest_infx.files.cachedir import cache_root
from pytest_infx.files.locks import Timeout, kernel_lock
from pytest_infx.launch.process import start_guarded
from pytest_infx.settings import Environment, environment

Progress = Callable[[str], None]
Tool = TypeVar("Tool")

MARKER_NAME = "infx-env.json"
LOG_NAME = "install.log"
STEPS_DIR_NAME = "infx-steps"
PIP_ARGS_VAR = "INFX_PIP_ARGS"
DATA_PACKAGE = "pytest_infx.envs.data"
_LOG_TAIL_LINES = 40
_HEARTBEAT_S = 20.0
_LINE_CHARS = 120
"""A log line in a progress line is shortened at a word, never cut inside one."""
_STOP_GRACE_S = 5.0


class InstallError(RuntimeError):
    """An install step failed; the message names the step, the log and what to do."""


@dataclass(frozen=True, kw_only=True)
class ScriptStep:
    """A python script from a data package (by default ``pytest_infx/envs/data``) run after pip.

    It runs with the env's python, so it may import what pip installed (torch, transformers).

    ``args`` may use ``{env}`` (the env folder) and ``{steps}`` (where the script and its
    ``files`` are copied), so a script never needs to know where the cache lives.
    """

    title: str
    script: str
    files: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    package: str = DATA_PACKAGE


@dataclass(frozen=True, kw_only=True)
class FailureHint:
    """Advice appended to an error when the install log contains ``needle``."""

    needle: str
    advice: str


@dataclass(frozen=True, kw_only=True)
class ToolEnvSpec:
    name: str
    version: str
    requirements: tuple[str, ...] = ()
    pip_options: tuple[str, ...] = ()
    no_deps: tuple[str, ...] = ()
    uninstall: tuple[str, ...] = ()
    scripts: tuple[ScriptStep, ...] = ()
    check: tuple[str, ...] = ()
    hints: tuple[FailureHint, ...] = field(default=(), compare=False)

    @property
    def needs_pip(self) -> bool:
        return bool(self.requirements or self.no_deps or self.uninstall)


@dataclass(frozen=True)
class ToolEnv:
    spec: ToolEnvSpec
    env_dir: Path

    @property
    def python(self) -> Path:
        return self.env_dir / "bin" / "python"

    @property
    def bin_dir(self) -> Path:
        return self.env_dir / "bin"

    @property
    def log_path(self) -> Path:
        return self.env_dir / LOG_NAME

    @property
    def marker_path(self) -> Path:
        return self.env_dir / MARKER_NAME

    @property
    def lock_path(self) -> Path:
        return self.env_dir.parent / f"{self.env_dir.name}.lock"

    @property
    def failed_log_path(self) -> Path:
        """Where the log of a failed install is kept once its folder is gone."""
        return self.env_dir.parent / f"{self.env_dir.name}.failed.log"

    def is_complete(self) -> bool:
        return self.marker_path.is_file()

    def is_being_installed(self) -> bool:
        """Whether a live process holds the install lock (a dead one releases it)."""
        return _locked(self.lock_path)

    @property
    def state(self) -> EnvState:
        return env_state(self.env_dir)

    def record(self) -> dict[str, object]:
        """The marker's content: the spec and how long each install step took."""
        loaded: dict[str, object] = json.loads(self.marker_path.read_text(encoding="utf-8"))
        return loaded


EnvState = Literal["installed", "installing", "incomplete", "missing"]


def env_state(env_dir: Path) -> EnvState:
    """What an environment folder holds, known from the folder alone (an environment of a spec
    no longer known still has one): installed once its last step wrote the marker, installing
    while a live process holds its lock, else incomplete (an install that did not finish)."""
    if (env_dir / MARKER_NAME).is_file():
        return "installed"
    if _locked(env_dir.parent / f"{env_dir.name}.lock"):
        return "installing"
    return "incomplete" if env_dir.exists() else "missing"


def _locked(lock_path: Path) -> bool:
    if not lock_path.exists():
        return False
    lock = kernel_lock(lock_path)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return True
    lock.release()
    return False


def _data_bytes(package: str, name: str) -> bytes:
    try:
        return (resources.files(package) / name).read_bytes()
    except (FileNotFoundError, ModuleNotFoundError):
        raise InstallError(
            f"{package.replace('.', '/')}/{name} is missing from the installed package; "
            "reinstall pytest-infx"
        ) from None


def spec_hash(spec: ToolEnvSpec) -> str:
    """A short digest of everything that decides the env's content."""
    scripts = [
        {
            "title": step.title,
            "args": list(step.args),
            "env": [list(pair) for pair in step.env],
            "content": {
                name: hashlib.sha256(_data_bytes(step.package, name)).hexdigest()
                for name in (step.script, *step.files)
            },
        }
        for step in spec.scripts
    ]
    payload = {
        "name": spec.name,
        "version": spec.version,
        "requirements": list(spec.requirements),
        "pip_options": list(spec.pip_options),
        "no_deps": list(spec.no_deps),
        "uninstall": list(spec.uninstall),
        "scripts": scripts,
        "check": list(spec.check),
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
    }
    blob = json.dumps(payload, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


def locate(spec: ToolEnvSpec, *, cache_dir: Path | None = None) -> ToolEnv:
    """Where ``spec`` is (or would be) installed; touches nothing."""
    folder = f"{spec.name}-{spec.version}-{spec_hash(spec)}"
    return ToolEnv(spec=spec, env_dir=cache_root(cache_dir) / "envs" / folder)


def stderr_progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def extra_pip_args(env: Environment | None = None) -> tuple[str, ...]:
    """Machine-specific pip arguments, e.g. an extra index for the CPU torch build."""
    return tuple(shlex.split((env or environment()).pip_args))


def ensure(
    spec: ToolEnvSpec,
    *,
    progress: Progress | None = None,
    cache_dir: Path | None = None,
    force: bool = False,
) -> ToolEnv:
    """Return the installed env, installing it first when needed.

    The fast path hashes a few small data files and checks the marker: an installed env costs
    milliseconds and no heavy import, so every fixture can call this.
    """
    env = locate(spec, cache_dir=cache_dir)
    if env.is_complete() and not force:
        return env
    report = progress or stderr_progress
    env.env_dir.parent.mkdir(parents=True, exist_ok=True)
    lock = kernel_lock(env.lock_path)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        report(f"[infx] {spec.name} {spec.version}: another process is installing; waiting")
        lock.acquire()
    try:
        if env.is_complete() and not force:
            return env
        try:
            _install(env, report)
        except InstallError as exc:
            _discard_failed(env)
            message = str(exc).replace(str(env.log_path), str(env.failed_log_path))
            raise InstallError(message) from None
        return env
    finally:
        lock.release()


@dataclass(frozen=True)
class InstalledTool:
    """An installed tool environment as its users see it: its folder, its python and the
    pinned version; a tool adds the paths of what it runs."""

    python: Path
    version: str
    env_dir: Path

    @classmethod
    def at(cls, env: ToolEnv) -> Self:
        return cls(python=env.python, version=env.spec.version, env_dir=env.env_dir)


@dataclass(frozen=True)
class Installable(Generic[Tool]):
    """A tool environment to fetch or look up: ``spec`` says what to install and ``read`` turns
    the installed environment into what its users get back, so every tool is fetched and looked
    up alike."""

    spec: ToolEnvSpec
    read: Callable[[ToolEnv], Tool]

    def ensure(
        self,
        *,
        progress: Progress | None = None,
        cache_dir: Path | None = None,
        force: bool = False,
    ) -> Tool:
        """The installed tool; installs it when it is missing."""
        return self.read(ensure(self.spec, progress=progress, cache_dir=cache_dir, force=force))

    def installed(self, *, cache_dir: Path | None = None) -> Tool | None:
        """The tool if it is already installed, without installing anything."""
        env = locate(self.spec, cache_dir=cache_dir)
        return self.read(env) if env.is_complete() else None


def _discard_failed(env: ToolEnv) -> None:
    """A failed install is gigabytes nobody can use (pip keeps what it downloaded in its own
    cache): the folder goes, its log stays beside it as ``<env>.failed.log`` for the error
    message to name, and the next install starts afresh."""
    if env.log_path.is_file():
        os.replace(env.log_path, env.failed_log_path)
    shutil.rmtree(env.env_dir, ignore_errors=True)


class _Steps:
    """Numbers steps, stamps them with elapsed time and keeps their durations for the marker."""

    def __init__(self, env: ToolEnv, report: Progress, total: int) -> None:
        self._prefix = f"[infx] {env.spec.name} {env.spec.version}"
        self._report = report
        self._total = total
        self._index = 0
        self._start = time.monotonic()
        self._step_start = self._start
        self._current: str | None = None
        self.durations: dict[str, float] = {}

    def elapsed(self) -> float:
        return time.monotonic() - self._start

    def begin(self, title: str, detail: str = "") -> None:
        self._close()
        self._index += 1
        self._current = title
        self._step_start = time.monotonic()
        self.say(f"step {self._index}/{self._total}: {title}{detail}")

    def say(self, message: str) -> None:
        self._report(f"{self._prefix} [{self.elapsed():6.1f}s] {message}")

    def finish(self) -> None:
        self._close()
        self.say("installed")

    def _close(self) -> None:
        if self._current is not None:
            self.durations[self._current] = round(time.monotonic() - self._step_start, 1)


def _install(env: ToolEnv, report: Progress) -> None:
    spec = env.spec
    total = (
        1
        + bool(spec.requirements)
        + bool(spec.no_deps)
        + bool(spec.uninstall)
        + len(spec.scripts)
        + bool(spec.check)
    )
    steps = _Steps(env, report, total)
    if env.env_dir.exists():
        what = "a previous install" if env.is_complete() else "a half-finished install"
        steps.say(f"removing {what} at {env.env_dir}")
        shutil.rmtree(env.env_dir)
    env.env_dir.mkdir(parents=True)
    log = env.log_path
    steps.begin("create virtualenv", f" in {env.env_dir}")
    venv_cmd = [sys.executable, "-m", "venv"]
    if not spec.needs_pip:
        venv_cmd.append("--without-pip")
    _run([*venv_cmd, str(env.env_dir)], env=env, log=log, steps=steps, title="venv")
    pip = [str(env.python), "-m", "pip"]
    quiet = ["--disable-pip-version-check", "--no-input", "--progress-bar", "off"]
    extra = extra_pip_args()
    if spec.requirements:
        steps.begin(f"pip install {' '.join(spec.requirements)}")
        cmd = [*pip, "install", *quiet, *spec.pip_options, *extra, *spec.requirements]
        _run(cmd, env=env, log=log, steps=steps, title="pip install")
    if spec.no_deps:
        steps.begin(f"pip install --no-deps {' '.join(spec.no_deps)}")
        cmd = [*pip, "install", *quiet, "--no-deps", *spec.pip_options, *extra, *spec.no_deps]
        _run(cmd, env=env, log=log, steps=steps, title="pip install --no-deps")
    if spec.uninstall:
        steps.begin(f"pip uninstall {' '.join(spec.uninstall)}")
        cmd = [*pip, "uninstall", "-y", "--disable-pip-version-check", *spec.uninstall]
        _run(cmd, env=env, log=log, steps=steps, title="pip uninstall")
    steps_dir = env.env_dir / STEPS_DIR_NAME
    steps_dir.mkdir()
    for step in spec.scripts:
        steps.begin(step.title)
        for name in (step.script, *step.files):
            (steps_dir / _script_name(name)).write_bytes(_data_bytes(step.package, name))
        values = {"env": str(env.env_dir), "steps": str(steps_dir)}
        args = [arg.format_map(values) for arg in step.args]
        script = steps_dir / _script_name(step.script)
        _run(
            [str(env.python), str(script), *args],
            env=env,
            log=log,
            steps=steps,
            title=step.title,
            extra_env=dict(step.env),
        )
    if spec.check:
        steps.begin(f"check: {shlex.join(spec.check)}")
        argv = [str(env.bin_dir / spec.check[0]), *spec.check[1:]]
        _run(argv, env=env, log=log, steps=steps, title="check")
    steps.finish()
    record = {
        "name": spec.name,
        "version": spec.version,
        "hash": spec_hash(spec),
        "python": sys.version.split()[0],
        "requirements": list(spec.requirements),
        "no_deps": list(spec.no_deps),
        "uninstall": list(spec.uninstall),
        "pip_args": list(extra),
        "installed_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "seconds": round(steps.elapsed(), 1),
        "steps": steps.durations,
    }
    write_atomic(env.marker_path, json.dumps(record, indent=2) + "\n")


def _script_name(name: str) -> str:
    """Data scripts ship as ``*.py.txt`` so the plugin's type checker skips them; run as ``.py``."""
    return name.removesuffix(".txt") if name.endswith(".py.txt") else name


def _run(
    cmd: Sequence[str],
    *,
    env: ToolEnv,
    log: Path,
    steps: _Steps,
    title: str,
    extra_env: Mapping[str, str] | None = None,
) -> None:
    child_env = dict(os.environ)
    child_env.pop("PYTHONPATH", None)
    child_env.pop("VIRTUAL_ENV", None)
    child_env["PYTHONUNBUFFERED"] = "1"
    child_env.update(extra_env or {})
    with log.open("ab") as sink:
        sink.write(f"\n$ {shlex.join(cmd)}\n".encode())
        sink.flush()
        start_offset = sink.tell()
        guarded = start_guarded(
            list(cmd),
            grace_s=_STOP_GRACE_S,
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=child_env,
        )
        proc = guarded.popen
        shown = ""
        try:
            while True:
                try:
                    code = proc.wait(timeout=_HEARTBEAT_S)
                    break
                except subprocess.TimeoutExpired:
                    last = _last_line(log)
                    # a line already shown is stale news: pip may be quiet for minutes
                    fresh = last if last != shown else ""
                    shown = last or shown
                    steps.say(f"  ... {title} still running" + (f": {fresh}" if fresh else ""))
        except BaseException:
            guarded.stop()
            raise
    if code != 0:
        tail = _tail(log, start_offset)
        hints = list(dict.fromkeys(h.advice for h in env.spec.hints if h.needle in tail))
        advice = (
            "\n".join(hints)
            if hints
            else (
                f"fix the cause shown above and run `infx engine install {env.spec.name} --force`"
            )
        )
        raise InstallError(
            f"{env.spec.name} {env.spec.version}: step '{title}' failed with exit status {code}.\n"
            f"Full log: {log}\n--- last lines ---\n{tail}\n--- what to do ---\n{advice}"
        )


def _last_line(log: Path) -> str:
    lines = _read_tail_bytes(log, 0).splitlines()
    for line in reversed(lines):
        text = line.strip()
        if text and not text.startswith("WARNING: Location"):
            return textwrap.shorten(text, _LINE_CHARS, placeholder=" ...")
    return ""


def _tail(log: Path, offset: int) -> str:
    lines = _read_tail_bytes(log, offset).splitlines()
    return "\n".join(lines[-_LOG_TAIL_LINES:])


def _read_tail_bytes(log: Path, offset: int) -> str:
    size = log.stat().st_size
    start = max(offset, size - 16_384)
    with log.open("rb") as handle:
        handle.seek(start)
        return handle.read().decode("utf-8", errors="replace")


def remove(spec: ToolEnvSpec, *, cache_dir: Path | None = None) -> bool:
    """Delete an installed env under its lock; returns whether there was anything to delete."""
    env = locate(spec, cache_dir=cache_dir)
    if not env.env_dir.parent.exists():
        return False
    with kernel_lock(env.lock_path):
        if not env.env_dir.exists():
            return False
        shutil.rmtree(env.env_dir)
        return True
