"""The provider's cache, simulated over a recording: who continues whom, and what each
request could read.

``Lineages`` finds the request a request continues: none when it sends no assistant
turn back (a conversation starts there, whatever another agent asked before), else the
latest earlier request of its API whose messages are the longest prefix of its own
(preferring the one whose recorded response is the assistant turn it sends next). When
that turn is not the recorded answer and a later request already went on from there,
the request forked the conversation: it continues that later request (and the prefix
diff names the rewritten message). A request that continues nothing starts a lineage of
its own. A request whose history the provider keeps (``previous_response_id``) sends
only its new turn: it continues the latest request of its API and model. This is
``conversations``' rule of who continues whom (a strict prefix of the
messages), without its same-system condition: a changed system inside a conversation
is a break to report, not another conversation.

``PrefixIndex`` is the cache: a digest per item boundary of each request's rendered
prefix (chained, the cache-keying config mixed in at the start of its scope), so the
longest prefix a request shares with ANY earlier request of its API, model and config is
one dict look-up per item: time per request does not grow with the recording. Where the
API caches at breakpoints, only the prefixes an earlier request wrote (a breakpoint at
or above the minimum) are read, and only within the lookback of one of the request's
own breakpoints.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from headerlock.testing.wire.apis import model_api
from headerlock.testing.wire.cache.breakpoints import breakpoints
from headerlock.testing.wire.cache.prefix import Item, Prefix, estimate_tokens
from headerlock.testing.wire.cache.turns import Turn, sent_turn
from headerlock.testing.wire.compare import first_offset

_ASSISTANT: Final = ("assistant", "model")
_CALL_ITEMS: Final = ("function_call", "message")


def _digest(*parts: bytes) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(b"%d:" % len(part))
        h.update(part)
    return h.digest()


def is_assistant(data: Any) -> bool:
    """Whether a message (or input item) is an assistant turn as sent."""
    if not isinstance(data, Mapping):
        return False
    return data.get("role") in _ASSISTANT or (
        data.get("type") in _CALL_ITEMS and data.get("role") in (None, *_ASSISTANT)
    )


def _messages(prefix: Prefix) -> list[Item]:
    return [] if prefix.server_history else list(prefix.segment("messages"))


@dataclass(frozen=True, slots=True)
class Continues:
    """The request ``prefix`` continues (``None``: a lineage of its own), how many of its
    messages it extends (``kept``), and the turn it sends back after them."""

    parent: int | None
    kept: int = 0
    sent: Turn | None = None
    forked: bool = False


def _answers(turn: Turn | None, sent: Turn) -> bool:
    return turn is not None and turn.answers(sent)


class Lineages:
    """Who continues whom, request by request (add each after asking)."""

    def __init__(self) -> None:
        self.ending: dict[bytes, list[int]] = {}
        """(api, messages[:k]) -> requests whose messages are exactly those."""
        self.extending: dict[bytes, list[int]] = {}
        """(api, messages[:k]) -> requests whose messages go on after those."""
        self.prefixes: dict[int, Prefix] = {}
        self.last: dict[tuple[str, str], int] = {}
        """(api, model) -> its latest request (what a server-side history continues)."""

    @staticmethod
    def _chain(prefix: Prefix) -> list[bytes]:
        h = _digest(prefix.api.encode())
        chain = [h]
        for item in _messages(prefix):
            h = _digest(h, item.raw)
            chain.append(h)
        return chain

    def of(self, prefix: Prefix) -> Continues:
        """The request ``prefix`` continues."""
        if prefix.server_history:  # only the new turn is sent: it goes on from the latest
            return Continues(self.last.get((prefix.api, prefix.model)))
        items = _messages(prefix)
        if not any(is_assistant(item.data) for item in items):
            return Continues(None)  # no answer sent back: a conversation starts here
        chain = self._chain(prefix)
        for kept in range(len(chain) - 1, 0, -1):
            found = self.ending.get(chain[kept])
            if found:
                break
        else:
            return Continues(None)
        rules = model_api(prefix.api).cache
        following = [i.data for i in items[kept:]]
        if not following or not is_assistant(following[0]):
            return Continues(found[-1], kept)
        turn_items = [following[0]]
        for data in following[1:]:
            if not is_assistant(data):
                break
            turn_items.append(data)
        sent = sent_turn(rules, turn_items)
        answered = [
            n for n in found if (t := self.prefixes[n].turn) is not None and t.answers(sent)
        ]
        if answered:
            return Continues(answered[-1], kept, sent)
        later = self.extending.get(chain[kept], [])
        recorded = any(self.prefixes[n].turn is not None for n in found)
        if later and recorded:
            return Continues(later[-1], kept, None, forked=True)
        return Continues(found[-1], kept)

    def add(self, prefix: Prefix) -> None:
        """Remember ``prefix`` as an earlier request."""
        self.prefixes[prefix.number] = prefix
        self.last[(prefix.api, prefix.model)] = prefix.number
        chain = self._chain(prefix)
        self.ending.setdefault(chain[-1], []).append(prefix.number)
        for h in chain[:-1]:
            self.extending.setdefault(h, []).append(prefix.number)


@dataclass(frozen=True, slots=True)
class Read:
    """What a request could read: the bytes it shares with the earlier request of its API,
    model and config that shares most (``source``, the first to send that prefix), and
    the tokens the provider would read (``predicted``)."""

    shared: int
    source: int | None
    predicted: int


@dataclass(frozen=True, slots=True)
class _Point:
    digest: bytes
    end: int
    item: int
    """How many items the prefix up to here holds."""


def _scope_config(prefix: Prefix) -> dict[str, bytes]:
    rules = model_api(prefix.api).cache
    scoped: dict[str, dict[str, Any]] = {}
    for rule in rules.keyed:
        if rule.key in prefix.keyed:
            scoped.setdefault(rule.scope, {})[rule.key] = prefix.keyed[rule.key]
    return {
        scope: json.dumps(values, sort_keys=True, ensure_ascii=False, default=str).encode()
        for scope, values in scoped.items()
    }


def points(prefix: Prefix) -> list[_Point]:
    """The digest at each boundary of the rendered prefix, config mixed in per scope."""
    rules = model_api(prefix.api).cache
    config = _scope_config(prefix)
    h = _digest(prefix.api.encode())
    out: list[_Point] = []
    end = count = 0
    by_segment: dict[str, list[Item]] = {}
    for item in prefix.items:
        by_segment.setdefault(item.segment, []).append(item)
    for segment in rules.order:
        h = _digest(h, b"config", segment.encode(), config.get(segment, b""))
        out.append(_Point(h, end, count))
        for item in by_segment.get(segment, ()):
            h = _digest(h, item.segment.encode(), item.raw)
            end += len(item.raw)
            count += 1
            out.append(_Point(h, end, count))
    return out


class PrefixIndex:
    """The simulated cache (add each request after reading it)."""

    def __init__(self) -> None:
        self.seen: dict[bytes, int] = {}
        """A boundary digest -> the first request that sent that prefix."""
        self.written: dict[bytes, tuple[int, int]] = {}
        """A boundary digest -> the first request that wrote it (breakpoint) and its block."""
        self.prefixes: dict[int, Prefix] = {}
        self._points: tuple[int, list[_Point]] | None = None
        """The boundaries of the request last read (added next: computed once)."""

    def _boundaries(self, prefix: Prefix) -> list[_Point]:
        if self._points is None or self._points[0] != prefix.number:
            self._points = (prefix.number, points(prefix))
        return self._points[1]

    def read(self, prefix: Prefix) -> Read:
        """What ``prefix`` could read from the requests added so far."""
        marks = self._boundaries(prefix)
        matched: _Point | None = None
        for point in marks:
            if point.digest not in self.seen:
                break
            matched = point
        if matched is None:
            return Read(0, None, 0)
        source = self.seen[matched.digest]
        shared = matched.end + self._partial(self.prefixes[source], prefix, matched.item)
        rules = model_api(prefix.api).cache
        if not rules.breakpoints:
            return Read(shared, source, rules.implicit_hit(estimate_tokens(shared), prefix.model))
        least = rules.minimum(prefix.model)
        mine = breakpoints(prefix)
        best = 0
        for point in marks:
            if point.end > shared:
                break
            wrote = self.written.get(point.digest)
            tokens = estimate_tokens(point.end)
            if wrote is None or tokens < least:
                continue
            if any(wrote[1] <= b.position <= wrote[1] + rules.lookback for b in mine):
                best = max(best, tokens)
        return Read(shared, source, best)

    @staticmethod
    def _partial(earlier: Prefix, prefix: Prefix, at: int) -> int:
        """The bytes the next items share (the first that differs, byte for byte)."""
        if at >= len(earlier.items) or at >= len(prefix.items):
            return 0
        a, b = earlier.items[at], prefix.items[at]
        if a.segment != b.segment or a.raw == b.raw:
            return 0
        return first_offset(a.raw, b.raw)

    def add(self, prefix: Prefix) -> None:
        """Remember what ``prefix`` sent and wrote."""
        self.prefixes[prefix.number] = prefix
        marks = self._boundaries(prefix)
        for point in marks:
            self.seen.setdefault(point.digest, prefix.number)
        rules = model_api(prefix.api).cache
        if not rules.breakpoints:
            return
        least = rules.minimum(prefix.model)
        at_end = {p.end: p for p in marks}
        for mark in breakpoints(prefix):
            found = at_end.get(mark.end)
            if found is not None and estimate_tokens(mark.end) >= least:
                self.written.setdefault(found.digest, (prefix.number, mark.position))
