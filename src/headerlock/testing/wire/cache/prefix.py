"""The cacheable prefix of one request as its provider renders it, item by item.

A request renders, in its API's ``CacheRules.order`` (tools, system, messages for
every API headerlock knows), as a list of items: one per tool (the API module's
``tool_spans``), one for the system, one per message. Each item keeps its bytes as
sent, with the breakpoint marker (``cache_control``) cut out, since moving a
breakpoint is no change of the prefix; the count of its content blocks and which of
them carry a breakpoint (for the block-counting rules of an explicit cache).

From a ``WireRequest`` every segment is seen: the bytes are the body's. From a
recording: a pinned entry keeps the raw tools and system text; an unpinned one refers
to its header in the header lock beside it (``headers.lock.yaml``: the model and the
other cache-keying config, the system and the tool list), whose data is rendered as
compact JSON with sorted keys (``LOCK_RENDERING``: the bytes sent are not kept); an
unpinned entry without its header (from before header locks, or its lock missing)
keeps only the tool names, so tools and system are *unseen*. Messages are rendered as
compact JSON of the recorded data (ids tokenized the same way in every request).
Estimated tokens are ``ceil(bytes / 4)`` (``estimate_tokens``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from headerlock.formats.wire_recording import WireEntry
from headerlock.formats.wire_response import WireResponse
from headerlock.testing.wire.apis import ModelApi, model_api
from headerlock.testing.wire.apis.cache_rules import CacheUsage
from headerlock.testing.wire.cache.turns import Turn, response_turn
from headerlock.testing.wire.run import WireRequest
from headerlock.testing.wire.spans import array_elements, object_members, value_end

BYTES_PER_TOKEN: Final = 4
LOCK_RENDERING: Final = (
    "system and tools of the header lock are its data rendered as compact JSON with sorted"
    " keys, not the bytes sent: a change of key order or whitespace alone is not seen"
)


def estimate_tokens(size: int) -> int:
    """Estimated tokens of ``size`` bytes: ``ceil(size / 4)``, the common rule of thumb
    for English text and JSON under BPE tokenizers (no tokenizer is loaded; the
    recorded usage, where a response has it, is shown beside)."""
    return -(-size // BYTES_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class Item:
    """One tool, the system or one message: its bytes (marker cut out), its parsed data,
    its content blocks and the 0-based blocks carrying a breakpoint."""

    segment: str
    index: int
    raw: bytes
    data: Any
    name: str | None = None
    blocks: int = 1
    marks: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Prefix:
    """One request rendered: its items in render order and what the report needs.

    ``unseen`` names the segments the source does not keep (their items are empty and
    ``tool_names`` are then sorted); ``server_history`` says the history is kept by
    the provider (its messages are only the new turn); ``top_marks`` counts top-level
    breakpoints (an automatic one on the request itself).
    """

    number: int
    api: str
    model: str
    keyed: dict[str, Any]
    items: tuple[Item, ...]
    tool_names: tuple[str, ...]
    unseen: tuple[str, ...] = ()
    server_history: bool = False
    top_marks: int = 0
    usage: CacheUsage | None = None
    turn: Turn | None = None
    """The assistant turn its recorded response carries (``None``: none recorded)."""

    @property
    def size(self) -> int:
        """Bytes of the rendered prefix."""
        return sum(len(item.raw) for item in self.items)

    def segment(self, name: str) -> tuple[Item, ...]:
        """The items of one segment, in order."""
        return tuple(item for item in self.items if item.segment == name)


_WS: Final = b" \t\r\n"


def strip_member(raw: bytes, key: str, *, whole: bool = False) -> bytes:
    """``raw`` JSON without every member named ``key``, at any depth, byte for byte
    otherwise (one adjacent comma goes with each member; with ``whole``, an object
    whose only member it is goes whole). One pass: linear in ``raw``."""
    needle = json.dumps(key).encode()
    at = raw.find(needle)
    if at < 0:
        return raw
    cuts: list[tuple[int, int]] = []
    scan, inside = 0, False
    while at >= 0:
        inside = _toggled(raw, scan, at, inside)
        scan = at
        if inside or _escaped(raw, at):
            at = raw.find(needle, at + 1)
            continue
        colon = at + len(needle)
        while raw[colon : colon + 1] in _WS and colon < len(raw):
            colon += 1
        if raw[colon : colon + 1] != b":":  # a string value, not a key
            scan, at = colon, raw.find(needle, colon)
            continue
        value = colon + 1
        while raw[value : value + 1] in _WS and value < len(raw):
            value += 1
        end = value_end(raw, value)
        cuts.append(_member_cut(raw, *(_only_member(raw, at, end) if whole else (at, end))))
        scan, at = end, raw.find(needle, end)
    out, last = bytearray(), 0
    for start, stop in cuts:
        out += raw[last:start]
        last = stop
    out += raw[last:]
    return bytes(out)


def _only_member(raw: bytes, start: int, end: int) -> tuple[int, int]:
    """The object around the member ``raw[start:end]`` when it is its only member."""
    before = start
    while before > 0 and raw[before - 1 : before] in _WS:
        before -= 1
    after = end
    while raw[after : after + 1] in _WS and after < len(raw):
        after += 1
    if before > 0 and raw[before - 1 : before] == b"{" and raw[after : after + 1] == b"}":
        return before - 1, after + 1
    return start, end


def _member_cut(raw: bytes, start: int, end: int) -> tuple[int, int]:
    """The bytes to cut for the member ``raw[start:end]``: it and one adjacent comma."""
    after = end
    while raw[after : after + 1] in _WS and after < len(raw):
        after += 1
    if raw[after : after + 1] == b",":
        after += 1
        while raw[after : after + 1] in _WS and after < len(raw):
            after += 1
        return start, after
    before = start
    while before > 0 and raw[before - 1 : before] in _WS:
        before -= 1
    if before > 0 and raw[before - 1 : before] == b",":
        return before - 1, end
    return start, end


def _escaped(raw: bytes, at: int) -> bool:
    slashes = 0
    while at - 1 - slashes >= 0 and raw[at - 1 - slashes] == 0x5C:
        slashes += 1
    return slashes % 2 == 1


def _toggled(raw: bytes, start: int, at: int, inside: bool) -> bool:
    """Whether ``at`` is inside a string, given whether ``start`` was (quotes between)."""
    i = start
    while (j := raw.find(b'"', i, at)) >= 0:
        if not _escaped(raw, j):
            inside = not inside
        i = j + 1
    return inside


def _without(value: Any, key: str, whole: bool = False) -> Any:
    if isinstance(value, Mapping):
        return {k: _without(v, key, whole) for k, v in value.items() if k != key}
    if isinstance(value, list):
        kept = [v for v in value if not (whole and _is_marker_block(v, key))]
        return [_without(v, key, whole) for v in kept]
    return value


def _is_marker_block(value: Any, marker: str) -> bool:
    return isinstance(value, Mapping) and list(value) == [marker]


def _marker_blocks(content: list[Any], marker: str) -> tuple[int, tuple[int, ...]]:
    """Blocks and marks where a marker is a block of its own: it marks the block before it."""
    blocks, marks = 0, list[int]()
    for block in content:
        if not _is_marker_block(block, marker):
            blocks += 1
        elif blocks and (not marks or marks[-1] != blocks - 1):
            marks.append(blocks - 1)
    return max(1, blocks), tuple(marks)


def _blocks(value: Any, marker: str, whole: bool = False) -> tuple[int, tuple[int, ...]]:
    """A message's or system's content blocks and the ones marked (top-level markers)."""
    content = value.get("content") if isinstance(value, Mapping) else value
    if isinstance(content, list) and whole:
        return _marker_blocks(content, marker)
    if isinstance(content, list):
        marks = tuple(n for n, b in enumerate(content) if isinstance(b, Mapping) and marker in b)
        return max(1, len(content)), marks
    own = (0,) if isinstance(value, Mapping) and marker in value else ()
    return 1, own


def _compact(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


class _Builder:
    """Builds the items of one request for ``api``."""

    def __init__(self, api: ModelApi) -> None:
        self.api = api
        self.rules = api.cache
        self.marker = self.rules.marker if self.rules.breakpoints else None
        self.whole = self.rules.marker_block

    def clean(self, raw: bytes) -> bytes:
        if self.marker is None:
            return raw
        return strip_member(raw, self.marker, whole=self.whole)

    def marked(self, value: Any) -> tuple[int, tuple[int, ...]]:
        return (1, ()) if self.marker is None else _blocks(value, self.marker, self.whole)

    def tools(self, raw: bytes, data: Any) -> list[Item]:
        if not raw or not isinstance(data, list):  # none, or ``null``: no tool
            return []
        listed = self.api.tools_of(data)
        names = self.api.tool_names(data)
        spans = self.api.tool_spans(raw)
        after = self._marked_tools(data)
        items = []
        for n, ((start, end), name) in enumerate(zip(spans, names, strict=False)):
            tool = listed[n] if n < len(listed) else None
            carries = (isinstance(tool, Mapping) and self.marker in tool) or n in after
            marks = (0,) if self.marker and carries else ()
            items.append(Item("tools", n, self.clean(raw[start:end]), tool, name, 1, marks))
        return items

    def _marked_tools(self, data: list[Any]) -> set[int]:
        """The tools a marker block follows (each entry but a marker block is one tool)."""
        if self.marker is None or not self.whole:
            return set()
        found, tools = set(), 0
        for entry in data:
            if not _is_marker_block(entry, self.marker):
                tools += 1
            elif tools:
                found.add(tools - 1)
        return found

    def system(self, raw: bytes, data: Any) -> list[Item]:
        if not raw:
            return []
        if self.marker is not None and isinstance(data, list):
            blocks, marks = self.marked(data)
            return [Item("system", 0, self.clean(raw), data, None, blocks, marks)]
        blocks = len(data) if isinstance(data, list) else 1
        return [Item("system", 0, self.clean(raw), data, None, max(1, blocks))]

    def message(self, n: int, raw: bytes, data: Any) -> Item:
        blocks, marks = self.marked(data)
        return Item("messages", n, self.clean(raw), data, None, blocks, marks)

    def order(self, parts: Mapping[str, list[Item]]) -> tuple[Item, ...]:
        return tuple(item for segment in self.rules.order for item in parts.get(segment, ()))

    def top_marks(self, config: Mapping[str, Any]) -> int:
        return 1 if self.marker is not None and self.marker in config else 0


def from_request(
    request: WireRequest, response: WireResponse | None = None, number: int | None = None
) -> Prefix:
    """The prefix of a request as sent (every segment seen); ``response`` its recorded
    answer, ``number`` its number in the recording (default: the run's)."""
    api = model_api(request.api)
    build = _Builder(api)
    body = request.body
    split = api.split(body)
    spans = object_members(body)
    messages: list[Item] = []
    span = spans.get(api.messages_key)
    given = split.messages
    if span is not None and body[span[0] : span[0] + 1] == b"[" and isinstance(given, list):
        elements = array_elements(body, span[0])
        skip = len(elements) - len(given)  # leading system messages, cut out by the split
        messages = [
            build.message(n, body[a:b], given[n]) for n, (a, b) in enumerate(elements[skip:])
        ]
    elif span is not None:  # a string input (the responses API): one message
        messages = [build.message(0, body[slice(*span)], given)]
    parts = {
        "tools": build.tools(split.tools_raw, split.tools),
        "system": build.system(split.system_raw, split.system),
        "messages": messages,
    }
    data = json.loads(body)
    model = api.model_of(request.path, data)
    return Prefix(
        request.number if number is None else number,
        request.api,
        model,
        api.cache.keyed_config(split.config, model),
        build.order(parts),
        tuple(split.tool_names),
        (),
        api.cache.server_history(split.config),
        build.top_marks(split.config),
        usage_of(api, response),
        response_turn(api.cache, response),
    )


def from_entry(number: int, entry: WireEntry, header: Mapping[str, Any] | None = None) -> Prefix:
    """The prefix of a recorded request: what the recording keeps of it, with ``header``
    the header its ``header:`` id names in the header lock (``None``: not found). The one
    place the report reads an entry's header."""
    api = model_api(entry.api)
    build = _Builder(api)
    unseen: tuple[str, ...] = ()
    parts: dict[str, list[Item]] = {}
    config = entry.config if header is None else {**entry.config, **header.get("config", {})}
    tools: Any = entry.tools
    if entry.prefix is not None:
        parts["tools"] = build.tools(entry.prefix.tools.encode(), _loads(entry.prefix.tools))
        parts["system"] = build.system(entry.prefix.system.encode(), _system(entry))
    elif header is not None:
        tools, system = header.get("tools"), header.get("system")
        parts["tools"] = build.tools(_compact(tools) if tools else b"", tools)
        parts["system"] = build.system(_locked_system(api, system), system)
    else:
        unseen = ("tools", "system")
    given = entry.messages
    if isinstance(given, list):
        parts["messages"] = [
            build.message(n, _compact(_strip(build, m)), m) for n, m in enumerate(given)
        ]
    elif given is not None:
        parts["messages"] = [build.message(0, _compact(_strip(build, given)), given)]
    model = api.model_of(entry.path, config)
    return Prefix(
        number,
        entry.api,
        model,
        api.cache.keyed_config(config, model),
        build.order(parts),
        entry.tool_names if unseen else tuple(api.tool_names(tools)),
        unseen,
        api.cache.server_history(config),
        build.top_marks(config),
        usage_of(api, entry.response),
        response_turn(api.cache, entry.response, canonical=True),
    )


def _locked_system(api: ModelApi, system: Any) -> bytes:
    """A locked system's bytes: leading system messages are sent as elements, no list."""
    if not system:
        return b""
    raw = _compact(system)
    return raw[1:-1] if api.leading_system is not None and isinstance(system, list) else raw


def _strip(build: _Builder, value: Any) -> Any:
    if build.marker is None:
        return value
    return _without(value, build.marker, build.whole)


def _loads(text: str) -> Any:
    return json.loads(text) if text else None


def _system(entry: WireEntry) -> Any:
    assert entry.prefix is not None
    text = entry.prefix.system
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:  # the leading system messages of a chat request: elements, no list
        return json.loads(f"[{text}]")


def usage_of(api: ModelApi, response: WireResponse | None) -> CacheUsage | None:
    """The cache figures of a recorded response, read by the API's rules."""
    if response is None:
        return None
    if response.kind == "json":
        objects: Sequence[Any] = [response.body]
    elif response.kind == "events":
        objects = [event.data for event in response.body if event.is_json]
    else:
        return None
    return api.cache.usage_of(objects)
