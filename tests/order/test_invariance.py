"""Order invariance: the property holds on the runtime, and the detectors catch flakes."""

from __future__ import annotations

import asyncio
import math
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import headerlock.runtime.system_prompt
from headerlock.agent import TOOL_ORDER_REST, AgentApp, ScriptedAdapter
from headerlock.demo.tools import files, todos
from headerlock.errors import OrderDependenceError
from headerlock.runtime.context import Plugin
from headerlock.runtime.driver import ModelSource
from headerlock.testing.order.plugin_orders import (
    assert_plugin_order_invariant,
    check_scenario_orders,
)
from headerlock.testing.scenario.fixtures import parse_scenario
from headerlock.testing.scenario.project import Project
from headerlock.testing.scenario.replay import recorded_replies
from tests import docs, flaky_plugins

TOOLS = [flaky_plugins.alpha, flaky_plugins.bravo, flaky_plugins.charlie, files, todos]


def app_factory(config: dict[str, Any], extra: Sequence[Plugin] = ()) -> Any:
    def make_app(plugins: Sequence[Plugin]) -> AgentApp:
        script = ScriptedAdapter([{"tool_calls": [{"name": "bravo"}]}, "done"])
        return AgentApp(config, plugins=[*plugins, *extra], adapter=script)

    return make_app


@pytest.mark.parametrize("tool_order", [None, ["charlie", TOOL_ORDER_REST, "alpha"]])
def test_the_runtime_is_order_invariant(tool_order: list[str] | None) -> None:
    config: dict[str, Any] = {"model": "demo", "persona": "p"}
    if tool_order:
        config["tool_order"] = tool_order
    assert_plugin_order_invariant(
        app_factory(config), TOOLS, prompts=["go", "again"], max_examples=30
    )


def test_a_registration_order_listener_is_caught_with_the_minimal_orders() -> None:
    with pytest.raises(OrderDependenceError) as info:
        assert_plugin_order_invariant(
            app_factory({"model": "demo"}, [flaky_plugins.registration_order_listener]),
            TOOLS,
            max_examples=20,
        )
    # shrunk: a single swap of two neighbours, no delays; as docs/guides/order.md shows it
    shown = docs.examples("example")["plugin-order-failure"].splitlines()
    assert str(info.value).splitlines()[: len(shown)] == shown
    assert "  second order: alpha, bravo, charlie, todos, files" in shown


def test_the_property_is_not_vacuous(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the normalization switched off (registration order), the check fails."""

    def registration_order(tools: Any, tool_order: Any = None, **kwargs: Any) -> tuple[Any, ...]:
        return tuple(tools)

    monkeypatch.setattr(headerlock.runtime.system_prompt, "order_tools", registration_order)
    with pytest.raises(OrderDependenceError, match="tools order: "):
        assert_plugin_order_invariant(
            app_factory({"model": "demo"}), TOOLS, max_examples=20, shrink=False
        )


BUNDLED = Path(__file__).parents[2]


def test_bundled_spine_scenarios_are_order_invariant() -> None:
    project = Project(BUNDLED / "fixtures", BUNDLED / "recordings")
    for scenario in project.scenarios():
        if scenario.app == "acp":
            continue
        recording = project.require_recording(scenario)
        model = ModelSource(replies=recorded_replies(recording))
        orders = asyncio.run(check_scenario_orders(scenario, model, 6))
        assert orders == min(6, math.factorial(len(scenario.plugins)))


def flaky_scenario(tmp_path: Path, plugin: str) -> Any:
    text = textwrap.dedent(
        f"""\
        config: {{model: demo}}
        plugins: [tests.flaky_plugins:alpha, tests.flaky_plugins:bravo, tests.flaky_plugins:charlie, tests.flaky_plugins:{plugin}]
        steps: [{{prompt: go}}]
        model: [{{text: ok}}]
        """
    )
    return parse_scenario(text, tmp_path / "flaky.yaml")


def test_scenario_orders_catch_the_flaky_listener(tmp_path: Path) -> None:
    scenario = flaky_scenario(tmp_path, "registration_order_listener")
    assert scenario.model is not None
    with pytest.raises(OrderDependenceError) as info:
        asyncio.run(check_scenario_orders(scenario, ModelSource(replies=scenario.model), 8))
    message = str(info.value)
    assert "scenario 'flaky': registration order changed the recorded bytes" in message
    assert "first order:  alpha, bravo, charlie, registration_order_listener" in message
    assert "events[3].data.header.tools order: alpha, bravo, charlie -> " in message
