"""The agent loop: turn → steps → header → frozen request → stream → tools."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from headerlock.errors import HeaderlockError, ModelError, ToolExecutionError, TurnBusyError
from headerlock.runtime.canonical import canonical_json
from headerlock.runtime.config import LoopConfig
from headerlock.runtime.context import Context
from headerlock.runtime.conversation import Conversation
from headerlock.runtime.frozen import deep_freeze
from headerlock.runtime.header import RequestHeader, fold_request_header, header_record
from headerlock.runtime.llm import LlmService, ModelRequest, TextDelta, ToolCallRequest
from headerlock.runtime.messages import (
    assistant_message,
    messages_from_events,
    tool_message,
    user_message,
)
from headerlock.runtime.session import (
    ASSISTANT_CHUNK,
    ASSISTANT_ERROR,
    ASSISTANT_MESSAGE,
    STEP_END,
    STEP_START,
    TOOL_CALL,
    TOOL_RESULT,
    TURN_END,
    TURN_START,
    USER_MESSAGE,
    SessionLog,
)
from headerlock.runtime.system_prompt import SystemPrompt
from headerlock.runtime.threads import is_coroutine_callable, start_daemon, wait_awake
from headerlock.runtime.tools import ToolHandler, ToolRegistry

AGENT_ERROR: Final = "agent/error"
"""Emitted with ``{turn, step, message}`` when a turn ends with an error."""
BUILD_REQUEST: Final = "request/build"
"""Waterfall over the ``ModelRequest`` before it is frozen and dispatched."""

ReasonKind = Literal["stop", "error", "max-steps"]


@dataclass(frozen=True, slots=True)
class TurnReason:
    """Why a turn ended: ``kind`` and the step it ended in; ``message`` for errors."""

    kind: ReasonKind
    step: int
    message: str | None = None

    def to_data(self) -> dict[str, Any]:
        """Plain data, as recorded in ``turn/end``."""
        data: dict[str, Any] = {"kind": self.kind, "step": self.step}
        if self.message is not None:
            data["message"] = self.message
        return data


@dataclass(frozen=True, slots=True)
class TurnResult:
    """The outcome of ``run_turn``: the turn number, the reason and the final text."""

    turn: int
    reason: TurnReason
    text: str = ""


def error_message(error: BaseException) -> str:
    """The text recorded for a failed turn."""
    if isinstance(error, HeaderlockError):
        return str(error)
    return f"{type(error).__name__}: {error}"


class AgentLoop:
    """Runs turns against the ``system_prompt``, ``llm`` and ``tools`` services."""

    def __init__(self, ctx: Context, session: SessionLog, config: LoopConfig) -> None:
        self.ctx = ctx
        self.session = session
        self.config = config
        self.state: Literal["idle", "running"] = "idle"
        events = session.events
        self.turn = sum(1 for e in events if e.type == TURN_START)
        # Messages are frozen once, when added; each request shares them (a view of
        # this list, which only ever grows: ``conversation``).
        self._messages: list[Any] = [deep_freeze(m) for m in messages_from_events(events)]
        self._header = fold_request_header(events)
        self._wrote_header = False

    def header_config(self) -> dict[str, Any]:
        """The model config part of the header (unset options omitted)."""
        config = self.config.model_dump(include={"model", "temperature", "max_tokens"})
        return {k: v for k, v in config.items() if v is not None}

    async def run_turn(self, prompt: str, *, trigger: str = "user") -> TurnResult:
        """Run one turn to its end; errors end the turn, they do not escape it."""
        if self.state != "idle":
            raise TurnBusyError("a turn is already running")
        self.state = "running"
        self.turn += 1
        turn, step, text = self.turn, 0, ""
        started = time.monotonic()
        log = self.session.append
        log(TURN_START, {"turn": turn, "trigger": trigger})
        log(USER_MESSAGE, {"turn": turn, "content": prompt})
        self._messages.append(deep_freeze(user_message(prompt)))
        reason: TurnReason
        try:
            while True:
                if step >= self.config.max_steps:
                    reason = TurnReason("max-steps", step)
                    break
                step += 1
                text, calls = await self._step(turn, step)
                if not calls:
                    reason = TurnReason("stop", step)
                    break
        except Exception as error:
            message = error_message(error)
            reason = TurnReason("error", max(step, 1), message)
            self.ctx.emit(AGENT_ERROR, {"turn": turn, "step": reason.step, "message": message})
        except asyncio.CancelledError:
            reason = TurnReason("error", max(step, 1), "cancelled")
            self._end_turn(turn, reason, started)
            raise
        self._end_turn(turn, reason, started)
        return TurnResult(turn, reason, text)

    def _end_turn(self, turn: int, reason: TurnReason, started: float) -> None:
        self.state = "idle"
        elapsed_ms = round((time.monotonic() - started) * 1000)
        self.session.append(
            TURN_END, {"turn": turn, "reason": reason.to_data(), "elapsed_ms": elapsed_ms}
        )

    async def _step(self, turn: int, step: int) -> tuple[str, list[ToolCallRequest]]:
        prompt: SystemPrompt = self.ctx.get("system_prompt")
        llm: LlmService = self.ctx.get("llm")
        assembly = await prompt.assemble()
        log = self.session.append
        log(STEP_START, {"turn": turn, "step": step})
        try:
            header = RequestHeader(self.header_config(), assembly.render(), assembly.tools)
            self._record_header(header)
            request = await self.ctx.waterfall(
                BUILD_REQUEST, ModelRequest.of_frozen(header, Conversation(self._messages))
            )
            chunks: list[str] = []
            calls: list[ToolCallRequest] = []
            try:
                async for item in llm.stream(request):
                    if isinstance(item, TextDelta):
                        chunks.append(item.text)
                        log(ASSISTANT_CHUNK, {"turn": turn, "step": step, "text": item.text})
                    else:
                        calls.append(item)
            except ModelError as error:
                log(ASSISTANT_ERROR, {"turn": turn, "step": step, "message": str(error)})
                raise
            text = "".join(chunks)
            call_data = [c.to_data() for c in calls]
            message = {"turn": turn, "step": step, "content": text}
            if call_data:
                message["tool_calls"] = call_data
            log(ASSISTANT_MESSAGE, message)
            self._messages.append(deep_freeze(assistant_message(text, call_data)))
            for call in calls:
                await self._run_tool(turn, step, call)
        finally:
            log(STEP_END, {"turn": turn, "step": step})
        return text, calls

    def _record_header(self, header: RequestHeader) -> None:
        record = header_record(self._header, header, first_of_loop=not self._wrote_header)
        self._wrote_header = True
        self._header = header
        if record is not None:
            self.session.append(record.type, record.data)

    async def _run_tool(self, turn: int, step: int, call: ToolCallRequest) -> None:
        log = self.session.append
        log(TOOL_CALL, {"turn": turn, "step": step, **call.to_data()})
        result: dict[str, Any] = {"turn": turn, "step": step, "id": call.id, "name": call.name}
        try:
            content = await self._invoke(call)
        except ToolExecutionError as error:
            log(TOOL_RESULT, {**result, "content": str(error), "error": True})
            self._messages.append(deep_freeze(tool_message(call.id, call.name, str(error))))
            raise
        log(TOOL_RESULT, {**result, "content": content})
        self._messages.append(deep_freeze(tool_message(call.id, call.name, content)))

    async def _invoke(self, call: ToolCallRequest) -> str:
        registry: ToolRegistry = self.ctx.get("tools")
        entry = registry.get(call.name)
        if entry is None:
            raise ToolExecutionError(f'the model called unknown tool "{call.name}"', tool=call.name)
        if entry.handler is None:
            raise ToolExecutionError(f'tool "{call.name}" has no handler', tool=call.name)
        timeout = self.config.tool_timeout
        deadline = asyncio.timeout(timeout)
        try:
            async with deadline:
                outcome = await call_tool(entry.handler, call.arguments)
        except HeaderlockError as error:
            raise ToolExecutionError(
                f'tool "{call.name}" failed: {error}', tool=call.name
            ) from error
        except (Exception, KeyboardInterrupt, SystemExit) as error:
            # A tool's own SystemExit or KeyboardInterrupt is its failure, not an
            # exit: Ctrl-C reaches a turn as a cancellation (asyncio.run's handler).
            if isinstance(error, TimeoutError) and deadline.expired():
                message = f'tool "{call.name}" timed out after {timeout:g}s'
                raise ToolExecutionError(message, tool=call.name) from None
            raise ToolExecutionError(
                f'tool "{call.name}" raised {_describe(error)}', tool=call.name
            ) from error
        return tool_output(call.name, outcome)


async def call_tool(handler: ToolHandler, arguments: Mapping[str, Any]) -> Any:
    """Run a tool handler: coroutine functions on the loop, any other callable in a
    daemon thread, so that a blocking tool neither stalls the loop nor outlives its
    timeout (the thread is abandoned, never joined). An awaitable result is awaited."""
    if is_coroutine_callable(handler):
        outcome = handler(arguments)
    else:
        outcome = await wait_awake(start_daemon(handler, arguments, name="tool"))
    if inspect.isawaitable(outcome):
        outcome = await outcome
    return outcome


def _describe(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def tool_output(name: str, outcome: Any) -> str:
    """A tool's return value as message text (strings as is, data as canonical JSON)."""
    if isinstance(outcome, str):
        return outcome
    try:
        return canonical_json(outcome)
    except (TypeError, ValueError) as error:
        raise ToolExecutionError(
            f'tool "{name}" returned data that is not JSON-serializable'
            f" ({type(outcome).__name__}): {error}",
            tool=name,
        ) from None
