"""Targets set before issue 14, kept as regression figures: tool ordering and writing YAML."""

from __future__ import annotations

import timeit
from collections.abc import Callable
from functools import partial
from typing import Any

import yaml
from syrupy.extensions.amber.serializer import AmberDataSerializer

from benchmarks.model import Check, Plan, measured, seconds
from benchmarks.stats import ratios, run_rounds, spread
from benchmarks.workloads import policy_for, recording_of, session_events, tool_set
from headerlock.agent import order_tools
from headerlock.formats.scrub import scrub_events
from headerlock.formats.strict_yaml import dumps

CDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
QUADRATIC = 50.0
"""Growth from 1,000 to 10,000 tools above which the run fails: quadratic, not n log n."""


def per_call(fn: Callable[[], Any], budget: float) -> float:
    """Seconds per call, from enough calls to take about ``budget`` seconds."""
    number, elapsed = 1, timeit.timeit(fn, number=1)
    if elapsed < budget:
        number = max(1, int(budget / max(elapsed, 1e-7)))
        elapsed = timeit.timeit(fn, number=number)
    return elapsed / number


def ordering(plan: Plan) -> tuple[list[Check], float]:
    """``order_tools`` vs ``sorted()`` at 1,000 and 10,000 tools; returns the growth too."""
    budget = 0.02 if plan.quick else 0.1
    arms: dict[str, Callable[[], float]] = {}
    for n in (1_000, 10_000):
        tools = tool_set(n)
        policy = policy_for(tools)
        by_name = partial(sorted, tools, key=lambda tool: tool.name)
        arms[f"sorted/{n}"] = partial(per_call, by_name, budget)
        arms[f"order_tools/{n}"] = partial(per_call, partial(order_tools, tools), budget)
        arms[f"policy/{n}"] = partial(per_call, partial(order_tools, tools, policy), budget)
    times = run_rounds(arms, plan.rounds)
    growth = ratios(times, "order_tools/10000", "order_tools/1000")
    base_growth = spread(ratios(times, "sorted/10000", "sorted/1000")).median
    checks = [
        measured(0, f"e-{key}", f"{label} vs sorted() by name, 1,000 tools",
                 ratios(times, f"{key}/1000", "sorted/1000"), limit=5.0,
                 a=f"{label}: {seconds(times[f'{key}/1000'])}",
                 b=f"sorted(): {seconds(times['sorted/1000'])}")
        for key, label in (("order_tools", "order_tools"), ("policy", "order_tools + tool_order"))
    ]  # fmt: skip
    checks.append(measured(
        0, "e-growth", "order_tools growth, 1,000 -> 10,000 tools", growth, limit=15.0,
        a=f"10,000 tools: {seconds(times['order_tools/10000'])}",
        b=f"sorted() grew {base_growth:.1f}x in the same rounds",
        note="n log n plus cache effects at 10,000 tools",
    ))  # fmt: skip
    return checks, spread(growth).median


def serialization(plan: Plan) -> list[Check]:
    """Scrub + canonical YAML of a 1,000-event log vs yaml.dump (C) and syrupy's amber."""
    budget = 0.05 if plan.quick else 0.3
    events = session_events(1000)
    data = recording_of(events, pinned=False).to_data()

    def ours() -> float:
        return per_call(lambda: dumps({**data, "events": scrub_events(events)}), budget)

    def c_dump() -> float:
        return per_call(
            lambda: yaml.dump(data, Dumper=CDumper, sort_keys=True, allow_unicode=True), budget
        )

    def amber() -> float:
        return per_call(lambda: AmberDataSerializer.serialize(data), budget)

    times = run_rounds({"ours": ours, "c_dump": c_dump, "amber": amber}, plan.rounds)
    ours_text = f"scrub + canonical YAML: {seconds(times['ours'])}"
    return [
        measured(0, "e-yaml", "scrub + canonical YAML vs yaml.dump (C dumper), 1,000 events",
                 ratios(times, "ours", "c_dump"), limit=1.5, a=ours_text,
                 b=f"yaml.dump: {seconds(times['c_dump'])}"),
        measured(0, "e-amber", "scrub + canonical YAML vs syrupy amber serializer, 1,000 events",
                 ratios(times, "ours", "amber"), limit=1.0, a=ours_text,
                 b=f"amber: {seconds(times['amber'])}"),
    ]  # fmt: skip
