"""Where a request's cacheable prefix first parts from the request it continues, and why.

Both prefixes are rendered item by item (``prefix``). The first item that differs,
in render order, is the break; its first differing byte is where the shared prefix
ends. The cause is named from the segment it lies in: in the tools, a reorder, an
added, removed or changed tool, or the same data in other bytes (schema key order);
in the system, a changed system; in the messages, a rewritten history (a message
appended is no break). Volatile text (dates, ids, counters) covering the byte names
the cause instead (``volatile``). A config key that keys the cache
(``CacheRules.keyed``, the model included: a model switch inside a conversation)
breaks from its scope on; an unseen segment (an unpinned recording's tools and system)
is judged by what is kept, the tool names. A request whose history the provider keeps
sends only its new turn: its messages are not compared.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from headerlock.formats.explain import changes
from headerlock.formats.tool_sets import compare_tool_names
from headerlock.testing.wire.apis import model_api
from headerlock.testing.wire.cache import findings as codes
from headerlock.testing.wire.cache.findings import CacheFinding
from headerlock.testing.wire.cache.prefix import Item, Prefix
from headerlock.testing.wire.cache.volatile import volatile_at
from headerlock.testing.wire.compare import first_offset, same, snippet


@dataclass(frozen=True, slots=True)
class Step:
    """A request against the previous one: the bytes of its rendered prefix they share,
    and the first break (``None``: only appended to, or a new conversation)."""

    shared: int
    found: CacheFinding | None


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _config_break(prev: Prefix, cur: Prefix) -> tuple[int, CacheFinding] | None:
    """The earliest config break: its position (the start of its scope) and finding."""
    rules = model_api(cur.api).cache
    starts = _segment_starts(cur)
    found: tuple[int, CacheFinding] | None = None
    for rule in rules.keyed:
        before, after = prev.keyed.get(rule.key), cur.keyed.get(rule.key)
        if same(before, after):
            continue
        position = starts.get(rule.scope, 0)
        detail = f"{rule.key} {_short(before)} -> {_short(after)}"
        if rule.scope != "tools":
            detail += f" (invalidates the {rule.scope} on)"
        finding = CacheFinding(cur.number, cur.api, rule.code, "config", detail)
        if found is None or position < found[0]:
            found = (position, finding)
    return found


def _segment_starts(prefix: Prefix) -> dict[str, int]:
    """The byte where each segment starts in the rendered prefix (its render order)."""
    starts: dict[str, int] = {}
    at = 0
    order = model_api(prefix.api).cache.order
    sizes = {name: sum(len(i.raw) for i in prefix.segment(name)) for name in order}
    for name in order:
        starts[name] = at
        at += sizes[name]
    return starts


def _names_break(prev: Prefix, cur: Prefix) -> CacheFinding | None:
    """Unseen tools: what the (sorted) tool names tell: an added or removed tool."""
    change = compare_tool_names(prev.tool_names, cur.tool_names)
    if change.removed:
        detail = f"removed {', '.join(change.removed)} (tool names only: the recording is unpinned)"
        return CacheFinding(
            cur.number, cur.api, codes.TOOL_REMOVED, "tools", detail, tool=change.removed[0]
        )
    if change.added:
        detail = f"added {', '.join(change.added)} (tool names only: the recording is unpinned)"
        tool = change.added[0]
        return CacheFinding(cur.number, cur.api, codes.TOOL_ADDED, "tools", detail, tool=tool)
    return None


def _tools_cause(
    prev: Prefix, cur: Prefix, a: Item | None, b: Item | None
) -> tuple[str, str, int | None, str | None]:
    """Code, detail, tool index and name of a break inside the tools."""
    old = [i.name or "" for i in prev.segment("tools")]
    new = [i.name or "" for i in cur.segment("tools")]
    if old != new:
        change = compare_tool_names(old, new)
        removed, added = change.removed, change.added
        if change.same_set:
            at = next(n for n, (x, y) in enumerate(zip(old, new, strict=True)) if x != y)
            return codes.TOOLS_REORDERED, f"order {change.order()}", at, new[at]
        if removed and (not added or old.index(removed[0]) <= _first(new, added)):
            return (
                codes.TOOL_REMOVED,
                f"removed {', '.join(removed)}",
                old.index(removed[0]),
                removed[0],
            )
        if added:
            return codes.TOOL_ADDED, f"added {', '.join(added)}", new.index(added[0]), added[0]
        return codes.TOOLS_REORDERED, f"order {', '.join(old)} -> {', '.join(new)}", None, None
    assert a is not None and b is not None
    index, name = b.index, b.name
    try:
        data_a, data_b = json.loads(a.raw), json.loads(b.raw)
    except ValueError:
        data_a, data_b = a.raw, b.raw
    if same(data_a, data_b):
        detail = f"{name}: the same data in other bytes (JSON key order or spacing)"
        return codes.SCHEMA_KEY_ORDER, detail, index, name
    offset = first_offset(a.raw, b.raw)
    volatile = volatile_at(a.raw, b.raw, offset, text=False)
    if volatile is not None:
        return codes.VOLATILE_CONTENT, f"{volatile.describe()} in tool {name}", index, name
    detail = "; ".join(changes(data_a, data_b, name or "tool", limit=5))
    return codes.TOOL_CHANGED, f"{name} changed: {detail}", index, name


def _first(names: list[str], wanted: Sequence[str]) -> int:
    return min(names.index(n) for n in wanted)


def _messages_cause(
    prev: Prefix, a: Item | None, b: Item | None, offset: int
) -> tuple[str, str] | None:
    """Code and detail of a break inside the messages (``None``: a new conversation)."""
    if b is None:
        count = len(prev.segment("messages"))
        kept = a.index if a is not None else count
        return codes.HISTORY_REWRITTEN, f"messages dropped: {count} before, {kept} now"
    if a is None:
        return None  # only appended
    volatile = volatile_at(a.raw, b.raw, offset, text=b.index > 0)
    if volatile is not None:
        return codes.VOLATILE_CONTENT, f"{volatile.describe()} in message {b.index}"
    if b.index == 0:
        return None  # another first message: a new conversation on the same tools and system
    return codes.HISTORY_REWRITTEN, f"message {b.index} changed (the history was rewritten)"


def _system_cause(a: Item | None, b: Item | None, offset: int) -> tuple[str, str]:
    if a is None or b is None:
        return codes.SYSTEM_CHANGED, "system added" if a is None else "system removed"
    volatile = volatile_at(a.raw, b.raw, offset, text=True)
    if volatile is not None:
        return codes.VOLATILE_CONTENT, f"{volatile.describe()} in the system"
    return codes.SYSTEM_CHANGED, "the system prompt changed"


def step(prev: Prefix, cur: Prefix) -> Step:
    """``cur`` against ``prev``, the request it continues (same API)."""
    order = model_api(cur.api).cache.order
    config = _config_break(prev, cur)
    if "tools" in cur.unseen or "tools" in prev.unseen:
        names = _names_break(prev, cur)
        if names is not None and (config is None or config[0] > 0):
            return Step(0, names)
    shared, found, broke = _item_break(prev, cur, order)
    if config is not None and (not broke or config[0] <= shared):
        return Step(config[0], config[1])
    return Step(shared, found)


def _item_break(
    prev: Prefix, cur: Prefix, order: tuple[str, ...]
) -> tuple[int, CacheFinding | None, bool]:
    """The bytes shared, the finding of the first differing item (``None``: a new
    conversation, or nothing differs) and whether an item differs at all."""
    rank = {name: n for n, name in enumerate(order)}
    kept = not (prev.server_history or cur.server_history)  # else only a new turn is sent
    left = [i for i in prev.items if kept or i.segment != "messages"]
    right = [i for i in cur.items if kept or i.segment != "messages"]
    at = 0
    for k in range(max(len(left), len(right))):
        a = left[k] if k < len(left) else None
        b = right[k] if k < len(right) else None
        if a is not None and b is not None and a.segment == b.segment and a.raw == b.raw:
            at += len(b.raw)
            continue
        if a is None and b is not None and b.segment == "messages":
            return at, None, False  # only appended
        if a is not None and b is not None and a.segment == b.segment:
            inner = first_offset(a.raw, b.raw)
            return at + inner, _finding(prev, cur, a.segment, a, b, inner, at + inner), True
        segments = [i.segment for i in (a, b) if i is not None]
        segment = min(segments, key=rank.__getitem__)
        shown = (a, b)
        a = a if a is not None and a.segment == segment else None
        b = b if b is not None and b.segment == segment else None
        return at, _finding(prev, cur, segment, a, b, 0, at, shown), True
    return at, None, False


def _finding(
    prev: Prefix,
    cur: Prefix,
    segment: str,
    a: Item | None,
    b: Item | None,
    inner: int,
    at: int,
    shown: tuple[Item | None, Item | None] | None = None,
) -> CacheFinding | None:
    """The finding of a break in ``segment`` between items ``a`` (previous) and ``b``;
    the snippets are of ``shown`` when given (the items where the bytes part)."""
    left, right = shown if shown is not None else (a, b)
    before = snippet(left.raw, inner) if left is not None else None
    after = snippet(right.raw, inner) if right is not None else None
    index: int | None = None
    tool: str | None = None
    if segment == "tools":
        code, detail, index, tool = _tools_cause(prev, cur, a, b)
    elif segment == "system":
        code, detail = _system_cause(a, b, inner)
    else:
        cause = _messages_cause(prev, a, b, inner)
        if cause is None:
            return None
        code, detail = cause
        index = b.index if b is not None else a.index if a is not None else None
    return CacheFinding(cur.number, cur.api, code, segment, detail, index, tool, at, before, after)
