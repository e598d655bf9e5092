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
from headerlock.runtime.driver import ModelSource
from headerlock.testing.order.plugin_orders import check_scenario_orders
from headerlock.testing.scenario.project import Project
from headerlock.testing.scenario.run import run_scenario

FLAKY = "tool-turn"
"""The bundled scenario of the one-scenario figure."""
TOOLS = 7
SEVEN_TOOLS = (
    "config: {model: bench, persona: Benchmark persona.}\n"
    "plugins: [" + ", ".join(f"benchmarks.workloads:tool_{i}" for i in range(TOOLS)) + "]\n"
    "steps: [{prompt: go}]\nmodel: [{tool_calls: [{name: t3, arguments: {path: a.txt}}]},"
    " {text: done}]\n"
)


def _flakes_project(root: Path) -> tuple[Path, list[str]]:
    """A copy of the bundled in-process (``app: spine``) scenarios and their recordings."""
    project = root / "flakes"
    names = sorted(p.stem for p in (REPO / "fixtures").glob("*.yaml")
                   if "\napp: spine\n" in f"\n{p.read_text(encoding='utf-8')}")  # fmt: skip
    for kind in ("fixtures", "recordings"):
        (project / kind).mkdir(parents=True)
        for name in names:
            shutil.copy(REPO / kind / f"{name}.yaml", project / kind / f"{name}.yaml")
    return project, names


def _flakes_command(project: Path, runs: int, *names: str) -> list[str]:
    return [
        sys.executable, "-m", "headerlock", "flakes", *names, "--runs", str(runs), "--jobs", "2",
        "--fixtures", str(project / "fixtures"), "--recordings", str(project / "recordings"),
    ]  # fmt: skip


def flakes(plan: Plan, root: Path) -> list[Check]:
    """``headerlock flakes --jobs 2`` on every bundled spine scenario and on one, vs bare
    interpreters started two at a time."""
    project, names = _flakes_project(root)
    env = env_for(project)
    runs = plan.flake_runs
    every, one = _flakes_command(project, runs), _flakes_command(project, runs, FLAKY)

    def bare() -> float:
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(
                pool.map(
                    lambda _: run([sys.executable, "-c", "pass"], project, env=env), range(runs)
                )
            )
        return time.perf_counter() - started

    arms = {"all": lambda: run(every, project, env=env)[0],
            "one": lambda: run(one, project, env=env)[0], "bare": bare}  # fmt: skip
    times = run_rounds(arms, plan.rounds, warmup=plan.warmup)
    per_run = {"all": [t / (runs * len(names)) for t in times["all"]],
               "one": [t / runs for t in times["one"]], "bare": [t / runs for t in times["bare"]]}  # fmt: skip
    floor = f"bare `python -c pass`: {seconds(per_run['bare'])}/run"
    return [
        measured(
            5, "5b", f"headerlock flakes, seconds per run (the {len(names)} bundled spine scenarios"
            f" x {runs} runs, --jobs 2)", per_run["all"], limit=0.15, unit=" s",
            a=f"flakes: {seconds(per_run['all'])}/run", b=floor,
            note=f"scenarios: {', '.join(names)}; one worker per hash seed forks its runs",
            rounds=times,
        ),
        measured(
            5, "5b-one", f"headerlock flakes, seconds per run (one scenario, {FLAKY}, x {runs} runs)",
            per_run["one"], limit=None, unit=" s", a=f"flakes: {seconds(per_run['one'])}/run",
            b=floor, note="context: every hash seed has one run, so no worker is reused",
        ),
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
    """Where a flakes run's time goes: a worker's imports, one run, the parent process."""
    project = root / "flakes"
    env = env_for(project)
    where = ["--fixtures", str(project / "fixtures"), "--recordings", str(project / "recordings")]
    once = ["headerlock", "run-once", FLAKY, *where]
    bare = profiles.imports([sys.executable, "-c", "pass"], project, env)
    worker = profiles.imports([sys.executable, "-m", "headerlock", "flake-worker"], project, env)
    wall = [run([sys.executable, "-m", *once], project, env=env)[0] for _ in range(3)]
    started = [run([sys.executable, "-m", "headerlock", "flake-worker"], project, env=env)[0]
               for _ in range(3)]  # fmt: skip
    floor = [run([sys.executable, "-c", "pass"], project, env=env)[0] for _ in range(3)]
    every = _flakes_command(project, plan.flake_runs)[2:]
    return {
        "processes, wall seconds (best of 3)": (
            f"a flake-worker that starts, imports and ends: {min(started):.3f} s\n"
            f"one run-once process (a whole run, unforked): {min(wall):.3f} s\n"
            f"a bare interpreter: {min(floor):.3f} s\n"
        ),
        "imports of a flake-worker beyond a bare interpreter (-X importtime)": (
            profiles.import_diff(worker, bare)
        ),
        "cProfile of one run-once process (the work a forked run does)": (
            profiles.profile_process(project, once, env, restrict=profiles.OURS)
        ),
        "cProfile of the flakes parent process (all scenarios)": (
            profiles.profile_process(project, every, env, restrict=profiles.OURS)
        ),
    }


def profile_orders(plan: Plan, root: Path) -> dict[str, str]:
    """cProfile of one permutation check."""
    project, model = _seven_tools(root / "profile-orders")
    scenario = project.scenario("seven-tools")
    check = partial(run_sync, check_scenario_orders(scenario, model, plan.orders))
    return {f"cProfile of a {plan.orders}-order check": profiles.profile_call(check)}
