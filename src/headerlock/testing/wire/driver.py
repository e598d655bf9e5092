"""``app: wire``: a fixture runs the user's own agent, captured at the HTTP layer.

``config: {entry: "package.module:callable"}`` names a function that takes one
prompt and runs the agent (sync or async). Each step calls it inside
``lock(mode="record", script=...)`` with the fixture's ``model:`` as the
script (a reply's ``match:`` says which concurrent request it answers, as in
``script=``); the requests it sends become a session log (one model request per
step, each turn's steps in the lock's order, never by arrival, its header
recorded by the runtime's header rule), so record, replay, pins, header
classes, guards and ``headerlock flakes`` treat it like any other scenario. A
logged reply keeps its ``match:``, so a replay hands the recorded replies out
the same way. Each request's messages are logged too (``request/messages``), so a
replay fails when the agent sends other messages (a changed tool result, injected
text), as a ``lock()`` replay does. An agent that raises without having been
given a scripted ``error:`` reply fails the run: such a turn is never recorded.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from headerlock.errors import (
    ConfigError,
    ScenarioRunError,
    ScriptAmbiguityError,
    WireRecordingError,
)
from headerlock.formats.secrets import secret_values
from headerlock.formats.wire_http import HttpEntry
from headerlock.formats.wire_recording import (
    WIRE_FORMAT_VERSION,
    WIRE_KIND,
    wire_recording_from_data,
)
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
from headerlock.testing.wire import origins
from headerlock.testing.wire.agent_entry import (
    TURN_TIMEOUT,
    call_entry,
    check_entry,
    resolve_entry,
)
from headerlock.testing.wire.apis import model_api
from headerlock.testing.wire.apis.base import script_id
from headerlock.testing.wire.lock import WireLock
from headerlock.testing.wire.run import WireRequest, WireRun
from headerlock.testing.wire.session import LockSession


class WireAppConfig(Schema):
    """``config:`` of an ``app: wire`` fixture."""

    entry: Annotated[
        str,
        Field(min_length=3, pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$"),
        AfterValidator(check_entry),
    ]
    """Project code only: built-in, standard-library and installed packages' callables are
    refused (``plugins:``; ``headerlock.demo`` aside)."""
    requires: list[str] = Field(default_factory=list)
    """Modules the agent needs (e.g. ``openai``); a missing one skips the demo, not crashes."""
    turn_timeout: float = Field(default=TURN_TIMEOUT, gt=0, allow_inf_nan=False)
    """Seconds one call of the entry may take; then the turn fails and the run ends."""
    http: Annotated[list[Any], AfterValidator(_check_http)] = Field(default_factory=list)
    """The answers to the agent's other HTTP calls (embeddings, a tool's own requests),
    one entry per call, as a wire recording's ``http:`` list keeps them: ``method``,
    ``path``, ``query``, ``body`` (``{json: ...}``, ``{text: ...}`` or null) and
    ``response`` (``status``, ``content_type``, ``json``/``text``). A call with no entry
    fails the run naming it; nothing leaves the process."""

    def http_entries(self) -> tuple[HttpEntry, ...]:
        """``http`` read as the exchanges a scripted lock answers other traffic from."""
        return _http_entries(self.http)


def _http_entries(entries: list[Any]) -> tuple[HttpEntry, ...]:
    data = {
        "kind": WIRE_KIND,
        "version": WIRE_FORMAT_VERSION,
        "pinned": False,
        "requests": [],
        "http": entries,
    }
    return wire_recording_from_data(data, path="config.http").http


def _check_http(entries: list[Any]) -> list[Any]:
    """``config.http`` as a wire recording's ``http:`` list (a bad entry names its key)."""
    try:
        _http_entries(entries)
    except WireRecordingError as error:
        raise ValueError(str(error).removeprefix("config.http: ").removeprefix("http")) from None
    return entries


def _importable(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def request_header(request: WireRequest) -> RequestHeader:
    """The runtime header of one captured request: config, system text, tools as sent."""
    found = model_api(request.api)
    return RequestHeader(
        config={"api": request.api, **request.header.config},
        system=found.system_text(request.header.system),
        tools=tuple(found.tool_schema(t) for t in found.tools_of(request.header.tools)),
    )


class WireDriver:
    """``app: wire``: the user's agent entry point, one call per prompt, under ``lock()``."""

    name = "wire"
    accepts_match = True
    """Its ``model:`` replies may carry ``match:`` (``scenario.fixtures`` refuses it
    for drivers without this)."""
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
                " headerlock.wire.lock(path, mode='all') or a headerlock_wire pytest test",
                key="live",
            )
        entry = resolve_entry(config.entry)
        if job.model.replies is None:
            job.model.adapter(config)  # raises the "no model output" error
        replies = job.model.replies
        assert replies is not None
        served: list[tuple[Mapping[str, Any], int]] = []
        http = ("the fixture's config.http list", config.http_entries())
        fixture_lock = WireLock(
            None, mode="record", pin=False, script=replies, redact=None, redact_env=(), http=http
        )
        run: WireRun | None = None
        try:
            with fixture_lock as run:
                _track(served)
                turns = await _turns(job, config, entry, run, served, replies)
        except ScriptAmbiguityError as error:  # the script is the fixture's model: list
            message = str(error).removeprefix("script: ")
            raise ScriptAmbiguityError(
                f"{job.name}: model: {message}", requests=error.requests
            ) from None
        except ScenarioRunError as error:  # the agent's message may quote the key it sent
            secrets = secret_values() if run is None else run.secrets
            scrubbed = Scrubber.of(secrets).text(str(error))
            raise ScenarioRunError(scrubbed, scenario=error.scenario) from None
        session = _session_log(turns, run.requests, served, replies)
        # the credential the agent gave its SDK is a secret wherever it reappears (system
        # text, metadata, an error message), as in a lock's recording
        events = Scrubber.of(run.secrets).data(session.to_data())
        return RunOutput(events, None, str(job.workspace))


_Turn = tuple[int, str, list[WireRequest], dict[str, Any]]
"""A turn: its number, prompt, requests (in arrival order) and end reason."""


async def _turns(
    job: DriverJob,
    config: WireAppConfig,
    entry: Callable[[str], Any],
    run: WireRun,
    served: Sequence[tuple[Mapping[str, Any], int]],
    replies: Sequence[Reply],
) -> list[_Turn]:
    """Call the entry once per prompt; an agent that raises without having been given a
    scripted ``error:`` reply in the turn fails the run."""
    turns: list[_Turn] = []
    for turn, prompt in enumerate(job.prompts, 1):
        seen, answered = len(run.requests), len(served)
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
            if not any(replies[i].error is not None for _, i in served[answered:]):
                raise ScenarioRunError(
                    f"{job.name}: the agent {config.entry} raised at turn {turn}: {message}",
                    scenario=job.name,
                ) from None
            reason = {"kind": "error", "message": message}
        turns.append((turn, prompt, run.requests[seen:], reason))
        await asyncio.sleep(0)
    return turns


def _track(served: list[tuple[Mapping[str, Any], int]]) -> None:
    """Have the script of the lock just opened log each request and its reply's index."""
    session = origins.owner()
    assert isinstance(session, LockSession) and session.script is not None
    session.script.served = served


def _session_log(
    turns: Sequence[_Turn],
    ordered: Sequence[WireRequest],
    served: Sequence[tuple[Mapping[str, Any], int]],
    replies: Sequence[Reply],
) -> SessionLog:
    """The run as a session log: each turn's requests in the lock's order (``ordered``:
    never by arrival), each with the reply the script gave it (``served``)."""
    rank = {id(r.body): n for n, r in enumerate(ordered)}
    unclaimed = list(served)
    session = SessionLog()
    previous: RequestHeader | None = None
    for turn, prompt, requests, reason in turns:
        session.append(TURN_START, {"turn": turn, "trigger": "user"})
        session.append(USER_MESSAGE, {"turn": turn, "content": prompt})
        steps = sorted(requests, key=lambda r: rank.get(id(r.body), r.number))
        for step, request in enumerate(steps, 1):
            session.append(STEP_START, {"turn": turn, "step": step})
            header = request_header(request)
            record = header_record(previous, header, first_of_loop=previous is None)
            previous = header
            if record is not None:
                session.append(record.type, record.data)
            session.append(REQUEST_MESSAGES, _messages_data(turn, step, request))
            index = _reply_index(request, unclaimed)
            if index is not None:
                _log_reply(session, turn, step, replies[index], index, request.api)
            session.append(STEP_END, {"turn": turn, "step": step})
        reason["step"] = max(len(requests), 1)
        session.append(TURN_END, {"turn": turn, "reason": reason, "elapsed_ms": 0})
    return session


def _reply_index(
    request: WireRequest, unclaimed: list[tuple[Mapping[str, Any], int]]
) -> int | None:
    """The index of the reply the script gave ``request`` (claimed, so an identical
    request takes the next one)."""
    body = json.loads(request.body)
    for k, (sent, index) in enumerate(unclaimed):
        if sent == body:
            del unclaimed[k]
            return index
    return None


def _messages_data(turn: int, step: int, request: WireRequest) -> dict[str, Any]:
    return {
        "turn": turn,
        "step": step,
        "api": request.api,
        "path": request.path,
        "messages": request.messages,
    }


def _log_reply(
    session: SessionLog, turn: int, step: int, reply: Reply, index: int, api: str
) -> None:
    """Scripted reply ``index``, as the runtime logs a model reply (tool call ids as the
    script rendered them, so the ids the agent sends back are the logged ones) with its
    ``match`` (a replay hands the recorded replies out by it too)."""
    match = {"match": dict(reply.match)} if reply.match is not None else {}
    if reply.error is not None:
        data = {"turn": turn, "step": step, "message": reply.error, **match}
        session.append(ASSISTANT_ERROR, data)
        return
    for chunk in reply.chunks if reply.chunks is not None else (reply.text,) if reply.text else ():
        session.append(ASSISTANT_CHUNK, {"turn": turn, "step": step, "text": chunk})
    message: dict[str, Any] = {"turn": turn, "step": step, "content": reply.text}
    calls = reply_to_data(reply).get("tool_calls")
    if calls:
        prefix = model_api(api).call_id_prefix
        message["tool_calls"] = [
            {**c, "id": c.get("id") or script_id(prefix, index, i)} for i, c in enumerate(calls)
        ]
    session.append(ASSISTANT_MESSAGE, {**message, **match})


driver = WireDriver()
