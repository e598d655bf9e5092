"""The benchmark harness: pairing, medians and verdicts, and the synthetic long sessions."""

from __future__ import annotations

from typing import Any

import pytest
from benchmarks.model import MET, NOT_MET, Plan, measured
from benchmarks.stats import judge, net_ratios, quantile, ratios, rotation, run_rounds, spread
from benchmarks.workloads import agent_events, long_session


def test_quantiles_interpolate_like_numpy() -> None:
    values = [4.0, 1.0, 3.0, 2.0]
    assert quantile(values, 0.5) == 2.5
    assert quantile(values, 0.25) == 1.75
    assert quantile(values, 0.75) == 3.25
    summary = spread([5.0, 1.0, 3.0])
    assert (summary.median, summary.low, summary.high, summary.n) == (3.0, 1.0, 5.0, 3)


def test_rounds_alternate_which_arm_goes_first() -> None:
    assert [rotation(["a", "b"], i) for i in range(3)] == [["a", "b"], ["b", "a"], ["a", "b"]]
    assert rotation(["a", "b", "c"], 1) == ["b", "c", "a"]


def test_run_rounds_pairs_each_round_and_drops_the_warmup() -> None:
    calls: list[str] = []
    clock = iter(range(1, 100))

    def arm(name: str) -> Any:
        def measure() -> float:
            calls.append(name)
            return float(next(clock))

        return measure

    times = run_rounds({"a": arm("a"), "b": arm("b")}, 3, warmup=1)
    assert calls == ["a", "b", "b", "a", "a", "b", "b", "a"]
    # warmup gave a=1, b=2; then b=3 a=4, a=5 b=6, b=7 a=8
    assert times == {"a": [4.0, 5.0, 8.0], "b": [3.0, 6.0, 7.0]}
    assert ratios(times, "a", "b") == [4 / 3, 5 / 6, 8 / 7]


def test_budget_stops_adding_rounds_but_keeps_one() -> None:
    times = run_rounds({"a": lambda: 1.0, "b": lambda: 1.0}, 7, warmup=0, budget=0.0)
    assert times == {"a": [1.0], "b": [1.0]}


def test_net_ratios_subtract_the_floor_of_the_same_round() -> None:
    times = {"a": [3.0, 5.0], "b": [2.0, 3.0], "floor": [1.0, 1.0]}
    assert net_ratios(times, "a", "b", "floor") == [2.0, 2.0]


def test_verdict_is_the_median_and_borderline_when_the_iqr_straddles_the_goal() -> None:
    assert judge(spread([1.0, 1.05, 1.08]), 1.1, at_most=True) == (True, True)
    assert judge(spread([1.0, 1.05, 1.3]), 1.1, at_most=True) == (True, False)
    assert judge(spread([1.7, 1.8, 1.9]), 1.6, at_most=False) == (True, True)
    clear = measured(1, "1a", "x", [1.2, 1.3, 1.25], limit=1.1)
    assert (clear.status, clear.verdict(), clear.goal) == (NOT_MET, "NOT MET", "<= 1.1x")
    rate = measured(6, "6", "x", [600.0, 700.0], limit=500, at_most=False, unit=" orders/s")
    assert rate.status == MET and rate.goal == ">= 500 orders/s"


def test_quick_plan_still_pairs_and_full_plan_has_seven_rounds() -> None:
    quick, full = Plan.make(quick=True, profiles=False), Plan.make(quick=False, profiles=True)
    assert quick.rounds >= 3 and full.rounds >= 7 and full.startup_rounds >= 7
    assert max(full.sizes) == 100_000 and full.calls == 100_000 and full.wire_tests == 1_000


def _without_timing(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**e, "data": {k: v for k, v in e["data"].items() if k != "elapsed_ms"}} for e in events
    ]


@pytest.mark.parametrize("calls", [1, 2, 3, 25])
def test_long_session_is_what_the_agent_logs(calls: int) -> None:
    assert _without_timing(long_session(calls)) == _without_timing(agent_events(calls + 1))
