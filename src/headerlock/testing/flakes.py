"""``headerlock flakes``: run scenarios in fresh processes under different hash seeds
and registration orders, and report those whose recorded bytes differ."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from headerlock.errors import HeaderlockError
from headerlock.formats.explain import changed_paths, tool_order_changes
from headerlock.formats.strict_yaml import loads
from headerlock.runtime.driver import subprocess_env
from headerlock.testing.project import Project
from headerlock.testing.schedules import LoadSchedule, schedules

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
        raise HeaderlockError(
            f"run of {name!r} (seed {seed}) failed with exit {result.returncode}:"
            f" {result.stderr.strip()[-2000:]}"
        )
    return FlakeRun(seed, schedule, result.stdout)


def hunt(
    project: Project,
    names: Sequence[str],
    *,
    runs: int,
    jobs: int = 2,
    progress: Callable[[int, int], None] | None = None,
) -> list[FlakeReport]:
    """Run each scenario ``runs`` times (hash seeds 0..runs-1, varied orders)."""
    reports = []
    tasks: list[tuple[FlakeReport, int, LoadSchedule]] = []
    for name in names:
        scenario = project.scenario(name)
        report = FlakeReport(name, list(scenario.plugins))
        reports.append(report)
        plan = schedules(runs, len(report.plugins), seed=name)
        for index in range(runs):
            tasks.append((report, index, plan[index % len(plan)]))
    done = 0
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [
            (report, pool.submit(_run, project, report.scenario, seed, schedule))
            for report, seed, schedule in tasks
        ]
        for report, future in futures:
            report.runs.append(future.result())
            done += 1
            if progress is not None:
                progress(done, len(futures))
    return reports


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
