"""The demo apps: forwarding through the spine, the stdio chat and the ACP server."""

from __future__ import annotations

import asyncio
import contextlib
import io
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from headerlock.agent import (
    TOOL_ORDER_REST,
    AcpAppConfig,
    StdioAppConfig,
    SystemPrompt,
    parse_config,
)
from headerlock.demo.stdio_app import run_stdio, stdio_app
from headerlock.runtime.adapters.scripted import ScriptedAdapter
from headerlock.runtime.app import AgentApp

PLUGINS = ["headerlock.demo.tools:files", "headerlock.demo.tools:todos"]


def prompt_service(app: AgentApp) -> SystemPrompt:
    service: SystemPrompt = app.ctx.get("system_prompt")
    return service


@pytest.mark.parametrize("tool_order", [None, ["zulu", TOOL_ORDER_REST]])
def test_spine_forwards_tool_order_only_when_set(tool_order: list[str] | None) -> None:
    config: dict[str, Any] = {"persona": "p"} | ({"tool_order": tool_order} if tool_order else {})
    app = AgentApp(config, adapter=ScriptedAdapter(["x"]))
    asyncio.run(app.start())
    expected = tuple(tool_order) if tool_order else None
    assert prompt_service(app).tool_order == expected
    assert prompt_service(app).persona == "p"


def test_stdio_app_prints_replies_and_tool_order(tmp_path: Path) -> None:
    config = parse_config(
        StdioAppConfig,
        {
            "tool_order": ["todo_write", TOOL_ORDER_REST, "read"],
            "plugins": PLUGINS,
            "prompt": "you> ",
        },
    )
    adapter = ScriptedAdapter(
        [
            {"tool_calls": [{"name": "write", "arguments": {"path": "a.txt", "content": "A"}}]},
            "Wrote it.",
        ]
    )
    out = io.StringIO()
    app = stdio_app(config, adapter, tmp_path)
    code = asyncio.run(
        run_stdio(app, prompt=config.prompt, stdin=io.StringIO("write a file\n"), stdout=out)
    )
    assert code == 0
    assert out.getvalue().splitlines() == [
        "you> [header initial] tools: todo_write, edit, list, write, read",
        "Wrote it.",
        "you> ",
    ]
    assert (tmp_path / "a.txt").read_text() == "A"


def test_stdio_app_keeps_running_after_a_failed_turn(tmp_path: Path) -> None:
    config = parse_config(
        StdioAppConfig, {"tool_order": ["ghost", TOOL_ORDER_REST], "plugins": PLUGINS}
    )
    out = io.StringIO()
    app = stdio_app(config, ScriptedAdapter(["x"]), tmp_path)
    code = asyncio.run(
        run_stdio(app, prompt=config.prompt, stdin=io.StringIO("one\ntwo\n"), stdout=out)
    )
    assert code == 1
    errors = [line for line in out.getvalue().splitlines() if "error:" in line]
    assert len(errors) == 2
    assert (
        'unregistered tool "ghost"; known tools: edit, list, read, todo_write, write' in errors[0]
    )


def test_stdio_main_as_a_process(tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text("persona: Terse.\nplugins: [headerlock.demo.tools:files]\n")
    (tmp_path / "script.yaml").write_text("- PONG\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "headerlock.demo.stdio_app",
            "--config",
            "app.yaml",
            "--script",
            "script.yaml",
        ],
        input="Reply with exactly the word: PONG.\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "[header initial] tools: edit, list, read, write" in result.stdout
    assert "PONG" in result.stdout
    (tmp_path / "bad.yaml").write_text("tool_order: []\n")
    bad = subprocess.run(
        [sys.executable, "-m", "headerlock.demo.stdio_app", "--config", "bad.yaml"],
        capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False,
    )  # fmt: skip
    assert bad.returncode == 2
    assert 'bad.yaml: tool_order must contain the "<unlisted-tools>" rest entry' in bad.stderr


def test_acp_config_forwards_like_stdio() -> None:
    config = parse_config(
        AcpAppConfig, {"tool_order": ["zulu", TOOL_ORDER_REST], "agent_name": "x"}
    )
    app = AgentApp(config, adapter=ScriptedAdapter(["x"]))  # an app config is a spine config
    asyncio.run(app.start())
    assert prompt_service(app).tool_order == ("zulu", TOOL_ORDER_REST)


class RecordingClient:
    """An ACP client that keeps what the agent sends."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.headers: list[dict[str, Any]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        self.headers.append({"method": method, **params})

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the demo never asks for permission")

    def on_connect(self, conn: Any) -> None:
        pass


@contextlib.asynccontextmanager
async def spawn_demo(
    acp: Any, client: RecordingClient, config: Path, script: Path
) -> AsyncIterator[Any]:
    """The ACP demo in a subprocess, connected to ``client`` through the SDK."""
    command = ["-m", "headerlock.demo.acp_app", "--config", str(config), "--script", str(script)]
    async with acp.spawn_agent_process(client, sys.executable, *command) as (conn, _process):
        yield conn


def test_acp_demo_over_a_real_subprocess(tmp_path: Path) -> None:
    acp = pytest.importorskip("acp")
    (tmp_path / "notes.txt").write_text("hello\n")
    config = tmp_path / "app.yaml"
    config.write_text(
        "tool_order: [todo_write, <unlisted-tools>]\n"
        "plugins: [headerlock.demo.tools:files, headerlock.demo.tools:todos]\n"
    )
    script = tmp_path / "script.yaml"
    script.write_text(
        "- tool_calls: [{name: read, arguments: {path: notes.txt}}]\n- The notes say hello.\n"
    )
    client = RecordingClient()

    async def go() -> tuple[Any, Any]:
        async with spawn_demo(acp, client, config, script) as conn:
            init = await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            session = await conn.new_session(cwd=str(tmp_path))
            response = await conn.prompt(
                session_id=session.session_id, prompt=[acp.text_block("notes?")]
            )
            return init, response

    init, response = asyncio.run(asyncio.wait_for(go(), 60))
    assert init.agent_info.name == "headerlock-demo"
    assert response.stop_reason == "end_turn"
    kinds = [u.session_update for u in client.updates]
    assert kinds == ["tool_call", "tool_call_update", *["agent_message_chunk"] * 4]
    assert client.updates[1].content[0].content.text == "hello\n"
    text = "".join(
        u.content.text for u in client.updates if u.session_update == "agent_message_chunk"
    )
    assert text == "The notes say hello."
    assert client.headers == [
        {
            "method": "headerlock/request_header",
            "sessionId": "session-1",
            "reason": "initial",
            "tools": ["todo_write", "edit", "list", "read", "write"],
        }
    ]


def test_acp_demo_reports_a_failed_turn_as_an_error_and_stays_up(tmp_path: Path) -> None:
    acp = pytest.importorskip("acp")
    config = tmp_path / "app.yaml"
    config.write_text("tool_order: [ghost, <unlisted-tools>]\n")
    script = tmp_path / "script.yaml"
    script.write_text("- never\n")

    async def go() -> list[str]:
        messages = []
        async with spawn_demo(acp, RecordingClient(), config, script) as conn:
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            session = await conn.new_session(cwd=str(tmp_path))
            for _ in range(2):
                with pytest.raises(acp.RequestError) as info:
                    await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("hi")])
                messages.append(str(info.value.data))
        return messages

    messages = asyncio.run(asyncio.wait_for(go(), 60))
    assert len(messages) == 2
    assert all('unregistered tool "ghost"' in m for m in messages)
