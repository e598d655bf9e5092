"""The plugin host: services, events, plugins and disposal."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from headerlock.agent import Context, ToolRegistry, ToolSchema
from headerlock.errors import PluginError, ServiceNotFoundError


def test_missing_service_names_what_exists() -> None:
    ctx = Context()
    ctx.provide("tools", ToolRegistry())
    with pytest.raises(
        ServiceNotFoundError, match=r"no service named 'llm'.*provided services: tools"
    ):
        ctx.get("llm")


def test_service_names_are_unique_and_disposable() -> None:
    ctx = Context()
    dispose = ctx.provide("x", 1)
    with pytest.raises(ValueError, match="already provided"):
        ctx.provide("x", 2)
    dispose()
    assert not ctx.has("x")


def test_emit_contains_and_reports_listener_errors(caplog: pytest.LogCaptureFixture) -> None:
    ctx = Context()
    seen: list[Any] = []
    reported: list[tuple[str, Exception]] = []

    def broken(value: int) -> None:
        raise RuntimeError("boom")

    ctx.on("tick", broken)
    ctx.on("tick", seen.append)
    ctx.on("internal/error", lambda name, error: reported.append((name, error)))
    with caplog.at_level(logging.ERROR, logger="headerlock"):
        ctx.emit("tick", 1)
    assert seen == [1]
    assert [(n, str(e)) for n, e in reported] == [("tick", "boom")]
    assert "boom" in caplog.text


def test_on_prepend_and_dispose() -> None:
    ctx = Context()
    calls: list[str] = []
    ctx.on("e", lambda: calls.append("a"))
    dispose_b = ctx.on("e", lambda: calls.append("b"), prepend=True)
    ctx.emit("e")
    dispose_b()
    ctx.emit("e")
    assert calls == ["b", "a", "a"]


def test_serial_and_waterfall_await_async_listeners() -> None:
    ctx = Context()
    order: list[int] = []

    async def first(x: int) -> None:
        await asyncio.sleep(0.001)
        order.append(x)

    ctx.on("s", first)
    ctx.on("s", lambda x: order.append(x + 1))

    async def double(value: int, extra: int) -> int:
        return value * 2 + extra

    ctx.on("w", double)
    ctx.on("w", lambda value, extra: value + 1)

    async def run() -> int:
        await ctx.serial("s", 10)
        return await ctx.waterfall("w", 3, 100)

    assert asyncio.run(run()) == 107
    assert order == [10, 11]


def test_serial_propagates_errors() -> None:
    ctx = Context()

    def broken() -> None:
        raise KeyError("x")

    ctx.on("s", broken)
    with pytest.raises(KeyError):
        asyncio.run(ctx.serial("s"))


def test_plugin_unload_disposes_everything_it_registered() -> None:
    ctx = Context()
    ctx.provide("tools", ToolRegistry())

    def plugin(sub: Context, config: dict[str, str]) -> None:
        sub.tools.register(ToolSchema(config["name"]))
        sub.on("e", lambda: None)
        sub.provide("svc", object())

    async def run() -> Context:
        return await ctx.plugin(plugin, {"name": "bash"})

    child = asyncio.run(run())
    assert ctx.tools.known_names() == ("bash",)
    assert ctx.has("svc")
    assert len(ctx.listeners("e")) == 1
    child.dispose()
    assert ctx.tools.known_names() == ()
    assert not ctx.has("svc")
    assert ctx.listeners("e") == ()


def test_plugin_config_mismatch_and_failed_load_rolls_back() -> None:
    ctx = Context()
    ctx.provide("tools", ToolRegistry())

    def no_config(sub: Context) -> None:
        pass

    with pytest.raises(PluginError, match="takes no config"):
        asyncio.run(ctx.plugin(no_config, {"a": 1}))

    def half(sub: Context) -> None:
        sub.tools.register(ToolSchema("first"))
        raise RuntimeError("broken plugin")

    with pytest.raises(RuntimeError, match="broken plugin"):
        asyncio.run(ctx.plugin(half))
    assert ctx.tools.known_names() == ()


def _delayed(name: str, delay: float) -> Any:
    async def plugin(sub: Context) -> None:
        await asyncio.sleep(delay)
        sub.tools.register(ToolSchema(name))

    return plugin


def test_concurrent_loading_registers_in_completion_order() -> None:
    """The race the RFC is about: registration order follows load timing."""

    def load(delays: dict[str, float]) -> tuple[str, ...]:
        ctx = Context()
        ctx.provide("tools", ToolRegistry())
        asyncio.run(ctx.load_plugins([_delayed(n, d) for n, d in delays.items()]))
        return ctx.tools.known_names()

    assert load({"a": 0.02, "b": 0.0}) == ("b", "a")
    assert load({"a": 0.0, "b": 0.02}) == ("a", "b")


def test_load_plugins_unloads_all_when_one_fails() -> None:
    ctx = Context()
    ctx.provide("tools", ToolRegistry())

    async def bad(sub: Context) -> None:
        await asyncio.sleep(0.01)
        raise ValueError("bad plugin")

    with pytest.raises(ValueError, match="bad plugin"):
        asyncio.run(ctx.load_plugins([_delayed("a", 0), bad]))
    assert ctx.tools.known_names() == ()
