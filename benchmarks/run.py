"""The benchmark runner: paired A/B rounds for every target of issues 14, 20 and 22.

Each figure is the median of alternating rounds (headerlock, then its
baseline, then the other way round) with the spread of the per-round values;
``--quick`` runs smaller workloads and fewer rounds (a CI smoke run).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks import (
    cache,
    earlier,
    linear,
    peers,
    profiles,
    report,
    scaling,
    startup,
    suites,
    throughput,
    wire,
)
from benchmarks.model import CONTEXT, ERROR, MET, NOT_MET, Check, Plan, missing

RESULTS = Path(__file__).parent / "results.json"
Measure = Callable[[Plan, Path], list[Check]]
Profile = Callable[[Plan, Path], dict[str, str]]


@dataclass(frozen=True, slots=True)
class Workload:
    """One workload: the targets it measures, how, and how to profile it when unmet."""

    name: str
    targets: tuple[int, ...]
    measure: Measure
    profile: Profile | None = None
    title: str = ""


def _earlier(plan: Plan, root: Path) -> list[Check]:
    checks, growth = earlier.ordering(plan)
    if growth > earlier.QUADRATIC:
        checks.append(missing(0, "e-quadratic", "order_tools is quadratic", "", ERROR,
                              f"grew {growth:.0f}x from 1,000 to 10,000 tools"))  # fmt: skip
    return checks + earlier.serialization(plan)


WORKLOADS = (
    Workload("startup", (1, 22), startup.startup, startup.profile,
             "Target 1: start-up tax of the pytest plugin; issue 22: with the wire fixture"),
    Workload("wire", (22,), wire.wire, wire.profile,
             "Issue 22 row 1: 1,000 wire tests, whole runs, vs pytest-recording, cassetter, floor"),
    Workload("peers", (22,), peers.peers, peers.profile,
             "Issue 22 rows 2-5: in-process workloads vs pytest-recording, cassetter, floor"),
    Workload("suites", (3, 5), suites.suites, suites.profile,
             "Targets 3 and 5a: scenario replay per test vs syrupy; pytest -n 2 vs serial"),
    Workload("scaling", (4,), scaling.scaling, scaling.profile,
             "Target 4: load + normalize + compare scaling, memory, 100k tool calls"),
    Workload("flakes", (5,), throughput.flakes, throughput.profile_flakes,
             "Target 5b: headerlock flakes per run"),
    Workload("orders", (6,), throughput.permutations, throughput.profile_orders,
             "Target 6: permutation checks per second"),
    Workload("earlier", (0,), _earlier),
    Workload("linear", (31,), linear.linear, linear.profile,
             "Issue 31: record time per step flat to 32,000 steps; mismatching replay <= 1.5x"),
    Workload("cache", (20,), cache.cache, None,
             "Issue 20: cache report time per request; promptcachelint side by side"),
)  # fmt: skip


def _measure(workload: Workload, plan: Plan, root: Path) -> list[Check]:
    try:
        return workload.measure(plan, root)
    except Exception as error:  # one broken workload must not hide the others
        tail = "".join(traceback.format_exception_only(error)).strip()[-1500:]
        return [missing(t, f"{t}-error", f"{workload.name} workload failed", "-", ERROR, tail)
                for t in workload.targets]  # fmt: skip


def _profile(workload: Workload, plan: Plan, root: Path, checks: Sequence[Check]) -> str:
    """Write the workload's profile when one of its checks is not met; drop a stale one."""
    path = profiles.PROFILES / f"{workload.name}.txt"
    if workload.profile is None:
        return ""
    if not any(c.status == NOT_MET for c in checks):
        if path.exists() and all(c.status in (MET, CONTEXT) for c in checks):
            path.unlink()  # every target met: the old profile is stale
        return ""
    try:
        sections = workload.profile(plan, root)
    except Exception as error:
        sections = {"profiling failed": "".join(traceback.format_exception_only(error))}
    unmet = "; ".join(
        f"{c.key}: {c.shown()} (goal {c.goal})" for c in checks if c.status == NOT_MET
    )
    return str(profiles.write(workload.name, f"{workload.title} -- not met: {unmet}", sections))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small workloads, 3 rounds (CI)")
    parser.add_argument("--output", type=Path, default=RESULTS, help="results file (JSON)")
    parser.add_argument("--only", default="", help="comma-separated workloads: "
                        + ", ".join(w.name for w in WORKLOADS))  # fmt: skip
    parser.add_argument("--no-profiles", action="store_true", help="skip profiling unmet targets")
    args = parser.parse_args(argv)
    plan = Plan.make(quick=args.quick, profiles=not (args.quick or args.no_profiles))
    only = {name for name in args.only.split(",") if name}
    unknown = only - {w.name for w in WORKLOADS}
    if unknown:
        parser.error(f"unknown workload(s): {', '.join(sorted(unknown))}")
    started, load = time.perf_counter(), list(os.getloadavg())
    checks: list[Check] = []
    with tempfile.TemporaryDirectory(prefix="headerlock-bench-") as temp:
        for workload in WORKLOADS:
            if only and workload.name not in only:
                continue
            root = Path(temp) / workload.name
            root.mkdir()
            began = time.perf_counter()
            mine = _measure(workload, plan, root)
            print(f"== {workload.name} ({time.perf_counter() - began:.0f} s)", flush=True)
            print("\n".join(report.console(mine)), flush=True)
            if plan.profiles:
                written = _profile(workload, plan, root, mine)
                if written:
                    print(f"   profile: {written}", flush=True)
            checks += mine
    data = report.results(plan, checks, time.perf_counter() - started, load)
    args.output.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print("\n".join(["", *report.summary(data)]))
    print(f"\n{'quick' if plan.quick else 'full'} run in {data['seconds']:.0f} s -> {args.output}")
    full = args.output.resolve() == RESULTS.resolve() and not plan.quick
    if full and report.update_readme(data, checks):  # with --only: those workloads' rows
        print(f"table updated in {report.README}")
    return 1 if any(c.status == ERROR for c in checks) else 0
