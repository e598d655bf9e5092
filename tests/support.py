"""Helpers shared by the tests: tool plugins with controllable load timing."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from headerlock.agent import Context, ToolSchema
from headerlock.cli import main

PluginFn = Callable[[Context], Awaitable[None]]


def tool_plugin(
    name: str, *, delay: float = 0.0, yields: int = 0, description: str = ""
) -> PluginFn:
    """A plugin that registers tool ``name`` (echoing its arguments) after a delay."""

    async def plugin(ctx: Context) -> None:
        for _ in range(yields):
            await asyncio.sleep(0)
        if delay:
            await asyncio.sleep(delay)

        def handler(arguments: Mapping[str, Any]) -> str:
            return f"{name} ok"

        ctx.tools.register(ToolSchema(name, description or f"The {name} tool."), handler)

    plugin.__qualname__ = f"tool_plugin[{name}]"
    return plugin


def events_of(events: list[Any], kind: str) -> list[Any]:
    """The events of one type."""
    return [e for e in events if e.type == kind]


RUN_APP_CONFTEST = """
import asyncio
import pytest
from headerlock.agent import ToolSchema
from headerlock.runtime.adapters.scripted import ScriptedAdapter
from headerlock.runtime.app import AgentApp


def run_app(word):
    def tools(ctx):
        ctx.tools.register(ToolSchema("read", "Read a file."), lambda a: "text")

    app = AgentApp({"model": "demo", "persona": "Be brief."}, plugins=[tools],
                   adapter=ScriptedAdapter([word]))
    async def go():
        async with app:
            await app.run_turn(word)
    asyncio.run(go())
    return app


@pytest.fixture(name="run_app")
def run_app_fixture():
    return run_app
"""
"""A user's ``tests/conftest.py`` with a ``run_app(word)`` fixture driving an ``AgentApp``."""


def run_cli(project: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``headerlock *args`` in process on ``project``'s fixtures and recordings: the exit
    code and everything it printed (stdout, then stderr)."""
    out = io.StringIO()
    code = main(
        [
            *args,
            "--fixtures",
            str(project / "fixtures"),
            "--recordings",
            str(project / "recordings"),
        ],
        out=out,
    )
    return code, out.getvalue() + capsys.readouterr().err
