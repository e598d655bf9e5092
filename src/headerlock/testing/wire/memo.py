"""Each message of a lock's requests scrubbed once, however often the agent re-sends it.

An agent session sends the whole conversation again with every request; building each
request's entry afresh (``entry.build_entry``: ids tokenized, every string scrubbed) and
its canonical text (``matching.request_key``) would cost time in proportion to the
whole conversation, per request. ``MessageMemo`` keeps, for the bytes of each message as
sent (its exact JSON text), the ids it holds and, for the tokens those ids got, its
scrubbed value and canonical text: a request that repeats messages does only its new
ones, and its element spans are found only past the bytes the previous request
repeats (``spans.repeated_elements``).

The entry and the key are the ones ``build_entry`` and ``request_key`` give: a message's
scrubbed value depends only on its bytes, the scrubber and the tokens of its ids, and
its ids are numbered in the same order (``IdTokens.message_ids``). The memoized values
are shared by the entries built from them, which nothing edits.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Final

from headerlock.formats.wire_recording import WireEntry
from headerlock.formats.wire_response import WireResponse
from headerlock.formats.wire_scrub import IdTokens, Scrubber
from headerlock.formats.wire_vocabulary import WireVocabulary, vocabulary
from headerlock.runtime.canonical import canonical_json
from headerlock.testing.wire.apis import ModelApi, Split
from headerlock.testing.wire.entry import build_entry
from headerlock.testing.wire.matching import key_frame, request_key
from headerlock.testing.wire.request_header import LockedHeader
from headerlock.testing.wire.spans import Elements, repeated_elements

MAX_MESSAGES: Final = 1 << 16
"""Distinct message texts kept (more start the memo afresh: slower, never different)."""


@dataclass(slots=True)
class _Seen:
    """One message text: its id values in numbering order, and per tokens given to them,
    its scrubbed value and that value's canonical text."""

    ids: tuple[str, ...]
    done: dict[tuple[str, ...], tuple[Any, str]] = field(default_factory=dict)


class MessageMemo:
    """The scrubbed messages of one lock's requests, by their bytes (thread-safe)."""

    def __init__(self) -> None:
        self._scrubber: Scrubber | None = None
        self._seen: dict[bytes, _Seen] = {}
        self._last: dict[str, _Done] = {}
        """Per api, the messages of its last request."""
        self._sent: dict[bytes, Any] = {}
        """Each message's bytes, and the object first parsed from them (``shared``)."""
        self._sent_last: dict[str, tuple[Elements, int, list[Any]]] = {}
        self._found: tuple[bytes, int, Elements | None, Elements] | None = None
        """The last body's element spans (``shared``), found from an earlier request's."""
        self._guard = threading.RLock()  # a redact callable may send a request itself

    def shared(self, split: Split, body: bytes) -> Split:
        """``split`` (of ``body``) with each message an earlier request of the lock sent
        in the same bytes replaced by the object parsed then (equal: the same bytes parse
        the same): a session's requests then hold each message once, not once per
        request that repeats it. The messages are read-only, as a request's are."""
        given, at = split.messages, split.messages_at
        if not isinstance(given, list) or at is None or body[at : at + 1] != b"[":
            return split
        with self._guard:
            last = self._sent_last.get(split.api.name)
            elements = self._elements(body, at, None if last is None else last[0])
            skip = len(elements.spans) - len(given)
            if skip < 0:
                return split
            if len(self._sent) > MAX_MESSAGES:
                self._sent, last = {}, None
            kept: list[Any] = []
            if last is not None and last[1] == skip:
                kept = last[2][: max(0, elements.repeated - skip)]
            sent = self._sent
            messages = kept + [
                sent.setdefault(body[start:end], message)
                for (start, end), message in zip(
                    elements.spans[skip + len(kept) :], given[len(kept) :], strict=True
                )
            ]
            self._sent_last[split.api.name] = (elements, skip, messages)
        return split.with_messages(messages)

    def _elements(self, body: bytes, at: int, before: Elements | None) -> Elements:
        """``repeated_elements(body, at, before)``, found once for a body that ``shared``
        and then ``entry`` ask about with the same earlier spans (a pure function of
        them: the same objects give the same answer)."""
        found = self._found
        if found is not None and found[0] is body and found[1] == at and found[2] is before:
            return found[3]
        elements = repeated_elements(body, at, before)
        self._found = (body, at, before, elements)
        return elements

    def entry(
        self,
        split: Split,
        body: bytes,
        path: str,
        pinned: bool,
        scrubber: Scrubber,
        response: WireResponse | None = None,
        header: LockedHeader | None = None,
    ) -> tuple[WireEntry, str]:
        """``build_entry(split, ...)`` (ids numbered within the request) and its
        ``request_key``. ``split`` is of ``body``, with no ignore rule applied."""
        ids = IdTokens()
        found = self._messages(split, body, scrubber, ids)
        known = {} if found is None else {"messages": found[0]}
        entry = build_entry(
            split,
            path,
            pinned=pinned,
            scrubber=scrubber,
            ids=ids,
            response=response,
            header=header,
            **known,
        )
        return entry, request_key(entry, None if found is None else found[1])

    def key(
        self,
        split: Split,
        body: bytes,
        path: str,
        pinned: bool,
        scrubber: Scrubber,
        header: LockedHeader | None,
    ) -> str | None:
        """``entry(...)[1]`` without building the entry: its messages' texts inside the
        key's text around them, remembered (``_frame``); ``None`` where that is not
        known (a pinned request, a ``redact`` callable, messages that are not a list in
        the body): ``entry`` says. ``split`` has no ignore rule applied."""
        frame = _frame(split, path, pinned=pinned, scrubber=scrubber, header=header)
        if frame is None:
            return None
        found = self._messages(split, body, scrubber, IdTokens())
        return None if found is None else frame[0] + ",".join(found[1]) + frame[1]

    def _messages(
        self, split: Split, body: bytes, scrubber: Scrubber, ids: IdTokens
    ) -> tuple[list[Any], list[str]] | None:
        """The scrubbed messages and their canonical texts (``None``: not a list in the
        body, so ``build_entry`` does them)."""
        given = split.messages
        at = split.messages_at
        if not isinstance(given, list) or at is None or body[at : at + 1] != b"[":
            return None
        with self._guard:
            if scrubber is not self._scrubber or len(self._seen) > MAX_MESSAGES:
                self._scrubber, self._seen, self._last = scrubber, {}, {}
            last = self._last.get(split.api.name)
            elements = self._elements(body, at, None if last is None else last.elements)
            skip = len(elements.spans) - len(given)  # leading system messages the split cut
            if skip < 0:
                return None
            ids.config(split.config)  # the config's ids are numbered first, as build_entry does
            start = dict(ids.tokens)
            done = _Done(elements, skip, start)
            if last is not None and last.skip == skip and last.start == start:
                done.reuse(last, elements.repeated - skip, ids)
            for (first, end), message in zip(
                elements.spans[skip + len(done.values) :], given[len(done.values) :], strict=True
            ):
                value, text = _scrubbed(self._seen, body[first:end], message, scrubber, ids)
                done.add(value, text, len(ids.tokens))
            done.tokens = dict(ids.tokens)
            self._last[split.api.name] = done
        return done.values, done.texts


@dataclass(slots=True)
class _Done:
    """The messages of one request done: where they are, the ids numbered before them
    (the config's), each one's value and text, and how many ids were numbered after each."""

    elements: Elements
    skip: int
    start: dict[str, str]
    values: list[Any] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
    tokens: dict[str, str] = field(default_factory=dict)

    def reuse(self, last: _Done, repeated: int, ids: IdTokens) -> None:
        """Take the first ``repeated`` messages of ``last`` (their bytes repeat, after the
        same ids numbered before them), and the ids numbered by then."""
        count = max(0, min(repeated, len(last.values)))
        if not count:
            return
        self.values = last.values[:count]
        self.texts = last.texts[:count]
        self.counts = last.counts[:count]
        ids.tokens = dict(islice(last.tokens.items(), self.counts[-1]))

    def add(self, value: Any, text: str, count: int) -> None:
        self.values.append(value)
        self.texts.append(text)
        self.counts.append(count)


def _scrubbed(
    seen: dict[bytes, _Seen], raw: bytes, message: Any, scrubber: Scrubber, ids: IdTokens
) -> tuple[Any, str]:
    """The scrubbed value and canonical text of one message (its ids numbered by ``ids``)."""
    known = seen.get(raw)
    if known is None:
        known = seen.setdefault(raw, _Seen(tuple(ids.raw_message_ids(raw, message))))
    tokens = tuple(ids.token(value) for value in known.ids)
    done = known.done.get(tokens)
    if done is None:  # a message with no ids is its own tokenized copy: not walked again
        if known.ids:  # the tokenized copy is this entry's own; its canonical text proves
            owned = ids.messages(message)  # it unscrubbed as well as any JSON text of it
            text = canonical_json(owned)
            if not scrubber.untouched_text(text):
                owned = scrubber.data(owned)
                text = canonical_json(owned)
            done = known.done.setdefault(tokens, (owned, text))
        else:
            value = scrubber.json_raw(raw, message)
            done = known.done.setdefault(tokens, (value, canonical_json(value)))
    return done


def _frame(
    split: Split, path: str, *, pinned: bool, scrubber: Scrubber, header: LockedHeader | None
) -> tuple[str, str] | None:
    """``key_frame`` of the entry ``build_entry`` makes of ``split`` (unpinned, no
    ``redact``): the same for every request made of the same api, path, config (its JSON
    text), absent or present system and tools, header config keys (or tool names, without
    a header) and secrets, while the model APIs' vocabulary is the same object."""
    if pinned or scrubber.redact is not None:
        return None
    try:
        config = _CONFIG_TEXT.encode(split.config)
    except (TypeError, ValueError, RecursionError):
        return None
    key = (
        split.api.name,
        path,
        config,
        split.system is None,
        split.tools is None,
        None if header is None else header.config_keys,
        tuple(split.tool_names) if header is None else (),  # in the entry without a header
        scrubber.secrets,
    )
    words = vocabulary()
    frames = _FRAMES
    held = frames.made.get(key)
    if held is not None and held[0] is words and held[1] is split.api:
        return held[2]
    made = build_entry(
        split, path, pinned=False, scrubber=scrubber, ids=IdTokens(), messages=[], header=header
    )
    frame = key_frame(made)
    if frame is not None:
        with frames.guard:
            if len(frames.made) >= MAX_FRAMES:
                frames.made = {}
            frames.made[key] = (words, split.api, frame)
    return frame


MAX_FRAMES: Final = 32
"""Distinct key frames remembered (more start afresh: slower, never different)."""

_CONFIG_TEXT: Final = json.JSONEncoder(ensure_ascii=False, check_circular=False)
"""A config's part of a frame's memo key: equal texts are equal parsed JSON data (``1``
is not ``1.0`` nor ``true``), whatever its key order."""


class _Frames:
    """The key frames made (``_frame``), by what made them, each with the vocabulary
    and the api object it was made under."""

    def __init__(self) -> None:
        self.guard = threading.Lock()
        self.made: dict[tuple[Any, ...], tuple[WireVocabulary, ModelApi, tuple[str, str]]] = {}


_FRAMES: Final = _Frames()
