"""The cache-break explainer: where two wire recordings' cacheable prefixes part.

``headerlock diff A.yaml B.yaml`` on two wire recordings says first where the
cacheable prefix (tools then system, the bytes a provider cache keys on) first
differs: the request number, the segment (``tools`` or ``system``), the tool,
the byte offset and the provider cache's reason when its API module names one
(Anthropic's ``tools_changed`` or ``system_changed``). Then the rest: every
other difference, request by request, and the unified diff of the two files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from headerlock.errors import HeaderlockError, InputFileError
from headerlock.formats.explain import changes, unified
from headerlock.formats.strict_yaml import loads, read_text
from headerlock.formats.tool_sets import compare_tool_names
from headerlock.formats.wire_recording import (
    WireEntry,
    WireRecording,
    is_wire_data,
    wire_recording_from_data,
)
from headerlock.formats.wire_response import STREAM_KEY
from headerlock.testing.wire.apis import NAMES, model_api
from headerlock.testing.wire.compare import (
    Difference,
    entry_differences,
    prefix_difference,
    short_sha,
    snippet,
    tool_at,
)


@dataclass(frozen=True, slots=True)
class PrefixBreak:
    """Where the cacheable prefix of B first differs from A's.

    ``number`` is the 1-based request; ``segment`` is ``tools``, ``system`` or
    ``None`` when only the hashes tell (an unpinned recording); ``offset`` is
    the first differing byte of the prefix (tools then system), ``tool`` the
    tool holding it in B (``tool_a`` in A); ``cache_reason`` is the provider
    cache's (Anthropic's ``tools_changed``, ``system_changed``); ``notes`` are
    lines that show it.
    """

    number: int
    api: str
    segment: str | None
    notes: tuple[str, ...] = ()
    tool: str | None = None
    tool_a: str | None = None
    offset: int | None = None
    cache_reason: str | None = None

    def headline(self) -> str:
        """One line: request, segment, byte, tool and cache reason."""
        parts = [f"request {self.number} ({self.api})"]
        if self.segment is not None:
            parts.append(f"segment {self.segment}")
        if self.offset is not None:
            parts.append(f"byte {self.offset}")
        if self.tool_a is not None and self.tool is not None and self.tool_a != self.tool:
            parts.append(f"tool {self.tool_a} in A, {self.tool} in B")
        elif self.tool is not None or self.tool_a is not None:
            parts.append(f"tool {self.tool or self.tool_a}")
        line = ", ".join(parts)
        if self.cache_reason is not None:
            line += f"; {model_api(self.api).provider} cache: {self.cache_reason}"
        return line


def _pinned_break(number: int, a: WireEntry, b: WireEntry) -> PrefixBreak:
    assert a.prefix is not None and b.prefix is not None
    model = model_api(b.api)
    found = prefix_difference(number, model, a, b)
    offset = found.offset or 0
    in_tools = a.prefix.tools != b.prefix.tools
    notes = [f"A {snippet(a.prefix.raw, offset)}", f"B {snippet(b.prefix.raw, offset)}"]
    if "the same data in other bytes" in found.detail:
        notes.append("the same data in other bytes (JSON key order or spacing)")
    return PrefixBreak(
        number,
        b.api,
        "tools" if in_tools else "system",
        tuple(notes),
        tool=found.tool,
        tool_a=tool_at(model, a.prefix.tools.encode(), offset)[0] if in_tools else None,
        offset=found.offset,
        cache_reason=found.cache_reason,
    )


def _hashed_break(number: int, a: WireEntry, b: WireEntry) -> PrefixBreak:
    """Only the hashes (an unpinned side): name the segment when the tool names tell."""
    shas = f"prefix_sha256 {short_sha(a.prefix_sha256)} -> {short_sha(b.prefix_sha256)}"
    change = compare_tool_names(a.tool_names, b.tool_names)
    if not change.same_set or (a.tools is None) != (b.tools is None):
        note = f"{shas}; tools {'; '.join(change.membership()) or 'added or removed'}"
        reason = model_api(b.api).cache_reason("tools")
        tool = change.first_changed
        return PrefixBreak(number, b.api, "tools", (note,), tool=tool, cache_reason=reason)
    notes = (
        shas,
        "an unpinned recording keeps only the hash: the same tool names, so a reorder, a"
        " schema or a system change; pin it (pin=True, @pytest.mark.headerlock_pin) to see"
        " the byte",
    )
    return PrefixBreak(number, b.api, None, notes)


def prefix_break(a: WireRecording, b: WireRecording) -> PrefixBreak | None:
    """The first request whose cacheable prefix differs; ``None`` when none does."""
    for number, (x, y) in enumerate(zip(a.requests, b.requests, strict=False), 1):
        if x.api != y.api:
            note = f"the api differs: {x.api} in A, {y.api} in B (another prefix altogether)"
            return PrefixBreak(number, y.api, None, (note,))
        if x.prefix_sha256 == y.prefix_sha256 and x.tool_names == y.tool_names:
            continue
        if x.prefix is not None and y.prefix is not None:
            return _pinned_break(number, x, y)
        return _hashed_break(number, x, y)
    return None


def _headline(found: PrefixBreak | None, a: WireRecording, b: WireRecording) -> list[str]:
    if found is None:
        both = min(len(a.requests), len(b.requests))
        noun = "request" if both == 1 else "requests"
        return [f"cacheable prefix: the same in the {both} {noun} both recordings have"]
    return [f"cacheable prefix: first differs at {found.headline()}"] + [
        f"  {note}" for note in found.notes
    ]


def _response_lines(number: int, a: WireEntry, b: WireEntry) -> list[str]:
    if a.response is None or b.response is None:
        return []
    left, right = _by_event(a.response.to_data()), _by_event(b.response.to_data())
    if left == right:
        return []
    return [f"request {number} ({b.api}) response: {'; '.join(changes(left, right, 'response'))}"]


def _by_event(response: dict[str, Any]) -> dict[str, Any]:
    """A response's data with its stream text as its lines (one per event), so a change
    is named by the event it is in (``response.stream[3]``)."""
    text = response.get(STREAM_KEY)
    return {**response, STREAM_KEY: text.splitlines()} if isinstance(text, str) else response


def differences(a: WireRecording, b: WireRecording) -> list[str]:
    """Every difference, request by request (A as recorded, B as sent), one line each."""
    lines: list[str] = []
    if a.pinned != b.pinned:
        lines.append(f"pinned: {str(a.pinned).lower()} in A, {str(b.pinned).lower()} in B")
    pinned = a.pinned and b.pinned
    for number, (x, y) in enumerate(zip(a.requests, b.requests, strict=False), 1):
        here = [d for d in entry_differences(number, x, y, pinned=pinned) if d.segment != "prefix"]
        if None not in (x.prefix_sha256, y.prefix_sha256) and x.prefix_sha256 != y.prefix_sha256:
            shas = f"prefix_sha256 {short_sha(x.prefix_sha256)} -> {short_sha(y.prefix_sha256)}"
            here.append(Difference(number, y.api, "prefix", shas))
        lines += [d.line() for d in here] + _response_lines(number, x, y)
    common = min(len(a.requests), len(b.requests))
    for side, entries in (("A", a.requests), ("B", b.requests)):
        for number, entry in enumerate(entries[common:], common + 1):
            lines.append(f"request {number} ({entry.api}) request: only in {side} ({entry.path})")
    return lines


def explain_wire(a: WireRecording, b: WireRecording, *, names: tuple[str, str] = ("A", "B")) -> str:
    """Where the cacheable prefix first differs, then every difference, then the diff."""
    left, right = a.to_text(), b.to_text()
    if left == right:
        return "wire recordings are identical"
    out = [f"A = {names[0]}", f"B = {names[1]}"]
    out += _headline(prefix_break(a, b), a, b)
    rest = differences(a, b)
    out.append("what else differs (A as recorded, B as sent):" if rest else "")
    out += [f"  {line}" for line in rest]
    out.append("")
    out += unified(left, right, names=names)
    return "\n".join(out)


def _read(path: Path) -> tuple[bool, Any] | HeaderlockError:
    """Whether the file is a wire recording, and its data; or why it cannot be read."""
    try:
        data = loads(read_text(path), path=str(path))
    except HeaderlockError as error:
        return error
    return is_wire_data(data), data


def diff_wire_files(a: Path, b: Path) -> tuple[bool, str] | None:
    """``(same, explanation)`` for two wire recordings; ``None`` when neither is one.

    A wire recording beside another kind of file is an ``InputFileError``; an
    invalid wire recording is a ``WireRecordingError`` naming the file and key.
    """
    first, second = _read(a), _read(b)
    if not any(isinstance(r, tuple) and r[0] for r in (first, second)):
        return None  # no wire recording: the scenario-recording diff (and its errors)
    if isinstance(first, HeaderlockError):
        raise first
    if isinstance(second, HeaderlockError):
        raise second
    (wire_a, data_a), (wire_b, data_b) = first, second
    if wire_a != wire_b:
        wire, other = (a, b) if wire_a else (b, a)
        raise InputFileError(
            f"{other}: not a wire recording (no `kind: wire`), but {wire} is;"
            " diff compares two recordings of one kind",
            path=str(other),
        )
    left = wire_recording_from_data(data_a, path=str(a), apis=NAMES)
    right = wire_recording_from_data(data_b, path=str(b), apis=NAMES)
    text = explain_wire(left, right, names=(a.as_posix(), b.as_posix()))
    return left.to_text() == right.to_text(), text
