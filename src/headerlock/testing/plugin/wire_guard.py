"""The guard of a pinned header class on the pytest wire path.

After an unpinned ``headerlock_wire`` test of a pinned class ran (replay or record),
every request it sent must carry one of the pin's headers after restore (its
recording's ``<<system>>`` and ``<<tools>>`` stand for the pin's): the same api with
the same system and tools as one of the requests the pin recorded (config is the
test's own replay's to compare). A pinned recording keeps them as sent, and the guard
reads them from the pin's file, so xdist workers share nothing in memory. A miss names
the test, the request, the segment (and the tool) and how the closest pinned header
differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from headerlock.errors import HeaderlockError, WireRecordingError
from headerlock.formats.explain import changed_paths
from headerlock.formats.tool_sets import compare_tool_names
from headerlock.formats.wire_recording import load_wire_recording
from headerlock.formats.wire_scrub import Scrubber
from headerlock.runtime.canonical import canonical_json
from headerlock.testing.wire.apis import model_api
from headerlock.testing.wire.compare import same

if TYPE_CHECKING:
    from headerlock.testing.wire.run import WireRequest

MAX_MISSES: Final = 5
MAX_LINES: Final = 6
ORDER_HINT: Final = (
    "an order flake? find it with `headerlock flakes` and check the agent with"
    " headerlock.wire.assert_order_invariant"
)


@dataclass(frozen=True, slots=True)
class PinnedHeader:
    """One distinct header the pin sent: the api, system and tools of its request ``number``."""

    number: int
    api: str
    system: Any
    tools: Any


@dataclass(frozen=True, slots=True)
class Unguarded:
    """Why the guard cannot check (the pin has no usable recording): for the summary."""

    why: str


@dataclass(frozen=True, slots=True)
class Pin:
    """The class's pin as the guard names it: node id, recording, re-record command."""

    nodeid: str
    path: Path
    command: str


_read: dict[Path, tuple[tuple[int, int, int], tuple[PinnedHeader, ...] | Unguarded]] = {}
"""The pins' headers read so far, with the file's identity when read (a class's tests
read their pin's file once while it stays the same)."""


def pinned_headers(pin: Pin) -> tuple[PinnedHeader, ...] | Unguarded:
    """The distinct headers in the pin's recording, or why there are none to check against."""
    try:
        info = pin.path.stat()
    except OSError:
        return Unguarded(
            f"its pin {pin.nodeid} has no recording yet ({pin.path.as_posix()}); record it:"
            f" {pin.command}"
        )
    identity = (info.st_ino, info.st_size, info.st_mtime_ns)
    key = pin.path.resolve()
    known = _read.get(key)
    if known is None or known[0] != identity:
        known = _read[key] = (identity, _headers(pin))
    return known[1]


def _headers(pin: Pin) -> tuple[PinnedHeader, ...] | Unguarded:
    shown = pin.path.as_posix()
    try:
        recording = load_wire_recording(pin.path)
    except WireRecordingError as error:
        return Unguarded(f"its pin's recording cannot be read: {error}")
    if not recording.pinned:
        return Unguarded(f"its pin's recording {shown} is not pinned; re-record it: {pin.command}")
    found: dict[str, PinnedHeader] = {}
    for number, entry in enumerate(recording.requests, 1):
        key = canonical_json([entry.api, entry.system, entry.tools])
        found.setdefault(key, PinnedHeader(number, entry.api, entry.system, entry.tools))
    if not found:
        return Unguarded(f"its pin's recording {shown} holds no model request")
    return tuple(found.values())


def guard_failure(
    nodeid: str,
    header_class: str,
    pin: Pin,
    requests: Sequence[WireRequest],
    headers: Sequence[PinnedHeader],
    scrubber: Scrubber,
) -> str | None:
    """The message when a request of ``requests`` carries none of ``headers``, else ``None``."""
    misses = [(r.number, lines) for r in requests if (lines := _miss(r, headers, scrubber))]
    if not misses:
        return None
    what = (
        f"request {misses[0][0]} of {len(requests)} does not"
        if len(misses) == 1
        else f"{len(misses)} of its {len(requests)} requests do not"
    )
    out = [
        f"{nodeid}: {what} carry a pinned header of header class {header_class!r} after"
        f" restore (pin: {pin.nodeid}, {pin.path.as_posix()}):"
    ]
    for _, lines in misses[:MAX_MISSES]:
        out += [f"  {line}" for line in lines]
    if len(misses) > MAX_MISSES:
        out.append(f"  ... and {len(misses) - MAX_MISSES} more requests")
    out.append(
        f"If the change is intended, re-record the pin: {pin.command}; a test that sends"
        ' another header belongs to another class: @pytest.mark.headerlock_wire(header_class="...")'
    )
    return "\n".join(out)


def _miss(request: WireRequest, headers: Sequence[PinnedHeader], scrubber: Scrubber) -> list[str]:
    """Nothing when ``request`` carries one of ``headers``; else how the closest differs."""
    system = scrubber.data(request.header.system)
    tools = scrubber.data(request.header.tools)
    head = f"request {request.number} ({request.api})"
    candidates = [h for h in headers if h.api == request.api]
    if not candidates:
        sent = ", ".join(sorted({h.api for h in headers}))
        return [f"{head}: the pin sent no {request.api} request (it sent {sent})"]
    best: list[str] | None = None
    for header in candidates:
        lines = _system_lines(head, request.api, header, system)
        lines += _tools_lines(head, request.api, header, tools)
        if not lines:
            return []
        if best is None or _weight(lines) < _weight(best):
            best = lines
    assert best is not None
    return best


def _weight(lines: Sequence[str]) -> int:
    return sum(1 for line in lines if not line.startswith(" "))


def _system_lines(head: str, api: str, pin: PinnedHeader, sent: Any) -> list[str]:
    if same(pin.system, sent):
        return []
    where = f"{head} system: differs from the pin's request {pin.number}"
    if pin.system is None or sent is None:
        has = "no system prompt" if pin.system is None else "a system prompt"
        return [f"{where}: the pin has {has}, this test sends {'none' if sent is None else 'one'}"]
    text = model_api(api).system_text
    old, new = text(pin.system), text(sent)
    detail = [_text_change(old, new)] if old != new else []
    detail = detail or changed_paths({"system": pin.system}, {"system": sent})
    return [f"{where} (pin -> this test):", *_indented(detail)]


def _text_change(old: str, new: str) -> str:
    a, b = old.splitlines() or [""], new.splitlines() or [""]
    n = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    was = repr(a[n]) if n < len(a) else "(no line)"
    now = repr(b[n]) if n < len(b) else "(no line)"
    return f"line {n + 1}: {_short(was)} -> {_short(now)}"


def _short(text: str) -> str:
    return text if len(text) <= 100 else f"{text[:97]}..."


def _tools_lines(head: str, api: str, pin: PinnedHeader, sent: Any) -> list[str]:
    if same(pin.tools, sent):
        return []
    where = f"{head} tools"
    number = pin.number
    if pin.tools is None or sent is None:
        has = "no tools" if pin.tools is None else "tools"
        now = "none" if sent is None else "some"
        return [f"{where}: the pin's request {number} has {has}, this test sends {now}"]
    old, new = _by_name(api, pin.tools), _by_name(api, sent)
    if old is None or new is None:
        detail = changed_paths({"tools": pin.tools}, {"tools": sent})
        title = f"{where}: differ from the pin's request {number} (pin -> this test):"
        return [title, *_indented(detail)]
    change = compare_tool_names(list(old), list(new))
    lines = [
        f"{where}, tool {n}: missing (the pin's request {number} has it)" for n in change.removed
    ]
    lines += [f"{where}, tool {n}: not in the pin's request {number}" for n in change.added]
    for name in (n for n in change.after if not same(old[n], new[n])):
        lines.append(
            f"{where}, tool {name}: differs from the pin's request {number} (pin -> this test):"
        )
        lines += _indented(changed_paths({name: old[name]}, {name: new[name]}))
    if not lines:
        lines.append(
            f"{where}: the same tools in another order than the pin's request {number}:"
            f" {change.order()} ({ORDER_HINT})"
        )
    return lines


def _by_name(api: str, tools: Any) -> dict[str, Any] | None:
    """``tools`` keyed by name in the order sent; ``None`` when names repeat."""
    try:
        found = model_api(api)
        listed = found.tools_of(tools)
    except HeaderlockError:
        return None
    named = {found.tool_name(tool): tool for tool in listed}
    return named if len(named) == len(listed) else None


def _indented(lines: Sequence[str]) -> list[str]:
    shown = [f"    {line}" for line in lines[:MAX_LINES]]
    if len(lines) > MAX_LINES:
        shown.append(f"    ... and {len(lines) - MAX_LINES} more")
    return shown
