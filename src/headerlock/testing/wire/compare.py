"""Comparing a sent request with its recorded one, and saying readably what differs.

Both sides are entries built the same way (scrubbed, ids tokenized), so an
unpinned comparison sees only tool names for tools and a placeholder for the
system. A pinned one compares everything as sent and also ``prefix_sha256``:
a provider cache sees bytes, so a schema with its keys in another order is a
difference, reported as the first differing byte of the prefix (and the
provider cache's reason when its API module names one, as Anthropic's
``tools_changed`` or ``system_changed``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from headerlock.formats.explain import changes
from headerlock.formats.tool_sets import compare_tool_names
from headerlock.formats.wire_http import HttpEntry
from headerlock.formats.wire_recording import WireEntry, WirePrefix
from headerlock.runtime.canonical import canonical_json
from headerlock.testing.wire.apis import ModelApi, model_api

MAX_CHANGES: Final = 5
SNIPPET: Final = 24


@dataclass(frozen=True, slots=True)
class HeaderChange:
    """A recorded header id (``None``: the entry has none) and the header sent instead."""

    old: str | None
    new: str
    segments: tuple[str, ...]
    """The segments that differ, in header order: api, config, http, query, system, tools."""
    lines: tuple[str, ...]
    """What differs, readable, segment by segment (indented by the report)."""
    reordered: bool = False
    """Only the tool order differs."""

    @property
    def key(self) -> tuple[str | None, str]:
        """What groups the requests that carry the same change."""
        return self.old, self.new


@dataclass(frozen=True, slots=True)
class Difference:
    """One way a request differs from the recording.

    ``number`` is the 1-based request number; ``segment`` is ``request``,
    ``api``, ``path``, ``config``, ``system``, ``tools``, ``messages`` or
    ``prefix``; ``tool``, ``offset`` and ``cache_reason`` are set when known.
    """

    number: int
    api: str
    segment: str
    detail: str
    tool: str | None = None
    offset: int | None = None
    cache_reason: str | None = None
    reordered: bool = False
    """The same tools in another order: a flake to hunt, not a change to re-record."""
    sorted_now: bool = False
    """A reorder into the RFC order (sorted by name) from an unsorted recording: an
    order fixed since the recording, a change to re-record or accept."""
    unsent: int = 0
    """How many recorded requests no request of the run matched (``unsent_requests``)."""
    label: str | None = None
    """``METHOD path`` of a request that is not a model request (``http_difference``)."""
    header: HeaderChange | None = None
    """A header that differs from the locked one (segment ``header``): said once for
    every request that carries it (``report``)."""

    def line(self) -> str:
        """One readable line."""
        if self.label is not None:
            return f"{self.label}: {self.detail}"
        return f"request {self.number} ({self.api}) {self.segment}: {self.detail}"


def same(a: Any, b: Any) -> bool:
    """Equal as JSON values (``1``, ``1.0`` and ``true`` all differ; key order does not)."""
    return a is b or canonical_json(a) == canonical_json(b)


def _changes(recorded: Any, sent: Any, where: str) -> str:
    return "; ".join(changes(recorded, sent, where, limit=MAX_CHANGES))


def entry_differences(
    number: int,
    recorded: WireEntry,
    sent: WireEntry,
    *,
    pinned: bool,
    model: ModelApi | None = None,
) -> list[Difference]:
    """Every difference between ``sent`` and ``recorded`` (empty when they match);
    ``model`` is ``sent``'s API when the caller holds it (else found by its name)."""
    api = sent.api
    if recorded.api != sent.api:
        return [Difference(number, api, "api", f"recorded {recorded.api}, sent {sent.api}")]
    found: list[Difference] = []
    if recorded.path != sent.path:
        found.append(Difference(number, api, "path", f"{recorded.path} -> {sent.path}"))
    for segment in ("config", "system"):
        a, b = getattr(recorded, segment), getattr(sent, segment)
        if not same(a, b):
            found.append(Difference(number, api, segment, _changes(a, b, segment)))
    model = model_api(api) if model is None else model
    if pinned:
        found += tool_differences(number, model, recorded.tools, sent.tools)
    elif recorded.header is not None and sent.header is not None:
        pass  # the header lock compares them (``header_change``)
    elif not same(recorded.tools, sent.tools) or recorded.tool_names != sent.tool_names:
        found.append(_names_difference(number, api, recorded, sent))
    if not same(recorded.messages, sent.messages):
        detail = _changes(recorded.messages, sent.messages, "messages")
        found.append(Difference(number, api, "messages", detail))
    if pinned and recorded.prefix_sha256 != sent.prefix_sha256:
        found.append(prefix_difference(number, model, recorded, sent))
    return found


def _names_difference(number: int, api: str, recorded: WireEntry, sent: WireEntry) -> Difference:
    if recorded.tools is None or sent.tools is None:
        count = {True: "no tools", False: "tools"}
        detail = f"recorded {count[recorded.tools is None]}, sent {count[sent.tools is None]}"
        return Difference(number, api, "tools", detail)
    change = compare_tool_names(recorded.tool_names, sent.tool_names)
    parts = change.membership() or [
        f"tool names {list(recorded.tool_names)} -> {list(sent.tool_names)}"
    ]
    if change.same_set and change.reordered:
        detail, tool = "; ".join(parts), change.first_moved
        moved = Difference(number, api, "tools", detail, tool=tool, reordered=True)
        return replace(moved, sorted_now=change.sorted_now)
    return Difference(number, api, "tools", "; ".join(parts), tool=change.first_changed)


def _by_name(model: ModelApi, tools: Any) -> dict[str, Any]:
    return {model.tool_name(t): t for t in model.tools_of(tools)}


def tool_differences(number: int, model: ModelApi, recorded: Any, sent: Any) -> list[Difference]:
    """How two tool lists of ``model`` differ, per tool (empty when they are the same)."""
    api = model.name
    if same(recorded, sent):
        return []
    if not isinstance(recorded, list) or not isinstance(sent, list):
        return [Difference(number, api, "tools", _changes(recorded, sent, "tools"))]
    old, new = _by_name(model, recorded), _by_name(model, sent)
    change = compare_tool_names(list(old), list(new))
    found = [Difference(number, api, "tools", f"removed {n}", tool=n) for n in change.removed]
    found += [Difference(number, api, "tools", f"added {n}", tool=n) for n in change.added]
    for name in (n for n in change.after if not same(old[n], new[n])):
        detail = f"{name} changed: " + _changes(old[name], new[name], name)
        found.append(Difference(number, api, "tools", detail, tool=name))
    if change.reordered:
        detail = f"order {change.order()}"
        moved = Difference(number, api, "tools", detail, tool=change.first_moved, reordered=True)
        found.append(replace(moved, sorted_now=change.sorted_now))
    if not found:  # same names, same data: a duplicate name or a changed count
        found.append(Difference(number, api, "tools", _changes(recorded, sent, "tools")))
    return found


def first_offset(a: bytes, b: bytes) -> int:
    """The index of the first byte where ``a`` and ``b`` differ (the shorter length if one
    is a prefix of the other)."""
    return next(
        (n for n, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )


def snippet(raw: bytes, offset: int) -> str:
    """The bytes around ``offset`` in backticks, ``^`` marking the first differing one."""
    before = raw[max(0, offset - SNIPPET) : offset].decode("utf-8", errors="replace")
    after = raw[offset : offset + SNIPPET].decode("utf-8", errors="replace")
    text = f"{before}^{after}".replace("\n", "\\n").replace("\r", "\\r")
    return f"`{text}`"


def tool_at(found: ModelApi, tools_raw: bytes, offset: int) -> tuple[str | None, int]:
    """The name of the tool (of ``found``'s tools list ``tools_raw``) whose bytes hold
    ``offset``, and the offset inside it."""
    try:
        spans = found.tool_spans(tools_raw)
        names = found.tool_names(json.loads(tools_raw))
    except (ValueError, IndexError):
        return None, offset
    for (start, end), name in zip(spans, names, strict=False):
        if offset < end:
            return name, max(0, offset - start)
    return None, offset


def short_sha(sha: str | None) -> str:
    """The first 12 hex digits of a prefix hash (``none`` for an unpinned entry)."""
    return "none" if sha is None else f"{sha[:12]}..."


def prefix_difference(
    number: int, model: ModelApi, recorded: WireEntry, sent: WireEntry
) -> Difference:
    """Where the cacheable prefix of ``sent`` (a request of ``model``) first differs from
    the recorded one."""
    shas = f"prefix_sha256 {short_sha(recorded.prefix_sha256)} -> {short_sha(sent.prefix_sha256)}"
    if recorded.prefix is None or sent.prefix is None:
        return Difference(number, model.name, "prefix", shas)
    return _prefix_bytes(number, model, recorded.prefix, sent.prefix, shas)


def _prefix_bytes(
    number: int, model: ModelApi, recorded: WirePrefix, sent: WirePrefix, shas: str
) -> Difference:
    api = model.name
    old, new = recorded.raw, sent.raw
    offset = first_offset(old, new)
    in_tools = recorded.tools != sent.tools
    segment = "tools" if in_tools else "system"
    tool, inner = tool_at(model, sent.tools.encode(), offset) if in_tools else (None, 0)
    where = f"in tool {tool} at byte {inner} of it" if tool else f"in the {segment}"
    detail = f"{shas}; first differing byte {offset} ({where}): recorded {snippet(old, offset)}"
    detail += f", sent {snippet(new, offset)}"
    if _same_data(recorded, sent):
        detail += "; the same data in other bytes (JSON key order or spacing)"
    reason = model.cache_reason(segment)
    if reason is not None:
        detail += f"; {model.provider} cache: {reason}"
    return Difference(number, api, "prefix", detail, tool=tool, offset=offset, cache_reason=reason)


def _same_data(recorded: WirePrefix, sent: WirePrefix) -> bool:
    try:
        return all(
            same(json.loads(f"[{a}]"), json.loads(f"[{b}]"))
            for a, b in ((recorded.tools, sent.tools), (recorded.system, sent.system))
        )
    except ValueError:
        return False


def http_difference(number: int, recorded: HttpEntry, sent: HttpEntry) -> Difference:
    """How ``sent``, a request that is not a model request (embeddings, a tool's own call),
    differs from the recorded one with the same method and path (``number``: its place
    among the lock's other traffic)."""
    found = []
    if recorded.query != sent.query:
        found.append(f"query: {recorded.query!r} -> {sent.query!r}")
    old = None if recorded.body is None else recorded.body.to_data()
    new = None if sent.body is None else sent.body.to_data()
    if not same(old, new):
        a, b = recorded.body, sent.body
        if a is not None and b is not None and a.kind == b.kind:
            old, new = a.value, b.value
        found.append(_changes(old, new, "body"))
    label = f"{sent.method} {sent.path}"
    return Difference(number, "http", "body", "; ".join(found) or "differs", label=label)


def extra_request(number: int, sent: WireEntry, recorded_count: int) -> Difference:
    """A request the recording does not have."""
    noun = "request" if recorded_count == 1 else "requests"
    detail = f"sent {sent.path}, but the recording has only {recorded_count} {noun}"
    return Difference(number, sent.api, "request", detail)


def unsent_requests(recorded: Sequence[WireEntry], unserved: Sequence[int]) -> Difference:
    """Recorded requests (indexes ``unserved``) that no request of the run matched."""
    numbers = ", ".join(str(i + 1) for i in unserved[:10]) + (", ..." if len(unserved) > 10 else "")
    noun = "request was" if len(unserved) == 1 else "requests were"
    detail = f"recorded but never sent ({len(unserved)} recorded {noun} not sent: {numbers})"
    first = unserved[0]
    return Difference(first + 1, recorded[first].api, "request", detail, unsent=len(unserved))


ORDER_HINT: Final = (
    "The same tools in another order, not sorted by name: an order flake, not a change to"
    " re-record, so no pending file is written (accepting it would lock in one hash seed's"
    " order). Find it with `headerlock flakes <test>` (fresh processes, varied hash seeds)"
    " and check the agent with headerlock.wire.assert_order_invariant; order_wire_tools (or"
    " the README's standard-library lines) sorts a tool list. To keep this order anyway,"
    " re-record the test."
)
SORTED_HINT: Final = (
    "The tools are now sorted by name (the RFC order) and the recording's were not: the"
    " order changed; re-record or accept (headerlock review)."
)
RECORD_HINT: Final = (
    "If the change is intended, re-record: lock(..., mode='all'), or run pytest"
    " with --snapshot-update."
)


def order_fixed(differences: Sequence[Difference]) -> bool:
    """Whether every reorder among ``differences`` sorts an unsorted recorded order (a fix
    to re-record, not a flake)."""
    moved = [d for d in differences if d.reordered]
    return bool(moved) and all(d.sorted_now for d in moved)


def order_flake(differences: Sequence[Difference]) -> bool:
    """Whether ``differences`` are only a tool order that is not a fix: a flake, which
    gets no pending file."""
    return order_only(differences) and not order_fixed(differences)


def verdict(differences: Sequence[Difference]) -> list[str]:
    """What a failed replay's report ends with: hunt the flake when only the tool order
    moved; say the order changed when it moved into the sorted order; else how to
    re-record (``RECORD_HINT`` last, which a caller may name a command in)."""
    if order_flake(differences):
        return [ORDER_HINT]
    if order_only(differences):
        return [SORTED_HINT, RECORD_HINT]
    return [RECORD_HINT]


def order_only(differences: Sequence[Difference]) -> bool:
    """Whether every difference is a tool order (and the prefix bytes it moved, and the
    recorded requests left unsent: the reordered ones matched none, and an agent that
    got a 400 stops short of the rest)."""
    return any(_reordered(d) for d in differences) and all(
        _reordered(d) or d.segment == "prefix" or d.unsent for d in differences
    )


def _reordered(difference: Difference) -> bool:
    header = difference.header
    return difference.reordered or (header is not None and header.reordered)


def report(differences: Sequence[Difference], *, path: str) -> str:
    """The readable report of a failed replay: every difference, then what to do (hunt the
    flake when only the tool order moved, else how to re-record)."""
    shown = grouped(differences)
    noun = "difference" if len(shown) == 1 else "differences"
    lines = [f"wire replay of {path} does not match the recording ({len(shown)} {noun}):"]
    for item in shown:
        lines += [f"  {line}" for line in item]
    lines += verdict(differences)
    return "\n".join(lines)


def grouped(differences: Sequence[Difference]) -> list[list[str]]:
    """The lines of each difference; the requests that carry the same header change
    share one entry (at the place of the first), which names them all."""
    shown: list[list[str]] = []
    changes_at: dict[tuple[str | None, str], tuple[int, list[int]]] = {}
    for difference in differences:
        header = difference.header
        if header is None:
            shown.append([difference.line()])
            continue
        if header.key in changes_at:
            changes_at[header.key][1].append(difference.number)
            continue
        changes_at[header.key] = (len(shown), [difference.number])
        shown.append([])
    for difference in differences:
        header = difference.header
        if header is None or shown[changes_at[header.key][0]]:
            continue
        numbers = changes_at[header.key][1]
        noun = "request" if len(numbers) == 1 else "requests"
        listed = ", ".join(map(str, numbers[:10])) + (", ..." if len(numbers) > 10 else "")
        old = header.old or "none"
        shown[changes_at[header.key][0]] = [
            f"header of {noun} {listed} ({difference.api}) differs from the locked one"
            f" ({', '.join(header.segments)}; {old} -> {header.new}):",
            *(f"  {line}" for line in header.lines),
        ]
    return shown
