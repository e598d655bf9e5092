"""The order of a concurrent session's recording: conversations by content, never by arrival.

A lock numbers each request by the task or thread that sent it (``origins``), which
orders a session the same way in every run as long as each task's requests depend only
on the task itself (``asyncio.gather`` of one conversation per task, a pool job per
conversation). Workers that pull jobs from a queue, or follow-ups spawned in completion
order, break that: which worker sends which conversation depends on timing.

So when the model requests came from more than one task or thread, the recording is
ordered by what was sent instead. A request *continues* another when it has the same
api and system, and the other's messages are a strict prefix of its own (the longest
such one is its parent): each conversation is a tree of requests.
The trees are written depth first, roots and siblings in the order of their canonical
text (request, then response). That is the same for every run that sends the same
requests, whoever sent them and whenever. A session from one task or thread keeps the
order it was sent in. A lock's ``WireRun.requests`` follow the same order
(``RunRequest``: a request as sent, its ids numbered within it), so an ``app: wire``
session log built from them is the same in every run too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Protocol

from headerlock.formats.wire_response import WireResponse
from headerlock.formats.wire_scrub import IdTokens
from headerlock.runtime.canonical import canonical_json
from headerlock.testing.wire.origins import Key
from headerlock.testing.wire.run import WireRequest

_MESSAGES = "messages"
_CONVERSATION = ("api", "system")
"""What a continuation keeps: its config (streaming, sampling), tools and path may change
from one turn of a conversation to the next."""


class Exchange(Protocol):
    """A recorded exchange: a model entry, or another HTTP request (``HttpEntry``)."""

    @property
    def response(self) -> WireResponse | None: ...

    def request_data(self) -> dict[str, Any]: ...


def canonical_order(entries: Sequence[Exchange], keys: Sequence[Key]) -> list[int]:
    """The indexes of ``entries`` in recording order (``keys``: each one's origin key).
    Other HTTP traffic has no messages: each request is its own root, in text order."""
    if len({key[:-1] for key in keys}) <= 1:
        return sorted(range(len(entries)), key=lambda i: keys[i])
    parts = [_parts(entry) for entry in entries]
    texts = [text for _, _, text in parts]
    ends: dict[tuple[str, bytes], list[int]] = {}
    for i, (base, prefixes, _) in enumerate(parts):
        ends.setdefault((base, prefixes[-1]), []).append(i)
    children: dict[int | None, list[int]] = {}
    for i, (base, prefixes, _) in enumerate(parts):
        children.setdefault(_parent(base, prefixes, ends, texts), []).append(i)
    for siblings in children.values():
        siblings.sort(key=lambda i: texts[i])
    order: list[int] = []
    stack = list(reversed(children.get(None, [])))
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(reversed(children.get(i, [])))
    return order


def _parts(entry: Exchange) -> tuple[str, list[bytes], str]:
    """What a continuation keeps (api and system), the digest of each prefix of its
    messages (of 0, 1, ... all of them), and the canonical text of the whole exchange."""
    request = entry.request_data()
    messages = request.get(_MESSAGES)
    base = canonical_json({k: request.get(k) for k in _CONVERSATION})
    if isinstance(messages, list):
        digest = hashlib.sha256(b"messages")
        prefixes = [digest.digest()]
        for message in messages:
            digest.update(canonical_json(message).encode("utf-8", "surrogatepass"))
            digest.update(b"\x00")
            prefixes.append(digest.digest())
    else:
        prefixes = [hashlib.sha256(canonical_json(messages).encode()).digest()]
    text = canonical_json({"request": request, "response": _response(entry)})
    return base, prefixes, text


def _response(entry: Exchange) -> Any:
    return None if entry.response is None else entry.response.to_data()


def _parent(
    base: str, prefixes: list[bytes], ends: dict[tuple[str, bytes], list[int]], texts: list[str]
) -> int | None:
    """The request whose messages are the longest strict prefix of these, with the same
    api and system (of identical ones, the first by text); ``None`` for a root."""
    for length in range(len(prefixes) - 2, -1, -1):
        found = ends.get((base, prefixes[length]))
        if found:
            return min(found, key=lambda i: texts[i])
    return None


class RunRequest:
    """A run's request as an ``Exchange`` to order: as sent, its ids numbered within it
    (as a recording entry numbers them), no response."""

    __slots__ = ("request",)

    def __init__(self, request: WireRequest) -> None:
        self.request = request

    @property
    def response(self) -> WireResponse | None:
        return None

    def request_data(self) -> dict[str, Any]:
        ids, r = IdTokens(), self.request
        config = ids.config(r.header.config)
        return {"api": r.api, "path": r.path, "config": config, "system": r.header.system,
                "tools": r.header.tools, "messages": ids.messages(r.messages)}  # fmt: skip
