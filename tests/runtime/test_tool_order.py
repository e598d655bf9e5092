"""Tool order: the conformance vectors, the RFC's cases and properties."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, strategies as st

from headerlock.agent import TOOL_ORDER_REST, ToolSchema, order_tools, validate_tool_order
from headerlock.errors import ToolOrderError
from headerlock.strategies import invalid_tool_orders, tool_orders, tool_sets

VECTORS = Path(__file__).parents[1] / "vectors" / "tool-order.yaml"
SHARED_VECTORS = Path(__file__).parents[3] / "shared" / "vectors" / "tool-order.yaml"
CASES: list[dict[str, Any]] = yaml.safe_load(VECTORS.read_text(encoding="utf-8"))["cases"]


def names(tools: tuple[ToolSchema, ...]) -> list[str]:
    return [t.name for t in tools]


def permutations_of(items: list[str]) -> list[list[str]]:
    if len(items) <= 6:
        return [list(p) for p in itertools.permutations(items)]
    rng = random.Random(len(items))  # fixed seed: the same sample every run
    return [rng.sample(items, len(items)) for _ in range(200)]


def test_vectors_are_the_shared_ones() -> None:
    if not SHARED_VECTORS.exists():
        pytest.skip("shared/ vectors not beside this checkout")
    assert VECTORS.read_bytes() == SHARED_VECTORS.read_bytes()


def test_vector_count() -> None:
    assert len(CASES) == 17


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_vector(case: dict[str, Any]) -> None:
    policy = case.get("tool_order")
    for permutation in permutations_of(case["tools"]):
        tools = [ToolSchema(n) for n in permutation]
        if "expect" in case:
            got = order_tools(tools, policy, known_names=case.get("known"))
            assert names(got) == case["expect"], permutation
            continue
        if case["stage"] == "construct":
            with pytest.raises(ToolOrderError, match=_literal(case["error"])):
                validate_tool_order(policy)
        with pytest.raises(ToolOrderError, match=_literal(case["error"])):
            order_tools(tools, policy, known_names=case.get("known"))


def _literal(text: str) -> str:
    import re

    return re.escape(text)


def test_full_messages() -> None:
    with pytest.raises(ToolOrderError) as info:
        validate_tool_order([])
    assert str(info.value) == (
        'tool_order must contain the "<unlisted-tools>" rest entry'
        " (where unlisted tools are inserted)"
    )
    assert info.value.kind == "missing-rest"
    with pytest.raises(ToolOrderError) as info:
        order_tools(
            [ToolSchema("bash"), ToolSchema("todo_write")], ["ghost", TOOL_ORDER_REST, "wraith"]
        )
    assert str(info.value) == (
        'tool_order lists unregistered tools "ghost", "wraith"; known tools: bash, todo_write'
    )
    assert info.value.names == ("ghost", "wraith")
    with pytest.raises(ToolOrderError) as info:
        order_tools([ToolSchema(TOOL_ORDER_REST)])
    assert str(info.value) == (
        'tool provider returned reserved tool name "<unlisted-tools>"'
        " (reserved for tool_order's rest entry)"
    )


def test_code_units_differ_from_code_points() -> None:
    # Python's default sort puts U+FF5E before U+1F600; UTF-16 puts the
    # surrogate pair (0xD83D...) first, as JavaScript does.
    assert sorted(["\uff5e", "\U0001f600"]) == ["\uff5e", "\U0001f600"]
    got = order_tools([ToolSchema("\uff5e"), ToolSchema("\U0001f600")])
    assert names(got) == ["\U0001f600", "\uff5e"]


def test_shape_errors() -> None:
    with pytest.raises(ToolOrderError, match="must be a list of tool names"):
        validate_tool_order("bash")
    with pytest.raises(ToolOrderError, match=r"tool_order\[1\] must be a tool name"):
        validate_tool_order([TOOL_ORDER_REST, 3])  # type: ignore[list-item]
    assert validate_tool_order(None) is None
    assert validate_tool_order([TOOL_ORDER_REST]) == (TOOL_ORDER_REST,)


def test_shared_names_tie_break_by_serialization() -> None:
    one = ToolSchema("read", "from provider one")
    two = ToolSchema("read", "from provider two")
    other = ToolSchema("bash")
    for order in itertools.permutations([one, two, other]):
        assert order_tools(order) == (other, one, two)
        assert order_tools(order, ["read", TOOL_ORDER_REST]) == (one, two, other)


@given(tool_sets(shared_names=True), st.data())
def test_order_is_independent_of_input_order(tools: list[ToolSchema], data: st.DataObject) -> None:
    policy = data.draw(st.none() | tool_orders([t.name for t in tools]))
    expected = order_tools(tools, policy)
    shuffled = data.draw(st.permutations(tools))
    got = order_tools(shuffled, policy)
    assert got == expected
    assert sorted(map(repr, got)) == sorted(map(repr, tools)), "a tool was dropped or added"


@given(tool_sets(min_size=1), st.data())
def test_listed_tools_take_listed_positions(tools: list[ToolSchema], data: st.DataObject) -> None:
    policy = data.draw(tool_orders([t.name for t in tools]))
    got = names(order_tools(tools, policy))
    listed = [n for n in policy if n != TOOL_ORDER_REST]
    rest_at = policy.index(TOOL_ORDER_REST)
    unlisted = [n for n in got if n not in listed]
    expected = [*listed[:rest_at], *unlisted, *listed[rest_at:]]
    assert got == expected
    assert unlisted == [n for n in names(order_tools(tools)) if n not in listed]


@given(st.lists(st.sampled_from(["a", "b", "c"]), unique=True).flatmap(invalid_tool_orders))
def test_invalid_orders_are_rejected_at_construction(policy: list[Any]) -> None:
    with pytest.raises(ToolOrderError):
        validate_tool_order(policy)
