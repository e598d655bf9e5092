"""``app: wire``: a fixture runs the user's own agent, captured at the HTTP layer.

``config: {entry: "package.module:callable"}`` names a function that takes one
prompt and runs the agent (sync or async). Each step calls it inside
``lock(mode="record", script=...)`` with the fixture's ``model:`` as the
script; the requests it sends become a session log (one model request per
step, its header recorded by the runtime's header rule), so record, replay,
pins, header classes, guards and ``headerlock flakes`` treat it like any other
scenario.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import Field

from headerlock.errors import ConfigError
from headerlock.runtime.adapters.scripted import Reply, reply_to_data
from headerlock.runtime.config import Schema
from headerlock.runtime.driver import DriverJob, RunOutput
from headerlock.runtime.header import RequestHeader, header_record
from headerlock.runtime.session import (
    ASSISTANT_CHUNK,
    ASSISTANT_ERROR,
    ASSISTANT_MESSAGE,
    STEP_END,
    STEP_START,
    TURN_END,
    TURN_START,
    USER_MESSAGE,
    SessionLog,
)
from headerlock.runtime.tools import ToolSchema
from headerlock.testing.wire.lock import WireRequest, lock


class WireAppConfig(Schema):
    """``config:`` of an ``app: wire`` fixture."""

    entry: str = Field(min_length=3, pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
    requires: list[str] = Field(default_factory=list)
    """Modules the agent needs (e.g. ``openai``); a missing one skips the demo, not crashes."""


def resolve_entry(spec: str) -> Callable[[str], Any]:
    """The callable named by ``module:attribute``; errors name the value."""
    module_name, _, attribute = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as error:
        raise ConfigError(
            f"entry {spec!r}: cannot import {module_name!r} ({type(error).__name__}: {error})",
            key="entry",
        ) from None
    target = getattr(module, attribute, None)
    if not callable(target):
        raise ConfigError(f"entry {spec!r}: {attribute!r} is not a callable", key="entry")
    return target  # type: ignore[no-any-return]


def _importable(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _text(value: Any) -> str:
    """The text of a system prompt in any of the APIs' shapes (string, blocks, messages)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for key in ("content", "text"):
            if key in value:
                return _text(value[key])
        return ""
    if isinstance(value, Sequence):
        return "\n\n".join(t for t in (_text(v) for v in value) if t)
    return str(value)


def _tool(tool: Any) -> ToolSchema:
    """A wire tool (OpenAI chat, OpenAI responses or Anthropic shape) as a ``ToolSchema``."""
    if not isinstance(tool, Mapping):
        return ToolSchema(str(tool))
    spec = tool.get("function", tool) if isinstance(tool.get("function"), Mapping) else tool
    schema = spec.get("parameters", spec.get("input_schema", {}))
    return ToolSchema(
        name=str(spec.get("name", tool.get("type", "?"))),
        description=str(spec.get("description", "")),
        parameters=schema if isinstance(schema, Mapping) else {},
    )


def request_header(request: WireRequest) -> RequestHeader:
    """The runtime header of one captured request: config, system text, tools as sent."""
    tools = request.header.tools if isinstance(request.header.tools, list) else []
    return RequestHeader(
        config={"api": request.api, **request.header.config},
        system=_text(request.header.system),
        tools=tuple(_tool(t) for t in tools),
    )


class WireDriver:
    """``app: wire``: the user's agent entry point, one call per prompt, under ``lock()``."""

    name = "wire"
    config_schema: type[Schema] = WireAppConfig

    def unavailable(self, config: Any) -> str | None:
        needed = ["httpx2|httpx", *getattr(config, "requires", ())]
        missing = [name for name in needed if not any(map(_importable, name.split("|")))]
        if missing:
            return f"needs {', '.join(missing)} (pip install 'headerlock[demo]')"
        return None

    async def run(self, job: DriverJob) -> RunOutput:
        config = job.config
        assert isinstance(config, WireAppConfig)
        if job.plugins or (job.schedule is not None and job.schedule.order):
            raise ConfigError(f"{job.name}: an app: wire agent takes no plugins or load schedule")
        entry = resolve_entry(config.entry)
        replies = job.model.replies
        if replies is None and not job.model.live:
            job.model.adapter(config)  # raises the "no model output" error
        script = [reply_to_data(r) for r in replies] if replies is not None else None
        session = SessionLog()
        previous: RequestHeader | None = None
        with lock(None, mode="record", script=script) as run:
            for turn, prompt in enumerate(job.prompts, 1):
                session.append(TURN_START, {"turn": turn, "trigger": "user"})
                session.append(USER_MESSAGE, {"turn": turn, "content": prompt})
                seen = len(run.requests)
                reason: dict[str, Any]
                try:
                    result = entry(prompt)
                    if inspect.isawaitable(result):
                        await result
                    reason = {"kind": "stop"}
                except Exception as error:
                    reason = {"kind": "error", "message": f"{type(error).__name__}: {error}"}
                new = run.requests[seen:]
                for step, request in enumerate(new, 1):
                    session.append(STEP_START, {"turn": turn, "step": step})
                    header = request_header(request)
                    record = header_record(previous, header, first_of_loop=previous is None)
                    previous = header
                    if record is not None:
                        session.append(record.type, record.data)
                    _log_reply(session, turn, step, replies, request.number - 1)
                    session.append(STEP_END, {"turn": turn, "step": step})
                reason["step"] = max(len(new), 1)
                session.append(TURN_END, {"turn": turn, "reason": reason, "elapsed_ms": 0})
                await asyncio.sleep(0)
        return RunOutput(session.to_data(), None, str(job.workspace))


def _log_reply(
    session: SessionLog, turn: int, step: int, replies: Sequence[Reply] | None, index: int
) -> None:
    """The scripted reply a request got, as the runtime logs a model reply."""
    if replies is None or index >= len(replies):
        return
    reply = replies[index]
    if reply.error is not None:
        session.append(ASSISTANT_ERROR, {"turn": turn, "step": step, "message": reply.error})
        return
    for chunk in reply.chunks if reply.chunks is not None else (reply.text,) if reply.text else ():
        session.append(ASSISTANT_CHUNK, {"turn": turn, "step": step, "text": chunk})
    message: dict[str, Any] = {"turn": turn, "step": step, "content": reply.text}
    calls = reply_to_data(reply).get("tool_calls")
    if calls:
        message["tool_calls"] = [
            {"id": c.get("id") or f"call_{turn}_{step}_{i}", **c} for i, c in enumerate(calls)
        ]
    session.append(ASSISTANT_MESSAGE, message)


driver = WireDriver()
