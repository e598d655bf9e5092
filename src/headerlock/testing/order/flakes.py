"""``headerlock flakes``: run scenarios in fresh processes under different hash seeds
and registration orders, and report those whose recorded bytes differ."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field

from headerlock.errors import HeaderlockError
from headerlock.formats.explain import changed_paths, tool_order_changes
from headerlock.formats.strict_yaml import loads
from headerlock.runtime.plugins import subprocess_env
from headerlock.testing.order.flake_worker import FORKS, MAX_RUNS, RUN_TIMEOUT, Worker
from headerlock.testing.order.schedules import LoadSchedule, schedules
from headerlock.testing.scenario.project import Project

__all__ = ["MAX_RUNS", "RUN_TIMEOUT", "FlakeReport", "FlakeRun", "hunt", "seed_batches", "table"]


@dataclass(frozen=True, slots=True)
class FlakeRun:
    """One subprocess run: its hash seed, its schedule and what it recorded."""

    seed: int
    schedule: LoadSchedule
    output: str


@dataclass(slots=True)
class FlakeReport:
    """The runs of one scenario, grouped by recorded bytes."""

    scenario: str
    plugins: list[str]
    runs: list[FlakeRun] = field(default_factory=list)

    def groups(self) -> list[list[FlakeRun]]:
        """Runs grouped by identical output, in order of first appearance."""
        by_output: dict[str, list[FlakeRun]] = {}
        for run in self.runs:
            by_output.setdefault(run.output, []).append(run)
        return list(by_output.values())

    def first_difference(self) -> str:
        """The first path where the first two groups differ ("-" when all agree)."""
        groups = self.groups()
        if len(groups) < 2:
            return "-"
        a, b = loads(groups[0][0].output), loads(groups[1][0].output)
        lines = tool_order_changes(a, b) + changed_paths(a, b)
        return lines[0] if lines else "(bytes only)"

    def describe(self, run: FlakeRun) -> str:
        """``seed=3 order=b, a, c``."""
        names = [p.rsplit(":", 1)[-1] for p in self.plugins]
        return f"seed={run.seed} order={', '.join(names[i] for i in run.schedule.order)}"


def run_once_command(project: Project, name: str, order: Sequence[int]) -> list[str]:
    """The subprocess command line of one run."""
    return [
        sys.executable,
        "-m",
        "headerlock",
        "run-once",
        name,
        "--fixtures",
        str(project.fixtures),
        "--recordings",
        str(project.recordings),
        "--order",
        ",".join(str(i) for i in order),
    ]


def _failed(name: str, seed: int, code: int, stderr: str) -> HeaderlockError:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    why = lines[-1].strip()[-2000:] if lines else "(nothing on stderr)"
    return HeaderlockError(f"run of {name!r} (seed {seed}) failed with exit {code}: {why}")


def _timed_out(name: str, seed: int, timeout: float) -> HeaderlockError:
    return HeaderlockError(
        f"run of {name!r} (seed {seed}) did not finish within {timeout:g}s (--timeout);"
        " its processes were ended"
    )


def _run(
    project: Project, name: str, seed: int, schedule: LoadSchedule, timeout: float
) -> FlakeRun:
    try:
        result = subprocess.run(
            run_once_command(project, name, schedule.order),
            env=subprocess_env(PYTHONHASHSEED=str(seed)),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise _timed_out(name, seed, timeout) from None
    if result.returncode != 0:
        raise _failed(name, seed, result.returncode, result.stderr)
    return FlakeRun(seed, schedule, result.stdout)


Task = tuple[int, str, LoadSchedule]
"""A run: its scenario's position among the reports, the scenario and its schedule."""
Batch = tuple[int, list[Task]]
"""Every run of one hash seed: the seed and one task per scenario."""
Finished = Callable[[int, int, "FlakeRun | BaseException"], None]
"""Called with a run's report position, seed and outcome."""


def seed_batches(project: Project, names: Sequence[str], *, runs: int) -> Iterator[Batch]:
    """The runs, one batch per hash seed ``0..runs-1``, made only when asked for."""
    plans = [
        (name, schedules(runs, len(project.scenario(name).plugins), seed=name)) for name in names
    ]
    for seed in range(runs):
        yield (
            seed,
            [
                (position, name, plan[seed % len(plan)])
                for position, (name, plan) in enumerate(plans)
            ],
        )


@dataclass(slots=True)
class _Hunt:
    """What the threads running batches share: the timeout, the stop signal (Ctrl-C)
    and the workers started early."""

    project: Project
    timeout: float
    finished: Finished
    workers: dict[int, Worker]
    stop: threading.Event = field(default_factory=threading.Event)
    guard: threading.Lock = field(default_factory=threading.Lock)

    def take(self, batches: Iterator[Batch]) -> Batch | None:
        with self.guard:
            return None if self.stop.is_set() else next(batches, None)

    def worker(self, seed: int) -> Worker:
        with self.guard:
            early = self.workers.pop(seed, None)
        return early or Worker.start(seed)

    def serve(self, batches: Iterator[Batch]) -> None:
        """Run batches until none is left (or the hunt stops)."""
        while (batch := self.take(batches)) is not None:
            seed, runs = batch
            if FORKS:
                self.forked(seed, runs)
            else:
                for position, name, schedule in runs:
                    self.fresh(position, name, seed, schedule)

    def forked(self, seed: int, runs: Sequence[Task]) -> None:
        """Every run of one seed, each forked from one warmed worker (``flake_worker``)."""
        project = self.project
        commands = [run_once_command(project, n, s.order)[3:] for _, n, s in runs]
        worker = self.worker(seed)
        process = worker.process
        assert process.stdin is not None
        try:
            with suppress(BrokenPipeError):  # a worker that died at start: its stderr says why
                process.stdin.write("".join(json.dumps(argv) + "\n" for argv in commands))
                process.stdin.close()
            for at, (position, name, schedule) in enumerate(runs):
                line = worker.answer(time.monotonic() + self.timeout, self.stop)
                if not line:
                    lost: BaseException
                    if line is None and self.stop.is_set():
                        lost = KeyboardInterrupt()
                    elif line is None:
                        lost = _timed_out(name, seed, self.timeout)
                    else:
                        lost = _failed(name, seed, worker.end(), worker.stderr())
                    worker.end()
                    for later, _, _ in runs[at:]:
                        self.finished(later, seed, lost)
                    return
                code, output, stderr = json.loads(line)
                run = FlakeRun(seed, schedule, output) if code == 0 else None
                self.finished(position, seed, run or _failed(name, seed, code, stderr))
        finally:
            worker.close()

    def fresh(self, position: int, name: str, seed: int, schedule: LoadSchedule) -> None:
        """One run in a fresh process (where runs cannot fork from a worker)."""
        try:
            outcome: FlakeRun | BaseException = _run(
                self.project, name, seed, schedule, self.timeout
            )
        except (HeaderlockError, subprocess.SubprocessError, OSError) as error:
            outcome = error
        self.finished(position, seed, outcome)


def hunt(
    project: Project,
    names: Sequence[str],
    *,
    runs: int,
    jobs: int = 2,
    progress: Callable[[int, int], None] | None = None,
    workers: dict[int, Worker] | None = None,
    timeout: float = RUN_TIMEOUT,
) -> list[FlakeReport]:
    """Run each scenario ``runs`` times (hash seeds 0..runs-1, varied orders), at most
    ``jobs`` processes at a time, each run within ``timeout`` seconds. One worker per
    hash seed forks every run of that seed (``headerlock.testing.order.flake_worker``;
    ``workers`` started earlier are taken from the dict and used); the reports keep the
    runs in order. Ctrl-C ends every process of the hunt before it propagates."""
    reports = [FlakeReport(name, list(project.scenario(name).plugins)) for name in names]
    outcomes: dict[tuple[int, int], FlakeRun | BaseException] = {}
    done: queue.SimpleQueue[None] = queue.SimpleQueue()

    def finished(position: int, seed: int, outcome: FlakeRun | BaseException) -> None:
        outcomes[position, seed] = outcome
        done.put(None)

    shared = _Hunt(project, timeout, finished, workers if workers is not None else {})
    batches = seed_batches(project, names, runs=runs)
    total = runs * len(names)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        threads = [pool.submit(shared.serve, batches) for _ in range(max(1, min(jobs, runs)))]
        try:
            for count in range(1, total + 1):
                if not _next(done, threads):
                    break
                if progress is not None:
                    progress(count, total)
            for thread in threads:
                thread.result()  # an error of the thread itself
        except BaseException:
            shared.stop.set()  # every worker's group ends within a poll
            raise
    for position, report in enumerate(reports):
        for seed in range(runs):
            outcome = outcomes.get((position, seed))
            if isinstance(outcome, BaseException):
                raise outcome
            assert outcome is not None
            report.runs.append(outcome)
    return reports


def _next(done: queue.SimpleQueue[None], threads: Sequence[Future[None]]) -> bool:
    """Wait for the next finished run; False when every thread ended without one."""
    while True:
        try:
            done.get(timeout=0.2)
            return True
        except queue.Empty:
            if all(thread.done() for thread in threads) and done.empty():
                return False


def table(reports: Sequence[FlakeReport]) -> list[str]:
    """The report: one row per scenario, then the orders behind each distinct result."""
    rows = [("scenario", "runs", "distinct", "first differing path")]
    rows += [
        (r.scenario, str(len(r.runs)), str(len(r.groups())), r.first_difference()) for r in reports
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = [
        "  ".join(cell.ljust(widths[i]) if i < 3 else cell for i, cell in enumerate(row))
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths) + "  " + "-" * 20)
    for report in reports:
        groups = report.groups()
        if len(groups) < 2:
            continue
        lines.append("")
        lines.append(f"{report.scenario}: {len(groups)} distinct recordings")
        for number, group in enumerate(groups, 1):
            lines.append(f"  #{number}: " + "; ".join(report.describe(run) for run in group))
    return [line.rstrip() for line in lines]
