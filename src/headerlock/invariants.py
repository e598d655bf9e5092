"""The reconstructability invariant: every request is a pure function of the log."""

from __future__ import annotations

from headerlock.context import Context, Dispose
from headerlock.errors import HeaderlockError
from headerlock.frozen import deep_freeze, is_deep_frozen
from headerlock.header import fold_request_header
from headerlock.llm import STREAM_EVENT, ModelRequest
from headerlock.messages import messages_from_events
from headerlock.session import STEP_START, SessionLog


class ReconstructionError(HeaderlockError):
    """A request differs from its rebuild from the log; ``part`` says where.

    ``part`` is one of ``messages``, ``header``, ``not frozen``, ``no step``, ``no header``.
    """

    def __init__(self, message: str, *, part: str) -> None:
        super().__init__(f"request is not reconstructable from the log ({part}): {message}")
        self.part = part


_HEADER_PARTS = ("config", "system", "tools", "message_prefix")


def check_reconstructable(request: ModelRequest, session: SessionLog) -> None:
    """Raise ``ReconstructionError`` unless ``request`` equals its rebuild from ``session``."""
    if not isinstance(request, ModelRequest) or not is_deep_frozen(
        (request.messages, request.header.config, request.header.message_prefix)
    ):
        raise ReconstructionError("the request is not deep-frozen", part="not frozen")
    events = session.events
    starts = [i for i, e in enumerate(events) if e.type == STEP_START]
    if not starts:
        raise ReconstructionError("no step/start in the log", part="no step")
    header = fold_request_header(events)
    if header is None:
        raise ReconstructionError("no request/header in the log", part="no header")
    if header != request.header:
        parts = [p for p in _HEADER_PARTS if getattr(header, p) != getattr(request.header, p)]
        raise ReconstructionError(
            f"the request's {', '.join(parts)} differ from the folded header", part="header"
        )
    rebuilt = deep_freeze(tuple(messages_from_events(events[: starts[-1]])))
    if rebuilt != request.messages:
        at = next(
            (i for i, (a, b) in enumerate(zip(rebuilt, request.messages, strict=False)) if a != b),
            min(len(rebuilt), len(request.messages)),
        )
        raise ReconstructionError(
            f"messages differ from the log at index {at}"
            f" ({len(request.messages)} sent, {len(rebuilt)} rebuilt)",
            part="messages",
        )


def install_reconstructability_check(ctx: Context, session: SessionLog) -> Dispose:
    """Check every request on ``llm/stream``, first in line."""
    return ctx.on(
        STREAM_EVENT, lambda request: check_reconstructable(request, session), prepend=True
    )
