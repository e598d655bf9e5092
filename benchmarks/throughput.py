"""Targets 5b and 6: ``headerlock flakes`` per run, and permutation checks per second."""

from __future__ import annotations

import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

from benchmarks import profiles
from benchmarks.model import Check, Plan, measured, seconds
from benchmarks.procs import REPO, env_for, run
from benchmarks.stats import ratios, run_rounds
from headerlock.runtime.aio import run_sync
from headerlock.testing.order_check import check_scenario_orders
from headerlock.testing.project import Project
from headerlock.testing.run import ModelSource, run_scenario

FLAKY = "tool-turn"
PIN = "text-turn"
"""The bundled spine scenario flakes runs, and the pin of its header class."""
TOOLS = 7
SEVEN_TOOLS = (
    "config: {model: bench, persona: Benchmark persona.}\n"
    "plugins: [" + ", ".join(f"benchmarks.workloads:tool_{i}" for i in range(TOOLS)) + "]\n"
    "steps: [{prompt: go}]\nmodel: [{tool_calls: [{name: t3, arguments: {path: a.txt}}]},"
    " {text: done}]\n"
)


def _flakes_project(root: Path) -> Path:
    project = root / "flakes"
    for kind in ("fixtures", "recordings"):
        (project / kind).mkdir(parents=True)
        for name in (FLAKY, PIN):
            shutil.copy(REPO / kind / f"{name}.yaml", project / kind / f"{name}.yaml")
    return project


def _flakes_command(project: Path, runs: int) -> list[str]:
    return [
        sys.executable, "-m", "headerlock", "flakes", FLAKY, "--runs", str(runs), "--jobs", "2",
        "--fixtures", str(project / "fixtures"), "--recordings", str(project / "recordings"),
    ]  # fmt: skip


def flakes(plan: Plan, root: Path) -> list[Check]:
    """``headerlock flakes`` (``--jobs 2``) vs as many bare interpreters, two at a time."""
    project = _flakes_project(root)
    env = env_for(project)
    runs = plan.flake_runs
    command = _flakes_command(project, runs)

    def bare() -> float:
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(
                pool.map(
                    lambda _: run([sys.executable, "-c", "pass"], project, env=env), range(runs)
                )
            )
        return time.perf_counter() - started

    times = run_rounds(
        {"flakes": lambda: run(command, project, env=env)[0], "bare": bare},
        plan.rounds,
        warmup=plan.warmup,
    )
    per_run = [t / runs for t in times["flakes"]]
    return [
        measured(
            5, "5b", f"headerlock flakes, seconds per run ({runs} runs of {FLAKY}, --jobs 2)",
            per_run, limit=0.15, unit=" s", a=f"flakes: {seconds(per_run)}/run",
            b=f"bare `python -c pass`: {seconds([t / runs for t in times['bare']])}/run",
            note="flakes / bare interpreter, per round: "
            f"{sorted(ratios(times, 'flakes', 'bare'))[len(per_run) // 2]:.1f}x (median)",
            rounds=times,
        )
    ]  # fmt: skip


def _seven_tools(root: Path) -> tuple[Project, ModelSource]:
    fixtures = root / "orders" / "fixtures"
    fixtures.mkdir(parents=True)
    (fixtures / "seven-tools.yaml").write_text(SEVEN_TOOLS)
    project = Project(fixtures, root / "orders" / "recordings")
    scenario = project.scenario("seven-tools")
    assert scenario.model is not None
    return project, ModelSource(replies=scenario.model)


def permutations(plan: Plan, root: Path) -> list[Check]:
    """Orders checked per second on a 7-plugin, 7-tool scenario vs one plain run of it."""
    project, model = _seven_tools(root)
    scenario = project.scenario("seven-tools")

    def orders() -> float:
        started = time.perf_counter()
        ran = run_sync(check_scenario_orders(scenario, model, plan.orders))
        return (time.perf_counter() - started) / ran

    def plain() -> float:
        started = time.perf_counter()
        for _ in range(20):
            run_sync(run_scenario(scenario, model))
        return (time.perf_counter() - started) / 20

    times = run_rounds({"orders": orders, "plain": plain}, plan.rounds)
    rate = [1 / t for t in times["orders"]]
    return [
        measured(
            6, "6", f"permutation check, orders/s ({TOOLS} one-tool plugins, {plan.orders} orders"
            " per check)", rate, limit=500, at_most=False, unit=" orders/s",
            a=f"{seconds(times['orders'])}/order", b=f"plain run: {seconds(times['plain'])}",
            note=f"no bundled scenario has {TOOLS} tools (the demo registers 5 in 2 plugins, 2 "
            "orders); per order / plain run: "
            f"{sorted(ratios(times, 'orders', 'plain'))[len(rate) // 2]:.2f}x", rounds=times,
        )
    ]  # fmt: skip


def profile_flakes(plan: Plan, root: Path) -> dict[str, str]:
    """Where one flakes run's process spends its time: imports, then the run."""
    project = root / "flakes"
    env = env_for(project)
    once = ["headerlock", "run-once", FLAKY, "--fixtures", str(project / "fixtures"),
            "--recordings", str(project / "recordings")]  # fmt: skip
    bare = profiles.imports([sys.executable, "-c", "pass"], project, env)
    mine = profiles.imports([sys.executable, "-m", *once], project, env)
    wall = [run([sys.executable, "-m", *once], project, env=env)[0] for _ in range(3)]
    floor = [run([sys.executable, "-c", "pass"], project, env=env)[0] for _ in range(3)]
    return {
        "one `headerlock run-once` process (what flakes starts per run), wall seconds": (
            f"run-once: {min(wall):.3f} s (best of 3); bare interpreter: {min(floor):.3f} s\n"
        ),
        "imports of one run-once process beyond a bare interpreter (-X importtime)": (
            profiles.import_diff(mine, bare)
        ),
        "cProfile of one run-once process": (
            profiles.profile_process(project, once, env, restrict=profiles.OURS)
        ),
    }


def profile_orders(plan: Plan, root: Path) -> dict[str, str]:
    """cProfile of one permutation check."""
    project, model = _seven_tools(root / "profile-orders")
    scenario = project.scenario("seven-tools")
    check = partial(run_sync, check_scenario_orders(scenario, model, plan.orders))
    return {f"cProfile of a {plan.orders}-order check": profiles.profile_call(check)}
