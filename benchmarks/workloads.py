"""In-process workloads: tool sets, long session logs, one-tool plugins."""

from __future__ import annotations

import asyncio
import copy
import gc
import json
from collections.abc import Mapping
from typing import Any

from headerlock.agent import TOOL_ORDER_REST, AgentApp, Context, ScriptedAdapter, ToolSchema
from headerlock.formats.recording import Recording
from headerlock.formats.scrub import scrub_events

EVENTS_PER_CALL = 7
"""Events per tool-call step of ``session_events``: start, 2 chunks, message, call, result, end."""


def tool_set(n: int) -> list[ToolSchema]:
    """``n`` tools with realistic schemas, in a scrambled (registration) order."""
    return [
        ToolSchema(
            f"tool_{(i * 7919) % n:05d}",
            f"Tool number {i}: does one thing well.",
            {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        )
        for i in range(n)
    ]


def policy_for(tools: list[ToolSchema]) -> list[str]:
    """A tool_order listing a tenth of the tools around the rest entry."""
    listed = sorted(t.name for t in tools)[:: max(1, 10)]
    half = len(listed) // 2
    return [*listed[:half], TOOL_ORDER_REST, *listed[half:]]


def tools_plugin(tools: list[ToolSchema]) -> Any:
    """A plugin registering ``tools`` (each answers ``ok``)."""

    def plugin(ctx: Context) -> None:
        for tool in tools:
            ctx.tools.register(tool, lambda arguments: "ok")

    return plugin


def agent_events(steps: int, tools: int = 9) -> list[dict[str, Any]]:
    """The real session log of one turn: ``steps - 1`` tool-call steps, then ``done``."""
    replies: list[Any] = [
        {
            "text": f"step {i} ",
            "tool_calls": [{"name": "tool_00001", "arguments": {"path": f"f{i}.txt"}}],
        }
        for i in range(steps - 1)
    ]
    replies.append("done")
    app = AgentApp(
        {"model": "bench", "persona": "Benchmark persona.\nTwo lines.", "max_steps": steps + 1},
        plugins=[tools_plugin(tool_set(tools))],
        adapter=ScriptedAdapter(replies),
    )

    async def go() -> None:
        async with app:
            await app.run_turn("run the benchmark")

    asyncio.run(go())
    return app.session.to_data()


def session_events(target_events: int, tools: int = 9) -> list[dict[str, Any]]:
    """A real session log of about ``target_events`` events (one tool call per step)."""
    return agent_events(max(1, target_events // 6), tools)


def _renamed(value: Any, swaps: Mapping[Any, Any]) -> Any:
    if isinstance(value, dict):
        return {
            k: (swaps.get(("step", v), v) if k == "step" else _renamed(v, swaps))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_renamed(v, swaps) for v in value]
    return swaps.get(value, value) if isinstance(value, str) else value


def long_session(calls: int) -> list[dict[str, Any]]:
    """The session log ``agent_events(calls + 1)`` would give, built from a 3-step run.

    Running the agent for 100,000 steps takes minutes; this clones its second
    tool-call step with the step number, call id, texts and path renumbered.
    ``tests/test_benchmarks.py`` checks it against real runs.
    """
    if calls < 2:
        return agent_events(calls + 1)
    real = agent_events(3)
    second = [i for i, e in enumerate(real) if e["data"].get("step") == 2]
    start, end = second[0], second[-1] + 1
    if end - start != EVENTS_PER_CALL:
        raise RuntimeError(f"a tool-call step has {end - start} events, not {EVENTS_PER_CALL}")
    head, tail = real[:start], real[end:]
    marks = {("step", 2): "@S@", "1 ": "@I@ ", "step 1 ": "step @I@ ", "call_2": "call_@S@",
             "f1.txt": "f@I@.txt"}  # fmt: skip
    template = json.dumps(_renamed(real[start:end], marks)).replace('"@S@"', "@S@")
    events = [*head]
    paused = gc.isenabled()
    gc.disable()  # setup, not measured: millions of new containers would trigger full GCs
    try:
        for step in range(2, calls + 1):
            text = template.replace("@S@", str(step)).replace("@I@", str(step - 1))
            events += json.loads(text)
    finally:
        if paused:
            gc.enable()
    last = calls + 1
    for event in copy.deepcopy(tail):
        if event["data"].get("step") == 3:
            event["data"]["step"] = last
        reason = event["data"].get("reason")
        if isinstance(reason, dict) and reason.get("step") == 3:
            reason["step"] = last
        events.append(event)
    for seq, event in enumerate(events, 1):
        event["seq"] = seq
    return events


def recording_of(events: list[dict[str, Any]], *, pinned: bool = True) -> Recording:
    """A recording of ``events`` (normalized)."""
    return Recording("bench", "spine", pinned, "default", scrub_events(events, pinned=pinned))


def nine_tools(ctx: Context) -> None:
    """The nine tools of ``session_events`` (for replaying its recordings)."""
    for tool in tool_set(9):
        ctx.tools.register(tool, lambda arguments: "ok")


def _single(name: str) -> Any:
    def plugin(ctx: Context) -> None:
        ctx.tools.register(
            ToolSchema(name, f"The {name} tool.", {"type": "object"}), lambda a: "ok"
        )

    return plugin


tool_0, tool_1, tool_2, tool_3, tool_4, tool_5, tool_6, tool_7, tool_8 = (
    _single(f"t{i}") for i in range(9)
)
