"""order_wire_tools: one order and one byte string for a tool list, whatever its order."""

from __future__ import annotations

import copy
import itertools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest
import yaml
from hypothesis import given, strategies as st

from headerlock.errors import ToolOrderError, WireToolError
from headerlock.runtime.tool_order import TOOL_ORDER_REST, order_tools
from headerlock.runtime.tools import ToolSchema
from headerlock.strategies import tool_names, tool_orders
from headerlock.testing.wire.apis.tool_lists import order_wire_tools, wire_tool_name

Shape = Callable[[str, dict[str, Any]], dict[str, Any]]
VECTORS = Path(__file__).parents[1] / "vectors" / "tool-order.yaml"
CASES: list[dict[str, Any]] = yaml.safe_load(VECTORS.read_text(encoding="utf-8"))["cases"]


def chat(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    function = {"name": name, "description": f"the {name} tool", "parameters": schema}
    return {"type": "function", "function": function}


def responses(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "name": name, "parameters": schema, "strict": True}


def anthropic(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "description": f"the {name} tool", "input_schema": schema}


SHAPES: dict[str, Shape] = {"chat": chat, "responses": responses, "anthropic": anthropic}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "lines": {"type": "array"}},
    "required": ["path", "lines"],
}


def names_of(tools: list[dict[str, Any]]) -> list[str]:
    return [wire_tool_name(t) for t in tools]


def body(tools: list[dict[str, Any]]) -> str:
    return json.dumps(tools, ensure_ascii=False)


def reorder_keys(value: Any, order: Callable[[list[str]], list[str]]) -> Any:
    """``value`` with every dict's keys rearranged by ``order``."""
    if isinstance(value, dict):
        return {k: reorder_keys(value[k], order) for k in order(list(value))}
    if isinstance(value, list):
        return [reorder_keys(v, order) for v in value]
    return value


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES)
@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_tool_order_vectors_hold_for_every_wire_shape(
    case: dict[str, Any], shape: Shape
) -> None:
    policy, known = case.get("tool_order"), case.get("known")
    names = case["tools"]
    orders = itertools.permutations(names) if len(names) <= 4 else [names, names[::-1]]
    for permutation in orders:
        tools = [shape(n, SCHEMA) for n in permutation]
        if "expect" in case:
            assert names_of(order_wire_tools(tools, policy, known_names=known)) == case["expect"]
        else:
            with pytest.raises(ToolOrderError, match=re.escape(case["error"])):
                order_wire_tools(tools, policy, known_names=known)


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES)
def test_six_key_orders_of_a_schema_give_one_body(shape: Shape) -> None:
    bodies = set()
    for keys in itertools.permutations(["type", "properties", "required"]):
        schema = {key: copy.deepcopy(SCHEMA[key]) for key in keys}
        tool = reorder_keys(shape("read", schema), lambda ks: ks[::-1])
        bodies.add(body(order_wire_tools([tool])))
    assert len(bodies) == 1
    (only,) = bodies
    assert only == json.dumps(json.loads(only), sort_keys=True, ensure_ascii=False)
    assert '"required": ["path", "lines"]' in only  # lists keep their order


_SEEDS = st.randoms(use_true_random=False)


@given(
    names=st.lists(tool_names(max_size=6), min_size=1, max_size=6, unique=True),
    data=st.data(),
)
def test_any_order_of_tools_and_keys_gives_one_body(names: list[str], data: st.DataObject) -> None:
    shape = data.draw(st.sampled_from(list(SHAPES.values())))
    expected = body(order_wire_tools([shape(n, SCHEMA) for n in names]))
    permuted = data.draw(st.permutations(names))
    rng = data.draw(_SEEDS)
    tools = [reorder_keys(shape(n, SCHEMA), lambda ks: rng.sample(ks, len(ks))) for n in permuted]
    assert body(order_wire_tools(tools)) == expected


@given(names=st.lists(tool_names(max_size=6), max_size=6, unique=True), data=st.data())
def test_a_tool_order_places_tools_as_order_tools_does(
    names: list[str], data: st.DataObject
) -> None:
    policy = data.draw(tool_orders(names))
    permuted = data.draw(st.permutations(names))
    expected = [t.name for t in order_tools([ToolSchema(n) for n in names], policy)]
    for shape in SHAPES.values():
        got = order_wire_tools([shape(n, SCHEMA) for n in permuted], policy)
        assert names_of(got) == expected


def test_same_named_tools_are_ordered_by_their_canonical_json() -> None:
    small = anthropic("read", {"type": "object"})
    large = anthropic("read", SCHEMA)
    first = order_wire_tools([small, large, anthropic("a", {})])
    assert first == order_wire_tools([large, anthropic("a", {}), small])
    assert names_of(first) == ["a", "read", "read"]


def test_the_rest_entry_takes_every_unlisted_tool_in_code_unit_order() -> None:
    tools = [chat(n, SCHEMA) for n in ["zeta", "\uff5e", "\U0001f600", "alpha", "main"]]
    got = order_wire_tools(tools, ["main", TOOL_ORDER_REST, "alpha"])
    assert names_of(got) == ["main", "zeta", "\U0001f600", "\uff5e", "alpha"]


def test_the_input_is_left_alone_and_tuples_become_lists() -> None:
    schema = {"type": "object", "required": ("b", "a"), "properties": {"b": {}, "a": {}}}
    tool = responses("f", schema)
    before = copy.deepcopy(tool)
    (got,) = order_wire_tools((tool,))
    assert tool == before
    assert got["parameters"] == {
        "properties": {"a": {}, "b": {}},
        "required": ["b", "a"],
        "type": "object",
    }
    assert list(got) == ["name", "parameters", "strict", "type"]


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ([chat("a", {}), 3], r"^tools\[1\]: expected a tool dict, got int$"),
        ([{"type": "web_search"}], r"^tools\[0\]: not an OpenAI chat.* \(no name\); keys: type$"),
        ([{"type": "function", "function": "f"}], r"^tools\[0\]: an OpenAI chat tool is"),
        ([{"type": "custom", "function": {"name": "f"}}], r"^tools\[0\]: an OpenAI chat tool"),
        ([anthropic("a", {}), {"name": ""}], r"^tools\[1\]: not an OpenAI chat"),
        (
            [anthropic("a", {"enum": {"x", "y"}})],
            r"^tools\[0\] \(a\): set at input_schema\.enum is not JSON \(a set has no order",
        ),
        (
            [anthropic("a", cast(Any, {1: "x"}))],
            r"^tools\[0\] \(a\): key 1 at input_schema is not a string$",
        ),
        ([responses("a", {"default": b"x"})], r"^tools\[0\] \(a\): bytes at parameters\.default"),
        ("read", r"^tools must be a list of tool dicts, got str$"),
        ({"name": "read"}, r"^tools must be a list of tool dicts, got dict$"),
    ],
)
def test_unknown_shapes_are_refused_naming_the_index(tools: Any, message: str) -> None:
    with pytest.raises(WireToolError, match=message) as caught:
        order_wire_tools(tools)
    if isinstance(tools, list):
        assert caught.value.index == len(tools) - 1


def test_tool_order_errors_come_from_the_shared_rules() -> None:
    tools = [chat("bash", {}), chat("todo_write", {})]
    with pytest.raises(ToolOrderError) as caught:
        order_wire_tools(tools, ["ghost", TOOL_ORDER_REST, "wraith"])
    assert str(caught.value) == (
        'tool_order lists unregistered tools "ghost", "wraith"; known tools: bash, todo_write'
    )
    with pytest.raises(ToolOrderError, match="rest entry") as caught:
        order_wire_tools([3], ["bash"])  # type: ignore[list-item]  # the policy is checked first
    assert caught.value.kind == "missing-rest"
    with pytest.raises(ToolOrderError, match="reserved tool name") as caught:
        order_wire_tools([anthropic(TOOL_ORDER_REST, {})])
    assert caught.value.kind == "reserved"
    assert names_of(order_wire_tools(tools, ["ghost", TOOL_ORDER_REST], known_names=["ghost"]))
