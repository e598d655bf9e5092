"""Order invariance: registration order must never change the recorded bytes.

``assert_plugin_order_invariant`` checks an app you build; ``check_scenario_orders``
checks a scenario fixture. Both compare the *pinned* normalization (full
headers kept), so a changed tool order cannot hide behind ``<<tools>>``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from headerlock.errors import OrderDependenceError
from headerlock.formats.explain import explain
from headerlock.formats.fixture import Scenario
from headerlock.formats.recording import Recording
from headerlock.formats.scrub import scrub_events
from headerlock.formats.strict_yaml import dumps
from headerlock.runtime.aio import run_sync
from headerlock.runtime.app import AgentApp
from headerlock.runtime.context import Plugin, plugin_label
from headerlock.runtime.driver import ModelSource
from headerlock.testing.order.schedules import LoadSchedule, schedules
from headerlock.testing.scenario.run import run_scenario


@dataclass(frozen=True, slots=True)
class OrderRun:
    """One scenario run under one schedule: its full-header recording."""

    schedule: LoadSchedule
    data: dict[str, Any]


def _differs(
    subject: str, names: Sequence[str], base: OrderRun, other: OrderRun
) -> OrderDependenceError:
    first, second = base.schedule.describe(names), other.schedule.describe(names)
    detail = explain(
        base.data,
        other.data,
        expected_text=dumps(base.data),
        actual_text=dumps(other.data),
        names=("first order", "second order"),
    )
    return OrderDependenceError(
        f"{subject}: registration order changed the recorded bytes\n"
        f"  first order:  {first}\n  second order: {second}\n{detail}",
        first=first,
        second=second,
    )


async def _app_log(
    make_app: Callable[[Sequence[Plugin]], AgentApp],
    plugins: Sequence[Plugin],
    prompts: Sequence[str],
) -> list[dict[str, Any]]:
    app = make_app(plugins)
    async with app:
        for prompt in prompts:
            await app.run_turn(prompt)
    return scrub_events(app.session.to_data(), pinned=True, workspace=str(app.workspace.resolve()))


LogOf = Callable[[Sequence[Plugin]], list[dict[str, Any]]]


def _check_orders(log_of: LogOf, plugins: list[Plugin], max_examples: int, shrink: bool) -> None:
    # Hypothesis is imported here: running a scenario under one schedule (the flakes
    # worker, run_under) should not pay for importing it.
    from hypothesis import HealthCheck, Phase, given, settings

    from headerlock.testing.order.strategies import load_schedules, registration_orders

    names = [plugin_label(p).rsplit(":", 1)[-1] for p in plugins]
    size = len(plugins)
    identity = LoadSchedule(tuple(range(size)))
    baseline = OrderRun(identity, {"events": log_of(plugins)})

    @settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        phases=tuple(Phase) if shrink else (Phase.explicit, Phase.reuse, Phase.generate),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(registration_orders(range(size)), load_schedules(plugins))
    def check(order: list[int], timing: LoadSchedule) -> None:
        schedule = LoadSchedule(tuple(order), timing.delays, timing.yields)
        log = {"events": log_of(schedule.apply(plugins))}
        if log != baseline.data:
            raise _Diverged(OrderRun(schedule, log))  # cheap while Hypothesis shrinks

    try:
        check()
    except _Diverged as diverged:
        raise _differs("app", names, baseline, diverged.run) from None


def assert_plugin_order_invariant(
    make_app: Callable[[Sequence[Plugin]], AgentApp],
    plugins: Sequence[Plugin],
    *,
    prompts: Sequence[str] = ("hi",),
    max_examples: int = 50,
    shrink: bool = True,
) -> None:
    """Run ``make_app(plugins)`` under many registration orders and load schedules.

    ``make_app`` must build a fresh app (with a fresh adapter) from the plugins
    in the order given. Raises ``OrderDependenceError`` with the minimal
    (shrunk) differing order and a diff naming the tools involved;
    ``shrink=False`` reports the first differing order found, sooner. Inside a
    running event loop, await ``assert_plugin_order_invariant_async`` instead.
    """

    def log_of(ordered: Sequence[Plugin]) -> list[dict[str, Any]]:
        return run_sync(_app_log(make_app, ordered, prompts))

    _check_orders(log_of, list(plugins), max_examples, shrink)


async def assert_plugin_order_invariant_async(
    make_app: Callable[[Sequence[Plugin]], AgentApp],
    plugins: Sequence[Plugin],
    *,
    prompts: Sequence[str] = ("hi",),
    max_examples: int = 50,
    shrink: bool = True,
) -> None:
    """``assert_plugin_order_invariant`` for async code: every app runs on the caller's
    running event loop (Hypothesis drives the examples from a worker thread)."""
    loop = asyncio.get_running_loop()

    def log_of(ordered: Sequence[Plugin]) -> list[dict[str, Any]]:
        future = asyncio.run_coroutine_threadsafe(_app_log(make_app, ordered, prompts), loop)
        return future.result()

    await asyncio.to_thread(_check_orders, log_of, list(plugins), max_examples, shrink)


class _Diverged(AssertionError):
    def __init__(self, run: OrderRun) -> None:
        super().__init__(f"recorded bytes differ under order {run.schedule.order}")
        self.run = run


async def run_under(scenario: Scenario, model: ModelSource, schedule: LoadSchedule) -> OrderRun:
    """Run ``scenario`` under ``schedule``; the data keeps full headers."""
    output = await run_scenario(scenario, model, schedule=schedule)
    events = scrub_events(output.events, pinned=True, workspace=output.workspace)
    record = Recording(scenario.name, scenario.app, True, scenario.header_class, events)
    return OrderRun(schedule, record.to_data())


async def check_scenario_orders(scenario: Scenario, model: ModelSource, count: int) -> int:
    """Run ``scenario`` under ``count`` registration orders; raise on any divergence.

    Returns how many orders ran (fewer when the plugins have fewer permutations).
    """
    plugins = list(scenario.plugins)
    names = [p.rsplit(":", 1)[-1] for p in plugins]
    planned = schedules(count, len(plugins), seed=scenario.name)
    baseline = await run_under(scenario, model, planned[0])
    for schedule in planned[1:]:
        run = await run_under(scenario, model, schedule)
        if run.data != baseline.data:
            raise _differs(f"scenario {scenario.name!r}", names, baseline, run)
    return len(planned)
