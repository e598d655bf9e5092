"""The wire order check: real SDK agents (OpenAI, Anthropic, pydantic-ai) under permuted
registration orders, answered by a script, with nothing listening on the port."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import uuid
from collections.abc import Callable
from typing import Any

import anthropic
import openai
import pytest

from headerlock.errors import (
    ConfigError,
    OrderDependenceError,
    ToolRegistrationError,
    UnorderedValueError,
    WireOrderError,
    WireToolError,
)
from headerlock.testing.wire.apis.tool_lists import order_wire_tools
from headerlock.testing.wire.order import (
    assert_order_invariant,
    assert_order_invariant_async,
    item_label,
)
from headerlock.testing.wire.recipes import order_by_name, pydantic_ai_prepare_tools

KEY = "sk-test-not-a-real-key-0002"
NAMES = ["alpha", "bravo", "charlie", "delta"]
REPLIES: list[Any] = [{"text": "first"}, {"text": "second"}]


def _closed_origin() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


CLOSED_ORIGIN = _closed_origin()
CLOSED = f"{CLOSED_ORIGIN}/v1"
"""Nothing listens here: the script answers every model request, a leak fails."""


def chat_tool(name: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    return {"type": "function", "function": {"name": name, "parameters": schema}}


def anthropic_tool(name: str) -> dict[str, Any]:
    return {"name": name, "input_schema": {"type": "object", "properties": {}}}


def registry(names: list[str], make: Callable[[str], dict[str, Any]]) -> Any:
    """Tools gathered in a dict in registration order, as plugin hosts do (typed ``Any``:
    the SDKs' parameter types are TypedDicts)."""
    tools: dict[str, dict[str, Any]] = {}
    for name in names:
        tools[name] = make(name)
    return list(tools.values())


class ChatAgent:
    """A two-request agent on the real OpenAI client; ``fix`` orders its tools."""

    def __init__(self, fix: bool) -> None:
        self.client = openai.OpenAI(base_url=CLOSED, api_key=KEY, max_retries=0)
        self.fix = fix
        self.orders: list[list[str]] = []

    def __call__(self, names: list[str]) -> None:
        self.orders.append(names)
        tools = registry(names, chat_tool)
        if self.fix:
            tools = order_wire_tools(tools)
        messages: list[Any] = [
            {"role": "system", "content": "terse"},
            {"role": "user", "content": "hi"},
        ]
        first = self.client.chat.completions.create(model="m", messages=messages, tools=tools)
        messages.append({"role": "assistant", "content": first.choices[0].message.content})
        messages.append({"role": "user", "content": "again"})
        self.client.chat.completions.create(model="m", messages=messages, tools=tools)


def test_a_dict_registered_openai_agent_fails_with_the_minimal_pair() -> None:
    with pytest.raises(WireOrderError) as caught:
        assert_order_invariant(ChatAgent(fix=False), NAMES, script=REPLIES, max_examples=10)
    error = caught.value
    assert error.first_order == ("alpha", "bravo", "charlie", "delta")
    assert error.second_order == ("bravo", "alpha", "charlie", "delta")
    assert (error.request, error.api, error.segment, error.tool) == (
        1,
        "openai.chat",
        "tools",
        "alpha",
    )
    assert isinstance(error, OrderDependenceError) and isinstance(error, AssertionError)
    assert error.first == "[alpha, bravo, charlie, delta]"
    message = str(error)
    assert "position 1 is alpha in the first order, bravo in the second" in message
    assert (
        error.offset is not None and f"first differing byte {error.offset} of the body" in message
    )
    assert '"name":"^alpha"' in message and '"name":"^bravo"' in message
    assert "order_wire_tools" in message


def test_the_same_agent_through_order_wire_tools_passes_identity_and_reversed_included() -> None:
    agent = ChatAgent(fix=True)
    assert_order_invariant(agent, NAMES, script=REPLIES, max_examples=10)
    assert NAMES in agent.orders and list(reversed(NAMES)) in agent.orders
    assert len({tuple(o) for o in agent.orders}) > 2  # Hypothesis tried other orders too
    assert len(agent.orders) <= 10 + 2  # examples + the baseline's determinism rerun


def test_the_failing_offset_is_the_first_differing_byte_of_the_body() -> None:
    bodies: dict[tuple[str, ...], bytes] = {}

    def agent(names: list[str]) -> None:
        client = openai.OpenAI(base_url=CLOSED, api_key=KEY, max_retries=0)
        raw = client.chat.completions.with_raw_response.create(
            model="m",
            messages=[{"role": "user", "content": "hi"}],
            tools=registry(names, chat_tool),
        )
        bodies[tuple(names)] = raw.http_request.read()

    with pytest.raises(WireOrderError) as caught:
        assert_order_invariant(agent, NAMES[:3], script=[{"text": "ok"}], max_examples=5)
    first, second = bodies[caught.value.first_order], bodies[caught.value.second_order]
    offset = caught.value.offset
    assert (
        offset is not None and first[:offset] == second[:offset] and first[offset] != second[offset]
    )


@pytest.mark.parametrize("fix", [False, True], ids=["registration-order", "order_wire_tools"])
def test_an_anthropic_agent(fix: bool) -> None:
    client = anthropic.Anthropic(base_url=CLOSED_ORIGIN, api_key=KEY, max_retries=0)

    def agent(names: list[str]) -> None:
        tools = registry(names, anthropic_tool)
        client.messages.create(
            model="claude-test",
            max_tokens=64,
            system="terse",
            tools=order_wire_tools(tools) if fix else tools,  # type: ignore[arg-type]
            messages=[{"role": "user", "content": "hi"}],
        )

    if fix:
        assert_order_invariant(agent, NAMES, script=[{"text": "ok"}], max_examples=8)
        return
    with pytest.raises(WireOrderError) as caught:
        assert_order_invariant(agent, NAMES, script=[{"text": "ok"}], max_examples=8)
    assert (caught.value.api, caught.value.segment, caught.value.tool) == (
        "anthropic.messages",
        "tools",
        "alpha",
    )


def test_an_async_agent_from_inside_a_running_loop() -> None:
    orders: list[list[str]] = []

    async def main(fix: bool) -> None:
        assert asyncio.get_running_loop() is not None
        client = openai.AsyncOpenAI(base_url=CLOSED, api_key=KEY, max_retries=0)

        async def agent(names: list[str]) -> None:
            orders.append(names)
            tools = registry(names, chat_tool)
            await client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "hi"}],
                tools=order_wire_tools(tools) if fix else tools,  # type: ignore[arg-type]
            )

        await assert_order_invariant_async(agent, NAMES, script=[{"text": "ok"}], max_examples=6)

    asyncio.run(main(fix=True))
    assert list(reversed(NAMES)) in orders
    with pytest.raises(WireOrderError, match=r"second order: \[bravo, alpha, charlie, delta\]"):
        asyncio.run(main(fix=False))


def test_the_sync_check_awaits_an_async_run_on_a_fresh_loop() -> None:
    loops: set[int] = set()

    async def agent(names: list[str]) -> None:
        loops.add(id(asyncio.get_running_loop()))
        client = openai.AsyncOpenAI(base_url=CLOSED, api_key=KEY, max_retries=0)
        await client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "hi"}],
            tools=registry(names, chat_tool),
        )

    with pytest.raises(WireOrderError, match="position 1 is alpha"):
        assert_order_invariant(agent, NAMES[:3], script=[{"text": "ok"}], max_examples=4)
    assert len(loops) >= 2


def test_the_sync_check_inside_a_running_loop_points_to_the_async_one() -> None:
    async def agent(names: list[str]) -> None:
        pass

    async def main() -> None:
        assert_order_invariant(agent, NAMES, script=[{"text": "ok"}])

    with pytest.raises(ConfigError, match="await assert_order_invariant_async"):
        asyncio.run(main())


# -- pydantic-ai ----------------------------------------------------------------------


def lookup(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def echo(text: str) -> str:
    """Say it back."""
    return text


PYDANTIC_SCRIPT: list[Any] = [
    {"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]},
    {"text": "3"},
]


@pytest.mark.parametrize("fix", [False, True], ids=["tool_plain-order", "prepare_tools"])
def test_a_pydantic_ai_agent_end_to_end(fix: bool) -> None:
    pytest.importorskip("pydantic_ai", reason="pydantic-ai-slim[openai] is in the test extra")
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import PrepareTools
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(base_url=CLOSED, api_key=KEY)  # one client: its TLS setup is slow
    model = OpenAIChatModel("gpt-test", provider=provider)
    outputs: list[str] = []

    def agent(tools: list[Callable[..., Any]]) -> None:
        capabilities = [PrepareTools(pydantic_ai_prepare_tools)] if fix else []
        built = Agent(model, instructions="Be terse.", capabilities=capabilities)
        for tool in tools:
            built.tool_plain(tool)
        outputs.append(built.run_sync("add 1 and 2").output)

    tools: list[Callable[..., Any]] = [lookup, add, echo]
    if fix:
        assert_order_invariant(agent, tools, script=PYDANTIC_SCRIPT, max_examples=6)
        assert set(outputs) == {"3"}
        return
    with pytest.raises(WireOrderError) as caught:
        assert_order_invariant(agent, tools, script=PYDANTIC_SCRIPT, max_examples=6)
    error = caught.value
    assert (error.first_order, error.second_order) == (
        ("lookup", "add", "echo"),
        ("add", "lookup", "echo"),
    )
    assert (error.request, error.api, error.tool) == (1, "openai.chat", "lookup")
    assert "PrepareTools(pydantic_ai_prepare_tools)" in str(error)


# -- what else the check reports ------------------------------------------------------


def test_a_failing_reversed_order_is_still_reduced_to_a_minimal_pair() -> None:
    """Only "c before a" breaks it: no adjacent swap of the identity does, the reversed
    example (never shrunk by Hypothesis) does, and the report is two inversions away."""

    client = openai.OpenAI(base_url=CLOSED, api_key=KEY, max_retries=0)

    def agent(names: list[str]) -> None:
        late = names.index("c") < names.index("a")
        client.chat.completions.create(
            model="m",
            messages=[
                {"role": "system", "content": f"c first: {late}"},
                {"role": "user", "content": "x"},
            ],
        )

    with pytest.raises(WireOrderError) as caught:
        assert_order_invariant(agent, ["a", "b", "c", "d"], script=[{"text": "ok"}], max_examples=3)
    second = list(caught.value.second_order)
    assert second.index("c") < second.index("a")
    identity = ["a", "b", "c", "d"]
    inversions = sum(
        identity.index(x) > identity.index(y) for i, x in enumerate(second) for y in second[i + 1 :]
    )
    assert inversions == 2
    assert caught.value.segment == "system" and caught.value.tool is None


def test_shrink_false_reports_the_first_differing_order_found() -> None:
    with pytest.raises(WireOrderError) as caught:
        assert_order_invariant(ChatAgent(fix=False), NAMES, script=REPLIES, shrink=False)
    assert caught.value.second_order in {
        tuple(reversed(NAMES)),
        ("bravo", "alpha", "charlie", "delta"),
    }
    assert caught.value.second_order != tuple(NAMES)


def test_a_schema_written_with_its_keys_in_another_order_is_named() -> None:
    client = openai.OpenAI(base_url=CLOSED, api_key=KEY, max_retries=0)

    def agent(names: list[str]) -> None:
        tools: Any = [chat_tool(n) for n in sorted(names)]
        if names[0] == "delta":  # same data, other key order: a provider cache still misses
            tools[0]["function"] = dict(reversed(list(tools[0]["function"].items())))
        client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], tools=tools
        )

    with pytest.raises(WireOrderError) as caught:
        assert_order_invariant(agent, NAMES, script=[{"text": "ok"}], max_examples=5)
    assert caught.value.tool == "alpha" and caught.value.segment == "tools"
    assert "tool alpha at position 1: the same data in other bytes (JSON key order)" in str(
        caught.value
    )


def test_a_nondeterministic_agent_is_reported_as_such_not_as_an_order_problem() -> None:
    client = openai.OpenAI(base_url=CLOSED, api_key=KEY, max_retries=0)

    def agent(names: list[str]) -> None:
        client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "x"}],
            user=str(uuid.uuid4()),
            metadata={"run": str(uuid.uuid4())},
        )

    with pytest.raises(WireOrderError, match="the agent is not deterministic") as caught:
        assert_order_invariant(agent, NAMES, script=[{"text": "ok"}])
    assert caught.value.first_order == caught.value.second_order == tuple(NAMES)
    assert caught.value.segment == "config" and "metadata" in str(caught.value)


def test_an_order_that_sends_more_requests_is_reported() -> None:
    client = openai.OpenAI(base_url=CLOSED, api_key=KEY, max_retries=0)

    def agent(names: list[str]) -> None:
        for _ in range(1 if names[0] == "alpha" else 2):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])

    with pytest.raises(WireOrderError) as caught:
        assert_order_invariant(agent, NAMES, script=REPLIES, max_examples=4)
    assert "the first order sent 1 requests, the second 2" in str(caught.value)
    assert (caught.value.request, caught.value.segment) == (2, "request")


def test_an_order_that_raises_is_reported_with_the_error_as_the_cause() -> None:
    client = openai.OpenAI(base_url=CLOSED, api_key=KEY, max_retries=0)

    def agent(names: list[str]) -> None:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        if names[-1] == "alpha":
            raise ValueError("alpha must not come last")

    with pytest.raises(WireOrderError) as caught:
        assert_order_invariant(agent, NAMES, script=REPLIES, max_examples=4)
    assert "the second order raised ValueError: alpha must not come last" in str(caught.value)
    assert caught.value.request is None and caught.value.segment is None
    assert isinstance(caught.value.__cause__, ValueError)


def test_a_script_running_out_in_one_order_is_reported() -> None:
    client = openai.OpenAI(base_url=CLOSED, api_key=KEY, max_retries=0)

    def agent(names: list[str]) -> None:
        for _ in range(1 if names[0] == "alpha" else 2):
            with contextlib.suppress(openai.BadRequestError):  # the lock still raises at exit
                client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "x"}]
                )

    with pytest.raises(WireOrderError, match="the second order raised ScriptExhaustedError"):
        assert_order_invariant(agent, NAMES, script=[{"text": "ok"}], max_examples=4)


def test_an_agent_failing_in_its_own_order_raises_its_own_error() -> None:
    def agent(names: list[str]) -> None:
        raise KeyError("no such tool")

    with pytest.raises(KeyError, match="no such tool"):
        assert_order_invariant(agent, NAMES, script=[{"text": "ok"}])


def test_fewer_than_two_items_run_once() -> None:
    calls: list[list[str]] = []
    assert_order_invariant(calls.append, ["only"], script=[])
    assert_order_invariant(calls.append, [], script=[])
    assert calls == [["only"], []]


def test_items_must_have_an_order_and_max_examples_be_positive() -> None:
    def run(items: list[Any]) -> None:
        pass

    with pytest.raises(UnorderedValueError, match="PYTHONHASHSEED"):
        assert_order_invariant(run, {"a", "b"}, script=[])
    with pytest.raises(ConfigError, match=r"list\(d.values\(\)\)"):
        assert_order_invariant(run, {"a": 1}, script=[])
    with pytest.raises(ConfigError, match="max_examples"):
        assert_order_invariant(run, ["a", "b"], script=[], max_examples=0)
    assert_order_invariant(run, {"a": 1, "b": 2}.values(), script=[], max_examples=2)


def test_item_labels() -> None:
    class Named:
        name = "from_attribute"

    assert item_label(chat_tool("chat")) == "chat"
    assert item_label(anthropic_tool("anth")) == "anth"
    assert item_label(lookup) == "lookup"
    assert item_label(Named()) == "from_attribute"
    assert item_label("plain") == "plain"
    assert item_label(("x" * 60,)).endswith("...") and len(item_label(("x" * 60,))) == 40


def test_duplicate_labels_get_their_index() -> None:
    with pytest.raises(WireOrderError) as caught:
        assert_order_invariant(ChatAgent(fix=False), ["alpha", "bravo", "alpha"], script=REPLIES)
    assert caught.value.first_order == ("alpha#0", "bravo#1", "alpha#2")


# -- order_by_name --------------------------------------------------------------------


def test_order_by_name_uses_code_units_and_keeps_the_objects() -> None:
    class Tool:
        def __init__(self, name: str) -> None:
            self.name = name

    tools = [Tool("\U0001f600"), Tool("\uff5e"), Tool("b"), Tool("a")]
    ordered = order_by_name(tools)
    # UTF-16 code units, as JavaScript compares: U+1F600 is D83D DE00, before U+FF5E
    assert [t.name for t in ordered] == ["a", "b", "\U0001f600", "\uff5e"]
    assert all(any(t is o for o in tools) for t in ordered)
    assert [f.__name__ for f in order_by_name([lookup, echo, add])] == ["add", "echo", "lookup"]
    assert pydantic_ai_prepare_tools(None, [Tool("z"), Tool("y")])[0].name == "y"


def test_order_by_name_on_dicts_breaks_ties_by_content_and_refuses_twins() -> None:
    one = {"name": "t", "input_schema": {"type": "object", "title": "B"}}
    two = {"input_schema": {"title": "A", "type": "object"}, "name": "t"}
    assert order_by_name([one, two]) == order_by_name([two, one]) == [two, one]
    assert json.dumps(order_by_name([one, chat_tool("s")])[0]) == json.dumps(chat_tool("s"))
    with pytest.raises(ToolRegistrationError, match="two tools are named 'lookup'"):
        order_by_name([lookup, lookup])
    with pytest.raises(WireToolError, match=r"tools\[1\]: object has no name"):
        order_by_name([lookup, object()])
