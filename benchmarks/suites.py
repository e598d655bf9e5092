"""Targets 3 and 5a: a suite of scenario replays vs syrupy, and under ``pytest -n 2``."""

from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path

from benchmarks import profiles
from benchmarks.model import Check, Plan, measured, seconds
from benchmarks.procs import env_for, pytest, pytest_command, pytest_timed, run
from benchmarks.projects import scenario_project
from benchmarks.stats import ratios, run_rounds

ARGS = {
    "serial": ("fixtures",),
    "xdist": ("-n", "2", "fixtures"),
    "syrupy": ("plain",),
}


def suites(plan: Plan, root: Path) -> list[Check]:
    """Each round: the scenarios serially, under ``-n 2``, and the syrupy twin.

    Per test is the time from collection to the end of the session (the
    start-up before it is target 1's), divided by the number of tests.
    """
    project = root / "scenarios"
    n = plan.scenarios
    scenario_project(project, n)
    env = env_for(project)
    run(pytest_command("fixtures", "--snapshot-update"), project, env=env)
    run(pytest_command("plain", "--snapshot-update"), project, env=env)
    session: dict[str, list[float]] = {"serial": [], "syrupy": []}

    def arm(name: str) -> float:
        if name not in session:
            return pytest(project, *ARGS[name], env=env)
        wall, inside = pytest_timed(project, *ARGS[name], env=env)
        session[name].append(inside)
        return wall

    names = [name for name in ARGS if not (plan.quick and name == "xdist")]  # quick: < 1 min
    times = run_rounds(
        {name: partial(arm, name) for name in names}, plan.process_rounds, warmup=plan.warmup
    )
    per_test = {name: [t / n for t in values[plan.warmup :]] for name, values in session.items()}
    checks = [
        measured(
            3, "3", f"scenario replay per test ({n} scenarios + the guards item) vs a syrupy"
            " amber assert of the same events, collection to session end",
            ratios(per_test, "serial", "syrupy"), limit=2.0,
            a=f"headerlock: {seconds(per_test['serial'])}/test",
            b=f"syrupy: {seconds(per_test['syrupy'])}/test",
            note=f"whole runs: {seconds(times['serial'])} vs {seconds(times['syrupy'])}",
            rounds={**times, **{f"{k}_per_test": v for k, v in per_test.items()}},
        ),
        measured(
            5, "5a", f"pytest -n 2 vs serial, {n} scenarios (speed-up)",
            ratios(times, "serial", "xdist"), limit=1.6, at_most=False,
            a=f"-n 2: {seconds(times['xdist'])}", b=f"serial: {seconds(times['serial'])}",
        ) if "xdist" in times else None,
    ]  # fmt: skip
    return [c for c in checks if c is not None]


def _half(project: Path) -> Path:
    """A copy of ``project`` with the first half of its scenarios (one -n 2 worker's share)."""
    half = project.parent / "half"
    shutil.copytree(project, half, ignore=shutil.ignore_patterns("__pycache__", "plain"))
    files = sorted((half / "fixtures").glob("*.yaml"))
    for path in files[len(files) // 2 :]:
        path.unlink()
        (half / "recordings" / path.name).unlink()
    return half


def profile(plan: Plan, root: Path) -> dict[str, str]:
    """Where a serial and an xdist run spend their time, and a cProfile of the serial run."""
    project = root / "scenarios"
    env = env_for(project)
    half = _half(project)
    phases = {
        "pytest start-up, no tests": (project, ("empty",)),
        "collect only, serial": (project, ("--collect-only", "fixtures")),
        "-n 2, no tests (the controller and two workers start)": (project, ("-n", "2", "empty")),
        "replay, serial": (project, ("fixtures",)),
        "replay, -n 2": (project, ("-n", "2", "fixtures")),
        "replay serially, half the scenarios (one -n 2 worker's share)": (half, ("fixtures",)),
    }
    lines = []
    for label, (where, args) in phases.items():
        wall = pytest(where, *args, env=env_for(where), ok=(0, 5))
        lines.append(f"{wall:8.2f} s  {label}")
    serial = pytest_command(*ARGS["serial"])[2:]
    return {
        "phases (one run each, wall seconds)": "\n".join(lines) + "\n",
        "cProfile of the serial replay run": (
            profiles.profile_process(project, serial, env, restrict=profiles.OURS)
        ),
    }
