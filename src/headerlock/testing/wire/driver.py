"""``app: wire``: a fixture runs the user's own agent, captured at the HTTP layer.

``config: {entry: "package.module:callable"}`` names a function that takes one
prompt and runs the agent (sync or async). Each step calls it inside
``lock(mode="record", script=...)`` with the fixture's ``model:`` as the
script; the requests it sends become a session log (one model request per
step, its header recorded by the runtime's header rule), so record, replay,
pins, header classes, guards and ``headerlock flakes`` treat it like any other
scenario. Each request's messages are logged too (``request/messages``), so a
replay fails when the agent sends other messages (a changed tool result, injected
text), as a ``lock()`` replay does. An agent that raises without having been
given a scripted ``error:`` reply fails the run: such a turn is never recorded.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from headerlock.errors import ConfigError, ScenarioRunError
from headerlock.formats.wire_scrub import Scrubber
from headerlock.runtime.adapters.scripted import Reply, reply_to_data
from headerlock.runtime.config import Schema
from headerlock.runtime.driver import DriverJob, RunOutput
from headerlock.runtime.header import RequestHeader, header_record
from headerlock.runtime.session import (
    ASSISTANT_CHUNK,
    ASSISTANT_ERROR,
    ASSISTANT_MESSAGE,
    REQUEST_MESSAGES,
    STEP_END,
    STEP_START,
    TURN_END,
    TURN_START,
    USER_MESSAGE,
    SessionLog,
)
from headerlock.runtime.tools import ToolSchema
from headerlock.runtime.wire_tools import wire_tool_name
from headerlock.testing.wire.agent_entry import (
    TURN_TIMEOUT,
    call_entry,
    check_entry,
    resolve_entry,
)
from headerlock.testing.wire.apis import model_api
from headerlock.testing.wire.apis.base import script_id
from headerlock.testing.wire.lock import lock
from headerlock.testing.wire.run import WireRequest


class WireAppConfig(Schema):
    """``config:`` of an ``app: wire`` fixture."""

    entry: Annotated[
        str,
        Field(min_length=3, pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$"),
        AfterValidator(check_entry),
    ]
    """Project code only: built-in and standard-library callables are refused (``plugins:``)."""
    requires: list[str] = Field(default_factory=list)
    """Modules the agent needs (e.g. ``openai``); a missing one skips the demo, not crashes."""
    turn_timeout: float = Field(default=TURN_TIMEOUT, gt=0, allow_inf_nan=False)
    """Seconds one call of the entry may take; then the turn fails and the run ends."""


def _importable(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _tool(tool: Any) -> ToolSchema:
    """One wire tool (any API's shape, see ``ModelApi.tools_of``) as a ``ToolSchema``."""
    if not isinstance(tool, Mapping):
        return ToolSchema(str(tool))
    spec = tool.get("function", tool) if isinstance(tool.get("function"), Mapping) else tool
    schema = spec.get("parameters", spec.get("input_schema", {}))
    return ToolSchema(
        name=wire_tool_name(tool, strict=False),
        description=str(spec.get("description", "")),
        parameters=schema if isinstance(schema, Mapping) else {},
    )


def request_header(request: WireRequest) -> RequestHeader:
    """The runtime header of one captured request: config, system text, tools as sent."""
    found = model_api(request.api)
    return RequestHeader(
        config={"api": request.api, **request.header.config},
        system=found.system_text(request.header.system),
        tools=tuple(_tool(t) for t in found.tools_of(request.header.tools)),
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
        if job.model.live:
            raise ConfigError(
                f"{job.name}: an app: wire fixture takes the model's replies from its `model:`"
                " list and cannot record a live endpoint; record a live agent with"
                " headerlock.wire.lock(path, mode='record') or a headerlock_wire pytest test",
                key="live",
            )
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
                    await call_entry(
                        entry,
                        prompt,
                        spec=config.entry,
                        scenario=job.name,
                        turn=turn,
                        timeout=config.turn_timeout,
                    )
                    reason = {"kind": "stop"}
                except ScenarioRunError:
                    raise
                except Exception as error:
                    message = f"{type(error).__name__}: {error}"
                    if not _scripted_error(replies, run.requests[seen:]):
                        raise ScenarioRunError(
                            f"{job.name}: the agent {config.entry} raised at turn {turn}:"
                            f" {message}",
                            scenario=job.name,
                        ) from None
                    reason = {"kind": "error", "message": message}
                new = run.requests[seen:]
                for step, request in enumerate(new, 1):
                    session.append(STEP_START, {"turn": turn, "step": step})
                    header = request_header(request)
                    record = header_record(previous, header, first_of_loop=previous is None)
                    previous = header
                    if record is not None:
                        session.append(record.type, record.data)
                    session.append(REQUEST_MESSAGES, _messages_data(turn, step, request))
                    _log_reply(session, turn, step, replies, request)
                    session.append(STEP_END, {"turn": turn, "step": step})
                reason["step"] = max(len(new), 1)
                session.append(TURN_END, {"turn": turn, "reason": reason, "elapsed_ms": 0})
                await asyncio.sleep(0)
        # the credential the agent gave its SDK is a secret wherever it reappears (system
        # text, metadata, an error message), as in a lock's recording
        events = Scrubber.of(run.secrets).data(session.to_data())
        return RunOutput(events, None, str(job.workspace))


def _scripted_error(replies: Sequence[Reply] | None, requests: Sequence[WireRequest]) -> bool:
    """Whether a request of the turn was answered with a scripted ``error:`` reply (the
    agent's error is then part of the scenario)."""
    if replies is None:
        return False
    indexes = (r.number - 1 for r in requests)
    return any(i < len(replies) and replies[i].error is not None for i in indexes)


def _messages_data(turn: int, step: int, request: WireRequest) -> dict[str, Any]:
    return {
        "turn": turn,
        "step": step,
        "api": request.api,
        "path": request.path,
        "messages": request.messages,
    }


def _log_reply(
    session: SessionLog, turn: int, step: int, replies: Sequence[Reply] | None, request: WireRequest
) -> None:
    """The scripted reply a request got, as the runtime logs a model reply (tool call ids
    as the script rendered them, so the ids the agent sends back are the logged ones)."""
    index = request.number - 1
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
        prefix = model_api(request.api).call_id_prefix
        message["tool_calls"] = [
            {**c, "id": c.get("id") or script_id(prefix, index, i)} for i, c in enumerate(calls)
        ]
    session.append(ASSISTANT_MESSAGE, message)


driver = WireDriver()
