"""The processes behind ``headerlock flakes``: one per hash seed, a fork per run.

A hash seed is fixed when an interpreter starts, so every seed needs its own
process; starting one and importing headerlock, pydantic and PyYAML costs far
more than a run. A worker (``headerlock flake-worker``, started with the seed
in ``PYTHONHASHSEED``) imports that once, then reads one ``run-once`` command
line per line of its input and answers each with one JSON line
``[exit code, stdout, stderr]``. Each run happens in a child forked from the
worker: the run still starts from a fresh process state (a scenario's own
plugin modules are imported by the child, never kept), it only skips the
imports. Where ``os.fork`` is missing, ``flakes`` starts one process per run.

Every worker leads a process group of its own: at a run's timeout (or Ctrl-C) the
whole group ends, the run's own children included, even one that keeps the answer
pipe open; answers are read with a deadline, never waiting for the pipe to close.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout, suppress
from dataclasses import dataclass, field
from functools import partial
from typing import IO, Any, Final, TextIO

from headerlock.runtime.plugins import subprocess_env

RunOnce = Callable[[list[str]], tuple[int, str, str]]
"""Runs one ``run-once`` command line in this process: exit code, stdout, stderr."""

FORKS: Final = hasattr(os, "fork")
"""Whether runs can fork from a warmed worker (otherwise each run is a fresh process)."""

RUN_TIMEOUT: Final = 300.0
"""Seconds a run may take by default (``headerlock flakes --timeout``)."""
MAX_RUNS: Final = 10_000
"""The most runs per scenario ``headerlock flakes --runs`` accepts (one process each)."""
_POLL: Final = 0.2
"""How often a wait for an answer looks for a stop (Ctrl-C)."""


def capped_jobs(jobs: int) -> int:
    """``--jobs``, at most the machine's cores (said in one line on stderr when cut)."""
    cores = os.cpu_count() or 1
    if jobs > cores:
        print(
            f"headerlock: --jobs {jobs} is more than the {cores} cores of this"
            f" machine; running {cores} at a time",
            file=sys.stderr,
        )
    return min(jobs, cores)


def worker_command() -> list[str]:
    """The command line of a worker (its hash seed comes from its environment)."""
    return [sys.executable, "-m", "headerlock", "flake-worker"]


@dataclass(slots=True)
class Worker:
    """A started worker process of one hash seed; its stderr goes to a temporary file."""

    seed: int
    process: subprocess.Popen[str]
    errors: IO[str]
    _pending: bytearray = field(default_factory=bytearray)

    @classmethod
    def start(cls, seed: int) -> Worker:
        """Start the worker of ``seed`` (it imports while its caller prepares the runs),
        leading a process group of its own."""
        errors = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115 - closed by close()
        try:
            process = subprocess.Popen(
                worker_command(),
                env=subprocess_env(PYTHONHASHSEED=str(seed)),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
                encoding="utf-8",
                process_group=0,
            )
        except BaseException:
            errors.close()
            raise
        return cls(seed, process, errors)

    def answer(self, deadline: float, stop: threading.Event) -> str | None:
        """The next answer line; ``""`` once the worker's output ended; ``None`` at
        ``deadline`` (``time.monotonic()``) or once ``stop`` is set."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while (end := self._pending.find(b"\n")) < 0:
            left = deadline - time.monotonic()
            if left <= 0 or stop.is_set():
                return None
            ready, _, _ = select.select([fd], [], [], min(left, _POLL))
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return ""
            self._pending += chunk
        line = bytes(self._pending[: end + 1])
        del self._pending[: end + 1]
        return line.decode("utf-8", "replace")

    def end(self) -> int:
        """End the worker's whole process group (its runs and their children) and
        return the worker's exit code."""
        if self.process.returncode is None:  # not reaped: its group id is still its own
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
        return self.process.wait()

    def stderr(self) -> str:
        """What the worker wrote to its stderr so far."""
        self.errors.seek(0)
        return self.errors.read()

    def close(self) -> None:
        """End the worker's process group; forget its stderr."""
        self.end()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with suppress(OSError):
                    stream.close()
        self.errors.close()


@contextmanager
def started(seeds: Iterable[int]) -> Iterator[dict[int, Worker]]:
    """Workers of ``seeds`` started now (none where runs cannot fork); whatever the
    caller did not take (``pop``) is stopped at the end of the block."""
    workers: dict[int, Worker] = {}
    try:
        if FORKS:
            for seed in seeds:
                workers[seed] = Worker.start(seed)
        yield workers
    finally:
        for worker in workers.values():
            worker.close()


RUN_ONCE_MODULES: Final = (
    "headerlock.formats.strict_yaml",
    "headerlock.runtime.aio",
    "headerlock.testing.order.plugin_orders",
    "headerlock.testing.scenario.project",
    "headerlock.testing.scenario.replay",
    "headerlock.testing.order.schedules",
)
"""What ``headerlock run-once`` imports: a worker imports it once, before forking runs."""

Main = Callable[..., int]
"""``headerlock.cli.main``: ``main(argv, out=stream)`` gives an exit code."""


def serve_warm(main: Main) -> int:
    """The ``headerlock flake-worker`` command: import what runs need, then ``serve``."""
    from headerlock.testing.scenario.drivers import available_drivers

    for module in RUN_ONCE_MODULES:
        importlib.import_module(module)
    available_drivers()  # the driver entry points, found once for every run
    return serve(partial(run_captured, main), sys.stdin, quiet_stdout())


def run_captured(main: Main, argv: list[str]) -> tuple[int, str, str]:
    """``headerlock <argv>`` as a process of its own would run it: exit code, stdout
    (the command's output and whatever the run printed), stderr."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = main(argv, out=out)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    except BaseException:
        err.write(traceback.format_exc())
        code = 1
    return code, out.getvalue(), err.getvalue()


def serve(run_once: RunOnce, tasks: Iterable[str], results: TextIO) -> int:
    """Answer every command line in ``tasks`` (JSON, one per line) on ``results``.

    The worker's own standard output is the answer channel: a run's prints go to
    the run's captured stdout, and file descriptor 1 is pointed at ``os.devnull``
    so that nothing else a run writes can break a line.
    """
    for line in tasks:
        if not line.strip():
            continue
        argv = json.loads(line)
        results.write(json.dumps(_forked(run_once, [str(a) for a in argv])) + "\n")
        results.flush()
    return 0


def quiet_stdout() -> TextIO:
    """This process's standard output as a private stream; descriptor 1 becomes
    ``os.devnull`` (stray writes of forked runs vanish instead of corrupting answers)."""
    sys.stdout.flush()
    private = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    return open(private, "w", encoding="utf-8", newline="\n")


def _forked(run_once: RunOnce, argv: list[str]) -> list[Any]:
    """``run_once(argv)`` in a forked child; its answer comes back through a pipe."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child (coverage does not follow forks)
        os.close(read)
        try:
            null = os.open(os.devnull, os.O_RDONLY)  # the task lines are the worker's
            os.dup2(null, 0)
            os.close(null)
            with os.fdopen(write, "wb") as pipe:
                pipe.write(json.dumps(list(run_once(argv))).encode("utf-8"))
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    if data:
        answer: list[Any] = json.loads(data)
        return answer
    code = os.waitstatus_to_exitcode(status)
    return [code or 1, "", f"the run's process ended without an answer (exit {code})"]
