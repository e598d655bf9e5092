"""Runtime faults: blocking tools, hanging plugins, SystemExit and KeyboardInterrupt in
tools, Ctrl-C (issue 13, point 4)."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from headerlock.agent import Context, SpineConfig, ToolSchema, parse_config
from headerlock.errors import ConfigError, PluginError, PluginTimeoutError
from headerlock.runtime.adapters.scripted import ScriptedAdapter
from headerlock.runtime.app import AgentApp
from headerlock.runtime.session import TOOL_RESULT
from tests.support import events_of

# -- tool_timeout bounds sync tools --------------------------------------------------------


def test_a_blocking_sync_tool_is_bounded_by_tool_timeout() -> None:
    release = threading.Event()

    def block(arguments: Mapping[str, Any]) -> str:
        release.wait(5)
        return "late"

    def plugin(ctx: Context) -> None:
        ctx.tools.register(ToolSchema("block"), block)

    replies: list[Any] = [{"tool_calls": [{"name": "block"}]}, "still here"]
    app = AgentApp({"tool_timeout": 0.3}, plugins=[plugin], adapter=ScriptedAdapter(replies))

    async def go() -> tuple[Any, float, Any]:
        await app.start()
        started = time.monotonic()
        first = await app.run_turn("block")
        elapsed = time.monotonic() - started
        return first, elapsed, await app.run_turn("go on")

    try:
        first, elapsed, second = asyncio.run(go())
    finally:
        release.set()
    assert first.reason.kind == "error"
    assert first.reason.message == 'tool "block" timed out after 0.3s'
    assert 0.3 <= elapsed < 1.5
    (result,) = events_of(app.session.events, TOOL_RESULT)
    assert result.data["error"] is True
    assert (second.reason.kind, second.text) == ("stop", "still here")


def run_script(tmp_path: Path, source: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run ``source`` as a script in a fresh interpreter (cwd ``tmp_path``)."""
    (tmp_path / "script.py").write_text(source)
    return subprocess.run(
        [sys.executable, "script.py"],
        cwd=tmp_path, capture_output=True, text=True, check=False, **kwargs,
    )  # fmt: skip


PRELUDE = """\
import asyncio, json, sys, time
from headerlock.agent import ToolSchema
from headerlock.runtime.adapters.scripted import ScriptedAdapter
from headerlock.runtime.app import AgentApp

def show(result):
    print(json.dumps(result.reason.to_data() | {"text": result.text}), flush=True)
"""

SLEEPING_TOOL = (
    PRELUDE
    + """
def plugin(ctx):
    ctx.tools.register(ToolSchema("nap"), lambda arguments: time.sleep(60))

async def main():
    replies = [{"tool_calls": [{"name": "nap"}]}]
    async with AgentApp({"tool_timeout": 0.3}, [plugin], ScriptedAdapter(replies)) as app:
        show(await app.run_turn("nap"))

asyncio.run(main())
"""
)


def test_a_timed_out_tool_does_not_hold_up_process_exit(tmp_path: Path) -> None:
    started = time.monotonic()
    result = run_script(tmp_path, SLEEPING_TOOL, timeout=20)
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    reason = json.loads(result.stdout)
    assert reason["message"] == 'tool "nap" timed out after 0.3s'
    assert elapsed < 5  # the sleeping thread is abandoned, not joined


# -- SystemExit and KeyboardInterrupt raised by a tool ---------------------------------------

RAISING_TOOLS = (
    PRELUDE
    + """
def leave(arguments):
    raise SystemExit(3)

def interrupt(arguments):
    raise KeyboardInterrupt

async def leave_async(arguments):
    raise SystemExit("bye")

async def interrupt_async(arguments):
    await asyncio.sleep(0)
    raise KeyboardInterrupt

TOOLS = [leave, interrupt, leave_async, interrupt_async]

def plugin(ctx):
    for tool in TOOLS:
        ctx.tools.register(ToolSchema(tool.__name__), tool)

async def main():
    replies = [{"tool_calls": [{"name": tool.__name__}]} for tool in TOOLS] + ["alive"]
    async with AgentApp({}, [plugin], ScriptedAdapter(replies)) as app:
        for tool in TOOLS:
            show(await app.run_turn(tool.__name__))
        show(await app.run_turn("still there?"))
        results = [e.data for e in app.session.events if e.type == "tool/result"]
        print(json.dumps([r["error"] for r in results]))

asyncio.run(main())
"""
)


def test_system_exit_and_keyboard_interrupt_in_a_tool_are_tool_errors(tmp_path: Path) -> None:
    result = run_script(tmp_path, RAISING_TOOLS, timeout=30)
    assert result.returncode == 0, result.stderr
    *turns, errors = [json.loads(line) for line in result.stdout.splitlines()]
    assert [t.get("message") for t in turns] == [
        'tool "leave" raised SystemExit: 3',
        'tool "interrupt" raised KeyboardInterrupt',
        'tool "leave_async" raised SystemExit: bye',
        'tool "interrupt_async" raised KeyboardInterrupt',
        None,
    ]
    assert turns[-1] == {"kind": "stop", "step": 1, "text": "alive"}
    assert errors == [True] * 4


# -- Ctrl-C still stops the run ----------------------------------------------------------

INTERRUPTED = (
    PRELUDE
    + """
def nap(arguments):
    print("started", flush=True)
    time.sleep(60)

def tools(ctx):
    ctx.tools.register(ToolSchema("nap"), nap)

def slow_plugin(ctx):
    nap({})

async def main(where):
    plugins = [tools] if where == "tool" else [tools, slow_plugin]
    config = {"tool_timeout": 30, "plugin_timeout": 30}
    app = AgentApp(config, plugins, ScriptedAdapter([{"tool_calls": [{"name": "nap"}]}]))
    try:
        await app.start()
        await app.run_turn("nap")
    finally:
        events = app.session.events
        last = events[-1].to_data() if events else None
        print(json.dumps({"state": app.state, "last": last}), flush=True)

asyncio.run(main(sys.argv[1]))
"""
)


@pytest.mark.parametrize("where", ["tool", "plugin"])
def test_ctrl_c_stops_a_run_blocked_in_a_sync_tool_or_plugin(tmp_path: Path, where: str) -> None:
    (tmp_path / "script.py").write_text(INTERRUPTED)
    process = subprocess.Popen(
        [sys.executable, "script.py", where],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == "started\n"
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=10)
        elapsed = time.monotonic() - sent
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode in (-signal.SIGINT, 128 + signal.SIGINT, 1), err
    assert "KeyboardInterrupt" in err
    assert elapsed < 3
    report = json.loads(out)
    if where == "tool":  # the turn ended balanced before Ctrl-C stopped the process
        assert report["last"]["type"] == "turn/end"
        assert report["last"]["data"]["reason"]["message"] == "cancelled"
    else:
        assert report == {"state": "new", "last": None}


def test_ctrl_c_at_the_stdio_demo_prompt_stops_it(tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text("persona: Terse.\n")
    (tmp_path / "script.yaml").write_text("- PONG\n")
    command = [sys.executable, "-m", "headerlock.demo.stdio_app", "--config", "app.yaml"]
    process = subprocess.Popen(
        [*command, "--script", "script.yaml"],
        cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    # stdin stays open, as a terminal's does
    try:
        assert process.stdout is not None
        assert process.stdout.read(2) == b"> "
        process.send_signal(signal.SIGINT)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()
    assert process.returncode in (-signal.SIGINT, 128 + signal.SIGINT, 1)


# -- plugin_timeout ----------------------------------------------------------------------


def test_plugin_timeout_is_a_spine_option_of_30_seconds() -> None:
    assert parse_config(SpineConfig, {}).plugin_timeout == 30.0
    assert parse_config(SpineConfig, {"plugin_timeout": 2}).plugin_timeout == 2
    with pytest.raises(ConfigError, match="plugin_timeout: Input should be greater than 0"):
        parse_config(SpineConfig, {"plugin_timeout": 0}, source="app.yaml")


def test_a_blocking_sync_plugin_times_out_with_an_error_naming_it() -> None:
    release = threading.Event()

    def blocking_plugin(ctx: Context) -> None:
        release.wait(5)

    app = AgentApp({"plugin_timeout": 0.3}, plugins=[blocking_plugin], adapter=ScriptedAdapter([]))
    started = time.monotonic()
    try:
        with pytest.raises(PluginError) as info:
            asyncio.run(app.start())
    finally:
        release.set()
    assert time.monotonic() - started < 1.5
    assert isinstance(info.value, PluginTimeoutError) and info.value.timeout == 0.3
    assert info.value.plugin.endswith("blocking_plugin")
    assert str(info.value) == (
        f"plugin {info.value.plugin} did not finish loading within 0.3s (plugin_timeout)"
    )
    assert app.state == "new" and not app.ctx.has("tools")


def test_a_hanging_async_plugin_from_the_config_times_out_naming_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "slow_plugins.py").write_text(
        "import asyncio\n\nasync def hang(ctx):\n    await asyncio.sleep(5)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    config = {"plugin_timeout": 0.2, "plugins": ["slow_plugins:hang"]}
    app = AgentApp(config, adapter=ScriptedAdapter([]))
    started = time.monotonic()
    with pytest.raises(PluginTimeoutError) as info:
        asyncio.run(app.start())
    assert time.monotonic() - started < 1.5
    assert info.value.plugin == "slow_plugins:hang"
    assert "plugin slow_plugins:hang did not finish loading within 0.2s" in str(info.value)


def test_fast_plugins_still_load_and_a_sync_one_registers_in_place() -> None:
    seen: list[str] = []

    def sync_plugin(ctx: Context) -> None:
        seen.append(threading.current_thread().name)
        ctx.tools.register(ToolSchema("sync_tool"), lambda a: "ok")

    async def async_plugin(ctx: Context) -> None:
        await asyncio.sleep(0)
        ctx.tools.register(ToolSchema("async_tool"), lambda a: "ok")

    app = AgentApp({"plugin_timeout": 5}, [sync_plugin, async_plugin], ScriptedAdapter([]))
    asyncio.run(app.start())
    # The loop waits for the sync plugin as if it ran in place: it registers first.
    assert app.ctx.tools.known_names() == ("sync_tool", "async_tool")
    assert seen == ["headerlock-plugin"]
