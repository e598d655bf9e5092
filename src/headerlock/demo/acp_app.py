"""The ACP demo: the spine as an Agent Client Protocol server over stdio.

``python -m headerlock.demo.acp_app --config app.yaml [--script replies.yaml]``

Each ``session/new`` starts an ``AgentApp`` in the session's ``cwd``; a
``session/prompt`` runs one turn and streams its text and tool calls as
session updates. Every recorded request header is also announced with the
extension notification ``_headerlock/request_header`` ``{sessionId, reason,
tools}``, and ``_headerlock/session_log`` ``{sessionId}`` returns a session's log.
Every JSON object sent has its keys in canonical order (tool schemas included).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Sequence
from typing import Any

from headerlock.demo.launch import add_launch_arguments, load_app_config, load_script
from headerlock.errors import ConfigError, HeaderlockError
from headerlock.runtime.app import AgentApp
from headerlock.runtime.canonical import sorted_keys
from headerlock.runtime.config import AcpAppConfig, SpineConfig, forward
from headerlock.runtime.header import fold_request_header
from headerlock.runtime.llm import LlmAdapter
from headerlock.runtime.session import (
    ASSISTANT_CHUNK,
    REQUEST_HEADER,
    REQUEST_HEADER_DELTA,
    TOOL_CALL,
    TOOL_RESULT,
    Event,
)

HEADER_NOTIFICATION = "headerlock/request_header"
SESSION_LOG_METHOD = "headerlock/session_log"
"""Extension method ``{sessionId} -> {events}``: a session's log as plain data."""


def require_acp() -> Any:
    """The ACP SDK module; a ``ConfigError`` says how to install it when it is missing."""
    try:
        import acp
    except ImportError:  # pragma: no cover - depends on the environment
        raise ConfigError(
            "the ACP demo needs the agent-client-protocol SDK: pip install 'headerlock[acp]'"
        ) from None
    return acp


class AcpAgent:
    """An ACP agent whose sessions are ``AgentApp`` instances."""

    def __init__(
        self, config: AcpAppConfig, adapter_factory: Callable[[], LlmAdapter | None]
    ) -> None:
        self.config = config
        self.adapter_factory = adapter_factory
        self.sessions: dict[str, AgentApp] = {}
        self._conn: Any = None
        self._pending: list[asyncio.Task[None]] = []

    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> Any:
        lib = require_acp()
        schema = lib.schema
        return schema.InitializeResponse(
            protocol_version=min(protocol_version, lib.PROTOCOL_VERSION),
            agent_capabilities=schema.AgentCapabilities(),
            agent_info=schema.Implementation(name=self.config.agent_name, version="0.1.0"),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> Any:
        session_id = f"session-{len(self.sessions) + 1}"
        app = AgentApp(
            forward(self.config, SpineConfig), adapter=self.adapter_factory(), workspace=cwd
        )
        app.session.subscribe(lambda event: self._forward(session_id, app, event))
        await app.start()
        self.sessions[session_id] = app
        return require_acp().schema.NewSessionResponse(session_id=session_id)

    def _forward(self, session_id: str, app: AgentApp, event: Event) -> None:
        update = self._update_for(app, event)
        if update is not None:
            self._pending.append(asyncio.ensure_future(update(session_id)))

    def _update_for(self, app: AgentApp, event: Event) -> Callable[[str], Any] | None:
        lib = require_acp()
        conn = self._conn
        data = event.data
        if event.type == ASSISTANT_CHUNK:
            update = lib.update_agent_message_text(data["text"])
        elif event.type == TOOL_CALL:
            update = lib.start_tool_call(
                data["id"],
                data["name"],
                status="in_progress",
                raw_input=sorted_keys(data["arguments"]),
            )
        elif event.type == TOOL_RESULT:
            update = lib.update_tool_call(
                data["id"],
                status="failed" if data.get("error") else "completed",
                content=[lib.tool_content(lib.text_block(data["content"]))],
            )
        elif event.type in (REQUEST_HEADER, REQUEST_HEADER_DELTA):
            header = fold_request_header(app.session.events)
            params = {
                "reason": data.get("reason", "delta"),
                "tools": list(header.tool_names()) if header else [],
            }
            return lambda sid: conn.ext_notification(
                HEADER_NOTIFICATION, sorted_keys({"sessionId": sid, **params})
            )
        else:
            return None
        return lambda sid: conn.session_update(session_id=sid, update=update)

    async def _flush(self) -> None:
        pending, self._pending = self._pending, []
        for task in pending:
            await task

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        lib = require_acp()
        app = self.sessions.get(session_id)
        if app is None:
            raise lib.RequestError.invalid_params({"sessionId": f"unknown session {session_id!r}"})
        text = "".join(getattr(block, "text", "") for block in prompt)
        result = await app.run_turn(text)
        await self._flush()
        if result.reason.kind == "error":
            raise lib.RequestError.internal_error({"message": result.reason.message})
        stop = "max_turn_requests" if result.reason.kind == "max-steps" else "end_turn"
        return lib.schema.PromptResponse(stop_reason=stop)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        lib = require_acp()
        if method != SESSION_LOG_METHOD:
            raise lib.RequestError.method_not_found(method)
        app = self.sessions.get(str(params.get("sessionId")))
        if app is None:
            raise lib.RequestError.invalid_params({"sessionId": "unknown session"})
        return {"events": sorted_keys(app.session.to_data())}

    async def close(self) -> None:
        for app in self.sessions.values():
            await app.stop()


async def serve(config: AcpAppConfig, adapter_factory: Callable[[], LlmAdapter | None]) -> None:
    """Serve ACP over this process's stdin and stdout until the client hangs up."""
    lib = require_acp()
    agent = AcpAgent(config, adapter_factory)
    try:
        await lib.run_agent(agent)
    finally:
        await agent.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ACP demo."""
    parser = argparse.ArgumentParser(prog="python -m headerlock.demo.acp_app", description=__doc__)
    add_launch_arguments(parser)
    args = parser.parse_args(argv)
    try:
        config = load_app_config(AcpAppConfig, args.config)
        load_script(args.script)  # fail fast on a bad script
        asyncio.run(serve(config, lambda: load_script(args.script)))
    except HeaderlockError as error:
        print(f"headerlock: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


class TranscriptClient:
    """An ACP client that keeps, in arrival order, what the agent sends it."""

    def __init__(self) -> None:
        self.transcript: list[dict[str, Any]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        data = update.model_dump(mode="json", by_alias=True, exclude_none=True)
        self.transcript.append({"update": data})

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        self.transcript.append({"notification": method, "params": params})

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise require_acp().RequestError.method_not_found("session/request_permission")

    def on_connect(self, conn: Any) -> None:
        return None
