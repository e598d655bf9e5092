"""``headerlock flakes``: run scenarios in fresh processes under different hash seeds
and registration orders, and report those whose recorded bytes differ."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field

from headerlock.errors import HeaderlockError
from headerlock.formats.explain import changed_paths, tool_order_changes
from headerlock.formats.strict_yaml import loads
from headerlock.runtime.plugins import subprocess_env
from headerlock.testing.order.flake_worker import FORKS, Worker, worker_command
from headerlock.testing.order.schedules import LoadSchedule, schedules
from headerlock.testing.scenario.project import Project

RUN_TIMEOUT = 300.0


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
    return HeaderlockError(
        f"run of {name!r} (seed {seed}) failed with exit {code}: {stderr.strip()[-2000:]}"
    )


def _run(project: Project, name: str, seed: int, schedule: LoadSchedule) -> FlakeRun:
    result = subprocess.run(
        run_once_command(project, name, schedule.order),
        env=subprocess_env(PYTHONHASHSEED=str(seed)),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    if result.returncode != 0:
        raise _failed(name, seed, result.returncode, result.stderr)
    return FlakeRun(seed, schedule, result.stdout)


Task = tuple[int, str, LoadSchedule]
"""A run: its index among all runs, the scenario and its schedule."""
Finished = Callable[[int, "FlakeRun | BaseException"], None]


def _seed_runs(
    project: Project, seed: int, runs: Sequence[Task], finished: Finished, worker: Worker | None
) -> None:
    """Every run of one hash seed, each forked from one warmed worker (``flake_worker``)."""
    commands = [run_once_command(project, name, schedule.order)[3:] for _, name, schedule in runs]
    worker = worker or Worker.start(seed)
    process = worker.process
    assert process.stdin is not None and process.stdout is not None
    timer: threading.Timer | None = None
    try:
        with suppress(BrokenPipeError):  # a worker that died at start: its stderr says why
            process.stdin.write("".join(json.dumps(argv) + "\n" for argv in commands))
            process.stdin.close()
        for position, (index, name, schedule) in enumerate(runs):
            timer = threading.Timer(RUN_TIMEOUT, process.kill)
            timer.start()
            line = process.stdout.readline()
            timer.cancel()
            if not line:
                lost = _lost(worker, name, seed, commands[position])
                for later, _, _ in runs[position:]:
                    finished(later, lost)
                return
            code, output, stderr = json.loads(line)
            run = FlakeRun(seed, schedule, output) if code == 0 else None
            finished(index, run or _failed(name, seed, code, stderr))
    finally:
        if timer is not None:
            timer.cancel()
        worker.close()


def _lost(worker: Worker, name: str, seed: int, argv: list[str]) -> BaseException:
    """Why a worker stopped answering: killed at the timeout, or it ended."""
    code = worker.process.wait()
    if code == -signal.SIGKILL:
        return subprocess.TimeoutExpired([*worker_command(), *argv], RUN_TIMEOUT)
    return _failed(name, seed, code, worker.stderr())


def _one(
    project: Project, index: int, name: str, seed: int, schedule: LoadSchedule, finished: Finished
) -> None:
    """One run in a fresh process (where runs cannot fork from a worker)."""
    try:
        outcome: FlakeRun | BaseException = _run(project, name, seed, schedule)
    except (HeaderlockError, subprocess.SubprocessError, OSError) as error:
        outcome = error
    finished(index, outcome)


def hunt(
    project: Project,
    names: Sequence[str],
    *,
    runs: int,
    jobs: int = 2,
    progress: Callable[[int, int], None] | None = None,
    workers: dict[int, Worker] | None = None,
) -> list[FlakeReport]:
    """Run each scenario ``runs`` times (hash seeds 0..runs-1, varied orders), at most
    ``jobs`` processes at a time. One worker per hash seed forks every run of that
    seed (``headerlock.testing.order.flake_worker``; ``workers`` started earlier are taken
    from the dict and used); the reports keep the runs in order."""
    reports = []
    tasks: list[tuple[FlakeReport, int, LoadSchedule]] = []
    for name in names:
        scenario = project.scenario(name)
        report = FlakeReport(name, list(scenario.plugins))
        reports.append(report)
        plan = schedules(runs, len(report.plugins), seed=name)
        for index in range(runs):
            tasks.append((report, index, plan[index % len(plan)]))
    outcomes: list[FlakeRun | BaseException | None] = [None] * len(tasks)
    done: queue.SimpleQueue[int] = queue.SimpleQueue()

    def finished(index: int, outcome: FlakeRun | BaseException) -> None:
        outcomes[index] = outcome
        done.put(index)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        if FORKS:
            by_seed: dict[int, list[Task]] = {}
            for index, (report, seed, schedule) in enumerate(tasks):
                by_seed.setdefault(seed, []).append((index, report.scenario, schedule))
            started = workers if workers is not None else {}
            batches = [
                pool.submit(_seed_runs, project, seed, mine, finished, started.pop(seed, None))
                for seed, mine in by_seed.items()
            ]
        else:
            batches = [
                pool.submit(_one, project, index, report.scenario, seed, schedule, finished)
                for index, (report, seed, schedule) in enumerate(tasks)
            ]
        for count in range(1, len(tasks) + 1):
            if not _next(done, batches):
                break
            if progress is not None:
                progress(count, len(tasks))
        for batch in batches:
            batch.result()  # an error of the thread itself
    for (report, _, _), outcome in zip(tasks, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            raise outcome
        assert outcome is not None
        report.runs.append(outcome)
    return reports


def _next(done: queue.SimpleQueue[int], batches: Sequence[Future[None]]) -> bool:
    """Wait for the next finished run; False when every batch ended without one."""
    while True:
        try:
            done.get(timeout=0.2)
            return True
        except queue.Empty:
            if all(batch.done() for batch in batches) and done.empty():
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
