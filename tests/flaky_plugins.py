"""Deliberately order-dependent plugins: the detectors must catch every one of them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from headerlock.agent import Context, PromptAssembly, Section, SystemPrompt, ToolSchema
from headerlock.runtime.system_prompt import ASSEMBLE_EVENT


def _tool(name: str) -> Any:
    def plugin(ctx: Context) -> None:
        def handler(arguments: Mapping[str, Any]) -> str:
            return f"{name} ran"

        ctx.tools.register(ToolSchema(name, f"The {name} tool.", {"type": "object"}), handler)

    plugin.__name__ = plugin.__qualname__ = name
    return plugin


alpha, bravo, charlie, delta = _tool("alpha"), _tool("bravo"), _tool("charlie"), _tool("delta")


def registration_order_listener(ctx: Context) -> None:
    """Puts the tools back in registration order: undoes the RFC's normalization."""

    def listener(assembly: PromptAssembly) -> PromptAssembly:
        known = list(ctx.tools.known_names())
        tools = sorted(assembly.tools, key=lambda t: known.index(t.name) if t.name in known else -1)
        return dataclasses.replace(assembly, tools=tuple(tools))

    ctx.on(ASSEMBLE_EVENT, listener)


def hash_seed_section(ctx: Context) -> None:
    """A system prompt section built by iterating a set of strings (PYTHONHASHSEED order)."""
    prompt: SystemPrompt = ctx.get("system_prompt")
    areas = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"}
    prompt.add_section(Section("areas", "Areas: " + ", ".join(areas)))


def failing_tool(ctx: Context) -> None:
    """A tool whose handler always raises."""

    def handler(arguments: Mapping[str, Any]) -> str:
        raise RuntimeError("disk on fire")

    ctx.tools.register(ToolSchema("explode", "Always fails.", {"type": "object"}), handler)


def raising_listener(ctx: Context) -> None:
    """An assemble listener that raises."""

    def listener(assembly: PromptAssembly) -> PromptAssembly:
        raise LookupError("listener lost its index")

    ctx.on(ASSEMBLE_EVENT, listener)


_loads: list[str] = []


def counting_section(ctx: Context) -> None:
    """A section that counts its loads in this process: the same in every fresh process."""
    _loads.append("load")
    prompt: SystemPrompt = ctx.get("system_prompt")
    prompt.add_section(Section("loads", f"Loaded {len(_loads)} time(s) in this process."))
    print("a plugin writing to stdout")
