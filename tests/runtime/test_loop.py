"""The agent loop: the RFC's loop test list."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from headerlock.agent import TOOL_ORDER_REST, Context, ToolSchema
from headerlock.errors import ReconstructionError, ToolOrderError
from headerlock.runtime.adapters.scripted import ScriptedAdapter
from headerlock.runtime.app import AgentApp
from headerlock.runtime.frozen import thaw
from headerlock.runtime.header import RequestHeader, fold_request_header
from headerlock.runtime.llm import LlmService, ModelRequest
from headerlock.runtime.session import (
    REQUEST_HEADER,
    REQUEST_HEADER_DELTA,
    STEP_START,
    TURN_END,
    TURN_START,
)
from headerlock.runtime.system_prompt import PromptAssembly
from headerlock.strategies import load_schedules, registration_orders
from tests.support import events_of, tool_plugin

NAMES = ["subagent", "todo_write", "read", "write", "bash"]


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def started(app: AgentApp) -> AgentApp:
    await app.start()
    return app


def make_app(
    replies: list[Any], tool_order: list[str] | None = None, names: list[str] = NAMES, **kw: Any
) -> tuple[AgentApp, ScriptedAdapter]:
    adapter = ScriptedAdapter(replies)
    config: dict[str, Any] = {"model": "demo", "persona": "Be brief."}
    if tool_order is not None:
        config["tool_order"] = tool_order
    app = AgentApp(config, plugins=[tool_plugin(n) for n in names], adapter=adapter, **kw)
    return app, adapter


def test_text_turn_records_header_before_dispatch() -> None:
    app, adapter = make_app(["PONG"])

    async def go() -> Any:
        await app.start()
        return await app.run_turn("Reply with exactly the word: PONG.")

    result = run(go())
    assert (result.reason.kind, result.reason.step, result.text) == ("stop", 1, "PONG")
    types = [e.type for e in app.session.events]
    assert types == [
        "turn/start", "user/message", "step/start", "request/header",
        "assistant/chunk", "assistant/message", "step/end", "turn/end",
    ]  # fmt: skip
    header = fold_request_header(app.session.events)
    assert header is not None
    assert adapter.requests[0].header == header
    assert header.tool_names() == ("bash", "read", "subagent", "todo_write", "write")
    assert app.state == "idle"


def test_tool_calls_run_handlers_and_feed_the_next_step() -> None:
    app, adapter = make_app(
        [{"tool_calls": [{"name": "read", "arguments": {"path": "x"}}]}, "done"]
    )

    async def go() -> Any:
        await app.start()
        return await app.run_turn("read x")

    result = run(go())
    assert (result.reason.kind, result.reason.step) == ("stop", 2)
    second = adapter.requests[1].messages
    assert second[-1] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "name": "read",
        "content": "read ok",
    }
    assert len(events_of(app.session.events, REQUEST_HEADER)) == 1  # unchanged: nothing recorded


def test_max_steps_ends_the_turn() -> None:
    call = {"tool_calls": [{"name": "read"}]}
    app2 = AgentApp(
        {"model": "demo", "max_steps": 2},
        plugins=[tool_plugin("read")],
        adapter=ScriptedAdapter([call] * 5),
    )

    async def go() -> Any:
        await app2.start()
        return await app2.run_turn("loop")

    result = run(go())
    assert (result.reason.kind, result.reason.step) == ("max-steps", 2)
    assert events_of(app2.session.events, TURN_END)[-1].data["reason"] == {
        "kind": "max-steps",
        "step": 2,
    }


def test_requests_are_deep_frozen() -> None:
    app, adapter = make_app(["ok"])
    run(started(app))
    run(app.run_turn("hi"))
    request = adapter.requests[0]
    with pytest.raises(TypeError):
        request.messages[0]["content"] = "changed"  # type: ignore[index]
    with pytest.raises(AttributeError):
        request.messages.append({})  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        request.header.config["model"] = "other"  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.header = request.header  # type: ignore[misc]


def _assert_balanced_failure(app: AgentApp, adapter: ScriptedAdapter, message: str) -> None:
    errors: list[Mapping[str, Any]] = []
    app.ctx.on("agent/error", errors.append)
    messages = []
    for turn in (1, 2):
        result = run(app.run_turn("hi"))
        assert result.reason.kind == "error"
        assert result.reason.step == 1
        assert result.reason.message is not None and message in result.reason.message
        assert errors[-1] == {"turn": turn, "step": 1, "message": result.reason.message}
        assert app.state == "idle"
        messages.append(result.reason.message)
    events = app.session.events
    assert [e.type for e in events] == ["turn/start", "user/message", "turn/end"] * 2
    assert not events_of(events, STEP_START) and not events_of(events, REQUEST_HEADER)
    assert adapter.requests == []
    assert events[2].data["reason"] == {
        "kind": "error",
        "step": 1,
        "message": messages[-1],
    }


def test_unknown_configured_name_fails_each_turn_balanced() -> None:
    app, adapter = make_app(["never"], tool_order=["ghost", TOOL_ORDER_REST])
    run(started(app))  # unregistered names are not a start-up error
    _assert_balanced_failure(app, adapter, 'tool_order lists unregistered tool "ghost"')


def test_reserved_name_from_a_provider_fails_each_turn_balanced() -> None:
    app, adapter = make_app(["never"], names=["read", TOOL_ORDER_REST])
    run(started(app))
    _assert_balanced_failure(app, adapter, 'reserved tool name "<unlisted-tools>"')


def test_fixing_the_registration_makes_the_next_turn_pass() -> None:
    app, adapter = make_app(["ok"], tool_order=["ghost", TOOL_ORDER_REST])
    run(started(app))
    assert run(app.run_turn("hi")).reason.kind == "error"
    app.ctx.tools.register(ToolSchema("ghost"))
    result = run(app.run_turn("hi"))
    assert result.reason.kind == "stop"
    assert adapter.requests[0].header.tool_names()[0] == "ghost"


def test_shape_errors_raise_before_start() -> None:
    with pytest.raises(ToolOrderError, match="rest entry"):
        make_app(["x"], tool_order=["read"])
    with pytest.raises(ToolOrderError, match="rest entry"):
        make_app(["x"], tool_order=[])


def _two_step_app(listener: Any) -> tuple[AgentApp, ScriptedAdapter]:
    app, adapter = make_app([{"tool_calls": [{"name": "read"}]}, "done"])
    run(started(app))
    app.ctx.on("system-prompt/assemble", listener)
    return app, adapter


def test_listener_reordering_between_steps_records_a_fallback() -> None:
    calls = {"n": 0}

    def reorder_on_second(assembly: PromptAssembly) -> PromptAssembly:
        calls["n"] += 1
        if calls["n"] == 2:
            return dataclasses.replace(assembly, tools=tuple(reversed(assembly.tools)))
        return assembly

    app, adapter = _two_step_app(reorder_on_second)
    run(app.run_turn("go"))
    headers = events_of(app.session.events, REQUEST_HEADER)
    assert [h.data["reason"] for h in headers] == ["initial", "fallback"]
    assert adapter.requests[1].header == fold_request_header(app.session.events)
    assert adapter.requests[1].header.tool_names()[0] == "write"


def test_listener_adding_a_tool_between_steps_records_a_delta() -> None:
    calls = {"n": 0}

    def add_on_second(assembly: PromptAssembly) -> PromptAssembly:
        calls["n"] += 1
        if calls["n"] == 2:
            return dataclasses.replace(assembly, tools=(*assembly.tools, ToolSchema("extra")))
        return assembly

    app, _ = _two_step_app(add_on_second)
    run(app.run_turn("go"))
    deltas = events_of(app.session.events, REQUEST_HEADER_DELTA)
    assert [thaw(d.data) for d in deltas] == [{"tools": {"added": [ToolSchema("extra").to_data()]}}]


def test_invariant_catches_a_request_that_differs_from_the_log() -> None:
    app, adapter = make_app(["ok"])
    run(started(app))

    def sneaky(request: ModelRequest) -> ModelRequest:
        header = dataclasses.replace(request.header, tools=request.header.tools[1:])
        return dataclasses.replace(request, header=header)

    app.ctx.on("request/build", sneaky)
    result = run(app.run_turn("hi"))
    assert result.reason.kind == "error"
    assert result.reason.message is not None
    assert (
        "not reconstructable from the log (header): the request's tools differ"
        in result.reason.message
    )
    assert adapter.requests == []


def test_invariant_catches_changed_messages() -> None:
    app, _ = make_app(["ok"])
    run(started(app))
    app.ctx.on("request/build", lambda request: dataclasses.replace(request, messages=()))
    result = run(app.run_turn("hi"))
    assert result.reason.message is not None
    assert "(messages): messages differ from the log at index 0 (0 sent, 1 rebuilt)" in (
        result.reason.message
    )


def test_invariant_names_a_missing_step_or_header() -> None:
    app, _ = make_app(["ok", "ok"])
    run(started(app))
    llm: LlmService = app.ctx.get("llm")

    async def stream(request: Any) -> None:
        async for _ in llm.stream(request):
            pass

    for setup, part in [(None, "no step"), (STEP_START, "no header")]:
        if setup:
            app.session.append(setup, {"turn": 0, "step": 1})
        with pytest.raises(ReconstructionError) as info:
            run(stream(ModelRequest(RequestHeader({"model": "demo"}))))
        assert info.value.part == part
    with pytest.raises(ReconstructionError) as info:
        run(stream({"messages": []}))
    assert info.value.part == "not frozen"


def test_tool_faults_end_the_turn_with_an_error() -> None:
    async def slow(arguments: Mapping[str, Any]) -> str:
        await asyncio.sleep(5)
        return "late"

    def plugin(ctx: Context) -> None:
        ctx.tools.register(ToolSchema("boom"), lambda a: 1 / 0)
        ctx.tools.register(ToolSchema("slow"), slow)
        ctx.tools.register(ToolSchema("weird"), lambda a: object())

    expected = {
        "boom": 'tool "boom" raised ZeroDivisionError: division by zero',
        "slow": 'tool "slow" timed out after 0.05s',
        "weird": 'tool "weird" returned data that is not JSON-serializable (object)',
        "missing": 'the model called unknown tool "missing"',
    }
    for name, message in expected.items():
        app = AgentApp(
            {"tool_timeout": 0.05},
            plugins=[plugin],
            adapter=ScriptedAdapter([{"tool_calls": [{"name": name}]}]),
        )
        run(started(app))
        result = run(app.run_turn("go"))
        assert result.reason.kind == "error"
        assert result.reason.message is not None and result.reason.message.startswith(message)
        types = [e.type for e in app.session.events]
        assert types.count("step/start") == types.count("step/end") == 1
        assert types[-1] == TURN_END and app.state == "idle"
        assert fold_request_header(app.session.events) is not None


def test_adapter_error_midway_ends_balanced() -> None:
    class Broken:
        async def stream(self, request: ModelRequest) -> Any:
            yield __import__("headerlock.runtime.llm", fromlist=["TextDelta"]).TextDelta("partial ")
            raise ConnectionError("stream cut")

    app = AgentApp({}, adapter=Broken())
    run(started(app))
    result = run(app.run_turn("hi"))
    assert result.reason.message == "ConnectionError: stream cut"
    assert [e.type for e in app.session.events][-4:] == [
        "assistant/chunk", "assistant/error", "step/end", "turn/end",
    ]  # fmt: skip
    assert app.session.events[-3].data["message"] == "ConnectionError: stream cut"
    assert app.state == "idle"


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_recorded_and_dispatched_order_agree_across_permutations(data: st.DataObject) -> None:
    order = data.draw(registration_orders(NAMES))
    schedule = data.draw(load_schedules(order))
    policy = data.draw(st.sampled_from([None, ["todo_write", TOOL_ORDER_REST, "bash"]]))
    plugins = [
        tool_plugin(n, delay=d, yields=y)
        for n, d, y in zip(order, schedule.delays, schedule.yields, strict=True)
    ]
    adapter = ScriptedAdapter(["ok"])
    config: dict[str, Any] = {"model": "demo"} | ({"tool_order": policy} if policy else {})
    app = AgentApp(config, plugins=plugins, adapter=adapter)

    async def go() -> tuple[str, ...]:
        await app.start()
        await app.run_turn("hi")
        return app.ctx.tools.known_names()

    registered = run(go())
    header = fold_request_header(app.session.events)
    assert header is not None
    expected = (
        ("bash", "read", "subagent", "todo_write", "write")
        if policy is None
        else ("todo_write", "read", "subagent", "write", "bash")
    )
    assert header.tool_names() == expected
    assert adapter.requests[0].header.tool_names() == expected
    assert sorted(registered) == sorted(NAMES)


def test_turn_counter_and_trigger() -> None:
    app, _ = make_app(["a", "b"])
    run(started(app))
    run(app.run_turn("one"))
    run(app.run_turn("two", trigger="schedule"))
    starts = events_of(app.session.events, TURN_START)
    assert [s.data for s in starts] == [
        {"turn": 1, "trigger": "user"},
        {"turn": 2, "trigger": "schedule"},
    ]


def test_a_cancelled_turn_still_ends_balanced() -> None:
    class Hanging:
        async def stream(self, request: ModelRequest) -> Any:
            await asyncio.sleep(60)
            yield None

    app = AgentApp({}, adapter=Hanging())

    async def go() -> None:
        await app.start()
        task = asyncio.ensure_future(app.run_turn("hi"))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(go())
    assert app.session.events[-1].type == TURN_END
    assert thaw(app.session.events[-1].data["reason"]) == {
        "kind": "error",
        "step": 1,
        "message": "cancelled",
    }
    assert app.state == "idle"
    assert [e.type for e in app.session.events].count("step/end") == 1
