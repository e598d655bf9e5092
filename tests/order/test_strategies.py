"""The public Hypothesis strategies produce what they promise."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import Phase, find, given, settings, strategies as st
from hypothesis.errors import InvalidArgument

from headerlock.agent import TOOL_ORDER_REST, ToolSchema, validate_tool_order
from headerlock.errors import ToolOrderError
from headerlock.strategies import (
    invalid_tool_orders,
    load_schedules,
    registration_orders,
    tool_names,
    tool_orders,
    tool_schemas,
    tool_sets,
)
from headerlock.testing.order.schedules import LoadSchedule

NAMES = ["read", "write", "bash"]


@given(tool_names(min_size=2, max_size=4))
def test_tool_names_fit_their_bounds_and_can_be_listed_in_a_tool_order(name: str) -> None:
    assert 2 <= len(name) <= 4
    # A name equal to the rest entry would be listed twice here.
    assert validate_tool_order([name, TOOL_ORDER_REST]) == (name, TOOL_ORDER_REST)
    assert ToolSchema.from_data(ToolSchema(name).to_data()).name == name


@pytest.mark.parametrize(
    ("kind", "condition"),
    [
        ("ASCII", lambda name: name.isascii()),
        ("high-BMP", lambda name: any(0x800 <= ord(c) <= 0xFFFF for c in name)),
        ("astral", lambda name: any(ord(c) > 0xFFFF for c in name)),
    ],
)
def test_tool_names_reach_ascii_and_non_ascii_names(kind: str, condition: Any) -> None:
    assert condition(find(tool_names(), condition)), kind


@given(tool_schemas())
def test_tool_schemas_are_schemas(schema: ToolSchema) -> None:
    assert ToolSchema.from_data(schema.to_data()) == schema


@given(tool_sets(max_size=6))
def test_tool_sets_have_distinct_names(tools: list[ToolSchema]) -> None:
    assert len({t.name for t in tools}) == len(tools) <= 6


# An equal twin is rare per example (both schemas drawn minimal): derandomized,
# the verdict is the same on every run.
@settings(derandomize=True, database=None)
@given(tool_sets(min_size=1, max_size=4, shared_names=True))
def test_shared_names_repeat_a_name_with_another_schema(tools: list[ToolSchema]) -> None:
    by_name: dict[str, list[ToolSchema]] = {}
    for tool in tools:
        by_name.setdefault(tool.name, []).append(tool)
    assert 1 <= len(by_name) <= 4
    for twins in by_name.values():
        assert len(twins) <= 2
        assert twins[0] != twins[-1] or len(twins) == 1


def test_shared_names_do_repeat_names() -> None:
    tools = find(
        tool_sets(shared_names=True),
        lambda tools: len({t.name for t in tools}) < len(tools),
        settings=settings(phases=[Phase.generate], database=None),
    )
    twins = [t for t in tools if [u.name for u in tools].count(t.name) == 2]
    assert twins and len({t.name for t in twins}) == len(twins) // 2


@given(tool_orders(NAMES))
def test_tool_orders_are_valid(policy: list[str]) -> None:
    assert validate_tool_order(policy) == tuple(policy)
    assert set(policy) <= {*NAMES, TOOL_ORDER_REST}


@given(invalid_tool_orders(NAMES))
def test_invalid_tool_orders_are_invalid(policy: list[Any]) -> None:
    with pytest.raises(ToolOrderError):
        validate_tool_order(policy)


@given(registration_orders(NAMES))
def test_registration_orders_are_permutations(order: list[str]) -> None:
    assert sorted(order) == sorted(NAMES)


@given(load_schedules(NAMES, max_delay=0.01, max_yields=3))
def test_load_schedules_cover_every_plugin(schedule: LoadSchedule) -> None:
    assert schedule.order == (0, 1, 2)
    assert len(schedule.delays) == len(schedule.yields) == 3
    assert all(0 <= d <= 0.01 for d in schedule.delays)
    assert all(0 <= y <= 3 for y in schedule.yields)


def test_every_ordering_is_reached_with_n_factorial_examples() -> None:
    seen: set[tuple[str, ...]] = set()

    @given(registration_orders(NAMES))
    def collect(order: list[str]) -> None:
        seen.add(tuple(order))

    collect()
    assert len(seen) == 6


@pytest.mark.parametrize(
    "make",
    [
        lambda: tool_names(min_size=0),
        lambda: tool_names(min_size=3, max_size=2),
        lambda: tool_sets(min_size=-1),
        lambda: tool_orders("bash"),
        lambda: invalid_tool_orders("bash"),
        lambda: load_schedules(NAMES, max_delay=-1),
        lambda: load_schedules(NAMES, max_yields=-1),
    ],
)
def test_invalid_arguments_raise_invalid_argument(make: Any) -> None:
    with pytest.raises(InvalidArgument):
        make().example()


def test_strategies_compose_with_data() -> None:
    @given(st.data())
    def draw(data: st.DataObject) -> None:
        tools = data.draw(tool_sets(min_size=1))
        policy = data.draw(tool_orders([t.name for t in tools]))
        assert TOOL_ORDER_REST in policy

    draw()
