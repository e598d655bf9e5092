"""A model request as a recording entry: scrubbed, ids tokenized, pinned or not."""

from __future__ import annotations

import base64
from dataclasses import replace
from typing import Any, Final

from headerlock.formats import placeholders
from headerlock.formats.sse import SseEvents, dump_json
from headerlock.formats.wire_recording import WireEntry, WirePrefix, sorted_names
from headerlock.formats.wire_response import WireResponse
from headerlock.formats.wire_scrub import IdTokens, Scrubber
from headerlock.testing.wire.apis import Split
from headerlock.testing.wire.request_header import LockedHeader

_UNSET: Final[Any] = object()


def build_entry(
    split: Split,
    path: str,
    *,
    pinned: bool,
    scrubber: Scrubber,
    ids: IdTokens,
    response: WireResponse | None = None,
    messages: Any = _UNSET,
    header: LockedHeader | None = None,
) -> WireEntry:
    """The entry of one request; ``ids`` numbers ids across the requests of a lock.

    ``messages``: the messages already scrubbed and tokenized with ``ids`` (after the
    config's ids), when the caller has them (``memo.MessageMemo``). ``header``: the
    request's locked header (unpinned only): the entry keeps its id, not its config
    keys or tool names."""
    config = scrubber.json_data(ids.config(split.config))
    if header is not None:
        config = {k: v for k, v in config.items() if k not in header.config_keys}
    if messages is _UNSET:
        messages = scrubber.json_data(ids.messages(split.messages))
    if pinned:
        system, tools = scrubber.data(split.system), scrubber.data(split.tools)
        prefix: WirePrefix | None = WirePrefix(
            scrubber.text(split.tools_raw.decode("utf-8", errors="replace")),
            scrubber.text(split.system_raw.decode("utf-8", errors="replace")),
        )
    else:
        system = None if split.system is None else placeholders.SYSTEM
        tools = None if split.tools is None else placeholders.TOOLS
        prefix = None
    return WireEntry(
        api=split.api.name,
        path=scrubber.text(path),
        config=config,
        system=system,
        tools=tools,
        tool_names=() if header is not None else _sorted_names(split.tool_names),
        prefix_sha256=split.prefix_sha256 if pinned else None,
        messages=messages,
        prefix=prefix,
        response=None if response is None else scrub_response(response, scrubber),
        header=None if header is None else header.id,
    )


def _sorted_names(names: list[str]) -> tuple[str, ...]:
    """``sorted_names(names)``, the last one remembered (the same tools every request)."""
    held = _SORTED[0]
    if held[0] == names:
        return held[1]
    found = sorted_names(names)
    _SORTED[0] = (list(names), found)
    return found


_SORTED: list[tuple[list[str], tuple[str, ...]]] = [([], ())]
"""The tool names last sorted (a copy), and their order."""


def scrub_response(response: WireResponse, scrubber: Scrubber) -> WireResponse:
    """``response`` with secrets (and whatever ``redact`` takes) scrubbed from its body."""
    if response.kind == "base64":  # bytes that are not text: scrubbed as bytes
        raw = scrubber.raw(base64.b64decode(response.body))
        return replace(response, body=base64.b64encode(raw).decode("ascii"))
    if response.kind != "events":
        return replace(response, body=scrubber.data(response.body))
    if isinstance(response.body, SseEvents) and _stream_kept(response.body, scrubber):
        return response  # nothing in it to scrub: its events are kept as parsed
    events = tuple(replace(e, data=scrubber.data(e.data)) for e in response.body)
    return replace(response, body=events)


def _stream_kept(events: SseEvents, scrubber: Scrubber) -> bool:
    """Whether scrubbing would change no event of a parsed stream, told from its text
    (one search per secret form, not one walk per event): the text as received when it
    holds no backslash (every string of its JSON events is then in it as it is), else
    the JSON events written out; a text event is checked as itself."""
    if any(not e.is_json and scrubber.text(e.data) != e.data for e in events):
        return False
    text = events.text
    if "\\" in text:
        text = dump_json([e.data for e in events if e.is_json])
    return scrubber.untouched_text(text)
