"""A tiny interceptor for the client-module tests: it decides each request itself."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

from headerlock.testing.wire import origins
from headerlock.testing.wire.clients import core, install
from headerlock.testing.wire.clients.core import SentRequest, WireAnswer

Decision = WireAnswer | Literal["forward"] | None
JSON_ANSWER = WireAnswer(200, "application/json", b'{"answer": "scripted"}')
SSE_BODY = b'data: {"n": 1}\n\ndata: {"n": 2}\n\ndata: [DONE]\n\n'


@dataclass
class Toy:
    """A tiny lock: ``decide`` answers, forwards (``"forward"``) or passes (``None``)
    each request; it keeps what it saw and what forwards were told."""

    decide: Callable[[SentRequest], Decision]
    is_open: bool = True
    seen: list[SentRequest] = field(default_factory=list)
    told: list[WireAnswer | None] = field(default_factory=list)

    def request(self, sent: SentRequest) -> WireAnswer | core.Pending | None:
        self.seen.append(sent)
        decision = self.decide(sent)
        if isinstance(decision, str):  # "forward"
            return self.told.append
        return decision

    def refused(self, error: Exception) -> None:
        raise AssertionError(f"one open lock never refuses: {error}")


@contextmanager
def toy(decide: Callable[[SentRequest], Decision]) -> Iterator[Toy]:
    """``Toy(decide)`` installed and owning the block."""
    interceptor = Toy(decide)
    with install.intercept(interceptor), origins.enter(interceptor):
        yield interceptor
