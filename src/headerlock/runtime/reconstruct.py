"""The reconstructability invariant: every request is a pure function of the log."""

from __future__ import annotations

from collections.abc import Sequence
from operator import is_
from typing import Any

from headerlock.errors import CorruptLogError, ReconstructionError
from headerlock.runtime.context import Context
from headerlock.runtime.conversation import Conversation
from headerlock.runtime.frozen import deep_freeze, is_deep_frozen
from headerlock.runtime.header import HeaderDelta, RequestHeader, apply_header_delta
from headerlock.runtime.llm import STREAM_EVENT, ModelRequest
from headerlock.runtime.messages import messages_from_events
from headerlock.runtime.session import REQUEST_HEADER, REQUEST_HEADER_DELTA, STEP_START, SessionLog
from headerlock.runtime.tools import Dispose

_HEADER_PARTS = ("config", "system", "tools")


class ReconstructabilityCheck:
    """Rebuilds messages and header from the log, incrementally, and compares.

    Messages come from the events before the last ``step/start``; the header
    is the fold of every ``request/header`` and ``request/header-delta``.
    """

    def __init__(self, session: SessionLog) -> None:
        self.session = session
        self._cursor = 0
        self._rebuilt: list[Any] = []
        self._at_step: int | None = None
        self._header: RequestHeader | None = None
        self._verified: Sequence[Any] = ()

    def _advance(self) -> None:
        events = self.session.events_since(self._cursor)
        self._cursor += len(events)
        for event in events:
            if event.type == STEP_START:
                self._at_step = len(self._rebuilt)
            elif event.type == REQUEST_HEADER:
                self._header = RequestHeader.from_data(event.data["header"])
            elif event.type == REQUEST_HEADER_DELTA:
                if self._header is None:
                    raise CorruptLogError(
                        "request/header-delta before any request/header", seq=event.seq
                    )
                self._header = apply_header_delta(self._header, HeaderDelta.from_data(event.data))
            else:
                self._rebuilt.extend(deep_freeze(m) for m in messages_from_events([event]))

    def __call__(self, request: ModelRequest) -> None:
        """Raise ``ReconstructionError`` unless ``request`` equals its rebuild from the log."""
        if not isinstance(request, ModelRequest):
            raise ReconstructionError(
                "the request is not a deep-frozen ModelRequest", part="not frozen"
            )
        self._advance()
        messages = request.messages
        shared = _shared_prefix(messages, self._verified)
        if not is_deep_frozen((messages[shared:], request.header.config)):
            raise ReconstructionError("the request is not deep-frozen", part="not frozen")
        if self._at_step is None:
            raise ReconstructionError("no step/start in the log", part="no step")
        if self._header is None:
            raise ReconstructionError("no request/header in the log", part="no header")
        if self._header != request.header:
            parts = [
                p for p in _HEADER_PARTS if getattr(self._header, p) != getattr(request.header, p)
            ]
            raise ReconstructionError(
                f"the request's {', '.join(parts)} differ from the folded header", part="header"
            )
        rebuilt, size = self._rebuilt, self._at_step
        if len(messages) != size or any(messages[i] != rebuilt[i] for i in range(shared, size)):
            expected = rebuilt[:size]
            at = next(
                (i for i, (a, b) in enumerate(zip(expected, messages, strict=False)) if a != b),
                min(len(expected), len(messages)),
            )
            raise ReconstructionError(
                f"messages differ from the log at index {at}"
                f" ({len(messages)} sent, {len(expected)} rebuilt)",
                part="messages",
            )
        self._verified = messages


def _shared_prefix(messages: Sequence[Any], verified: Sequence[Any]) -> int:
    """How many leading ``messages`` are the very objects verified last time."""
    if isinstance(messages, Conversation) and messages.shares_prefix(verified):
        return min(len(messages), len(verified))  # by construction: nothing to scan
    if all(map(is_, messages, verified)):  # the common case, checked at C speed
        return min(len(messages), len(verified))
    shared = 0
    for mine, known in zip(messages, verified, strict=False):
        if mine is not known:
            break
        shared += 1
    return shared


def install_reconstructability_check(ctx: Context, session: SessionLog) -> Dispose:
    """Check every request on ``llm/stream``, first in line."""
    return ctx.on(STREAM_EVENT, ReconstructabilityCheck(session), prepend=True)
