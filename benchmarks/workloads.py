"""Synthetic workloads: tool sets, long session logs, scenario projects."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

from headerlock import TOOL_ORDER_REST, AgentApp, Context, ScriptedAdapter, ToolSchema
from headerlock.formats.recording import Recording
from headerlock.formats.scrub import scrub_events


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
    def plugin(ctx: Context) -> None:
        for tool in tools:
            ctx.tools.register(tool, lambda arguments: "ok")

    return plugin


def session_events(target_events: int, tools: int = 9) -> list[dict[str, Any]]:
    """A real session log of about ``target_events`` events (tool-call steps)."""
    steps = max(1, target_events // 6)
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


def recording_of(events: list[dict[str, Any]], *, pinned: bool = True) -> Recording:
    """A recording of ``events`` (normalized)."""
    return Recording("bench", "spine", pinned, "default", scrub_events(events, pinned=pinned))


PLUGIN_MODULE = """
from headerlock import ToolSchema

def tools(ctx):
    for i in range({tools}):
        ctx.tools.register(ToolSchema(f"tool_{{i:02d}}", f"Tool {{i}}.", {{"type": "object"}}), lambda a: "ok")
"""


def scenario_project(root: Path, count: int, *, tools: int = 9) -> None:
    """``count`` scenario fixtures (one pinned) using a generated tool plugin module."""
    (root / "fixtures").mkdir(parents=True)
    (root / "bench_tools.py").write_text(PLUGIN_MODULE.format(tools=tools))
    for i in range(count):
        (root / "fixtures" / f"scenario-{i:03d}.yaml").write_text(
            textwrap.dedent(
                f"""\
                pin: {"true" if i == 0 else "false"}
                config: {{model: bench, persona: Benchmark persona.}}
                plugins: ["bench_tools:tools"]
                steps: [{{prompt: "prompt {i}"}}]
                model:
                  - tool_calls: [{{name: tool_01, arguments: {{path: "f{i}.txt"}}}}]
                  - text: "done {i}"
                """
            )
        )


def _single(name: str) -> Any:
    def plugin(ctx: Context) -> None:
        ctx.tools.register(
            ToolSchema(name, f"The {name} tool.", {"type": "object"}), lambda a: "ok"
        )

    return plugin


def nine_tools(ctx: Context) -> None:
    """The nine tools of ``session_events`` (for replaying its recordings)."""
    for tool in tool_set(9):
        ctx.tools.register(tool, lambda arguments: "ok")


tool_0, tool_1, tool_2, tool_3, tool_4, tool_5, tool_6, tool_7, tool_8 = (
    _single(f"t{i}") for i in range(9)
)
