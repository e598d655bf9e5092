"""The cache report of one recorded session: per request, the request it continues, its
cacheable prefix, what it shares with that request, what the provider would read from
its cache, and every cache problem found.

``cache_report(source)`` takes a ``WireRun`` (the bytes sent in this run: every
segment seen), a ``WireRecording`` or the path of one (a pinned recording keeps the
tools and system bytes; an unpinned one refers to its headers in the header lock beside
its path, ``lock_headers``, which hold its model, cache-keying config, system and
tools; where no header is found, the report names tools and system as unseen, in one
line saying why, and analyses the rest). Requests are numbered as the
recording numbers them: a run's requests are matched to its recording's entries by
content, so a record run reports the numbers of the recording it writes, and the
recorded usage lands on the request that received it.

The report simulates the provider's cache (``simulate``): each request reads the
longest prefix it shares with any earlier request of its API, model and cache-keying
config (where the API caches at breakpoints, only what an earlier request wrote). Its
*lineage* is the request it continues (its messages extend that one's); a break is
where it reads less than that request should have given it: the prefix diff against it
(``breaks.step``) names the segment, byte and code, a model switch inside a lineage
included (``config-changed``). A request that continues nothing starts its own lineage,
cold or warm (a sibling agent wrote the same tools and system first): no finding. The
tool calls it sends back are compared with the recorded response that made them
(``turns``): other bytes are a ``history-rewritten``. The breakpoint and length rules
follow (``breakpoints``). ``assert_cache_stable`` raises ``CacheBreakError`` listing
what ``allow`` does not.

Deterministic: the report is a pure function of the bytes (no clock, no set order, no
hash seed), and its time per request does not grow with the recording (a prefix index).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from headerlock.errors import CacheBreakError, ConfigError
from headerlock.formats.header_lock import load_lock, lock_path
from headerlock.formats.wire_recording import WireEntry, WireRecording, load_wire_recording
from headerlock.runtime.canonical import canonical_json
from headerlock.testing.wire.apis import NAMES, model_api
from headerlock.testing.wire.cache import breakpoints as rules, findings as codes
from headerlock.testing.wire.cache.breaks import step
from headerlock.testing.wire.cache.findings import CODES, CacheFinding
from headerlock.testing.wire.cache.model import ReportData, RequestCache
from headerlock.testing.wire.cache.prefix import LOCK_RENDERING, Prefix, from_entry, from_request
from headerlock.testing.wire.cache.simulate import Continues, Lineages, PrefixIndex
from headerlock.testing.wire.cache.text import break_message, report_lines
from headerlock.testing.wire.cache.turns import reserialized
from headerlock.testing.wire.compare import snippet
from headerlock.testing.wire.conversations import RunRequest
from headerlock.testing.wire.run import WireRequest, WireRun

Source = WireRun | WireRecording | str | os.PathLike[str]
Headers = Mapping[str, Mapping[str, Any]]
UNPINNED: Final = "an unpinned recording keeps only the tool names"


class CacheReport(ReportData):
    """The report of one source (``ReportData``), readable as text."""

    __slots__ = ()

    @property
    def sessions(self) -> int:
        """How many conversations the source holds (``lineages``)."""
        return self.lineages

    def lines(self) -> list[str]:
        """The readable report (``text.report_lines``)."""
        return report_lines(self)

    def to_text(self) -> str:
        """The readable report as one string (ends with a newline)."""
        return "\n".join(self.lines()) + "\n"


def entry_prefixes(recording: WireRecording, headers: Headers | None = None) -> list[Prefix]:
    """The prefix of each entry of a recording, numbered in its order (``from_entry``:
    the one place an entry's header is read), with the locked headers it refers to."""
    found = headers or {}
    return [
        from_entry(n, e, found.get(e.header) if e.header is not None else None)
        for n, e in enumerate(recording.requests, 1)
    ]


def _referenced(recording: WireRecording) -> list[str]:
    return [e.header for e in recording.requests if e.header is not None and e.prefix is None]


def lock_headers(path: Path, recording: WireRecording) -> tuple[Headers, str]:
    """The headers the entries of ``recording`` (read from ``path``) refer to, from the
    header lock beside it, and one line saying why some are not found ("" when none is
    missing). A lock that is no header lock is a ``WireRecordingError`` naming it."""
    ids = _referenced(recording)
    if not ids:
        return {}, ""
    where = lock_path(path.parent)
    if not where.is_file():
        return {}, f"its header lock {where.as_posix()} is missing"
    headers = load_lock(where).headers
    missing = next((i for i in ids if i not in headers), None)
    note = "" if missing is None else f"header {missing} is not in {where.as_posix()}"
    return headers, note


def recording_report(path: Path, recording: WireRecording) -> CacheReport:
    """The report of ``recording`` read from ``path``, its headers from the lock beside it."""
    headers, note = lock_headers(path, recording)
    prefixes = entry_prefixes(recording, headers)
    resolved = any(e.header in headers for e in recording.requests if e.prefix is None)
    return build_report(
        path.as_posix(), recording.pinned, prefixes, note, LOCK_RENDERING if resolved else ""
    )


def _key(data: dict[str, object]) -> str:
    return canonical_json({"api": data.get("api"), "messages": data.get("messages")})


def _matched(run: WireRun) -> list[WireEntry | None]:
    """Each run request's recording entry, by content (the same api and messages, ids
    numbered within each); identical ones in order. All ``None`` when the run has no
    recording or some request has no entry."""
    blank: list[WireEntry | None] = [None] * len(run.requests)
    recording = run.recording
    if recording is None:
        return blank
    queues: dict[str, list[int]] = {}
    for index, entry in enumerate(recording.requests):
        queues.setdefault(_key(entry.request_data()), []).append(index)
    found: list[WireEntry | None] = []
    for request in run.requests:
        queue = queues.get(_key(RunRequest(request).request_data()))
        if not queue:
            return blank
        found.append(recording.requests[queue.pop(0)])
    return found


def run_prefixes(run: WireRun) -> list[Prefix]:
    """The prefixes of a run's requests (every byte seen), numbered and ordered as its
    recording numbers them, each with its recorded response where the recording has it."""
    entries = _matched(run)
    recording = run.recording
    if recording is None or any(e is None for e in entries):
        return [from_request(r) for r in run.requests]
    position = {id(e): n for n, e in enumerate(recording.requests, 1)}
    pairs: list[tuple[int, WireRequest, WireEntry]] = [
        (position[id(e)], r, e) for r, e in zip(run.requests, entries, strict=True) if e
    ]
    pairs.sort(key=lambda p: p[0])
    return [from_request(r, e.response, number) for number, r, e in pairs]


def _arguments(prefix: Prefix, parent: Prefix, continued: Continues) -> CacheFinding | None:
    """A tool call of the turn ``prefix`` sends back after ``parent``'s messages, in other
    bytes than ``parent``'s recorded response emitted it."""
    if parent.turn is None or continued.sent is None:
        return None
    found = reserialized(parent.turn, continued.sent)
    if found is None:
        return None
    _, call, how = found
    index = continued.kept
    start = sum(len(i.raw) for i in prefix.items if i.segment != "messages")
    start += sum(len(i.raw) for i in prefix.segment("messages")[:index])
    detail = (
        f"tool call {call.name}: the arguments are sent back as {how}; keep the string the"
        " model emitted"
    )
    item = prefix.segment("messages")[index]
    return CacheFinding(
        prefix.number, prefix.api, codes.HISTORY_REWRITTEN, "messages", detail, index,
        call.name, start, None, snippet(item.raw, 0),
    )  # fmt: skip


def _diagnosed(prefix: Prefix, found: list[CacheFinding]) -> list[CacheFinding]:
    """The findings with the provider's recorded ``cache_miss_reason`` checked against the
    first (agrees when it names the same segment)."""
    reason = None if prefix.usage is None else prefix.usage.miss_reason
    if reason is None or not found:
        return found
    segment = dict(model_api(prefix.api).cache.miss_reasons).get(reason)
    verdict = "agrees" if segment == found[0].segment else f"names the {segment or reason}"
    said = f"recorded cache_miss_reason {reason}: {verdict}"
    return [replace(found[0], provider=said), *found[1:]]


def build_report(
    name: str,
    pinned: bool | None,
    prefixes: Sequence[Prefix],
    note: str = "",
    approximated: str = "",
) -> CacheReport:
    """The report of ``prefixes`` (in the recording's order); ``note`` says why segments
    are unseen (default: ``UNPINNED``), ``approximated`` what is rendered, not sent."""
    lineages, index = Lineages(), PrefixIndex()
    lineage_of: dict[int, int] = {}
    members: dict[int, list[Prefix]] = {}
    by_number = {p.number: p for p in prefixes}
    rows: list[RequestCache] = []
    for prefix in prefixes:
        continued = lineages.of(prefix)
        read = index.read(prefix)
        found: list[CacheFinding] = []
        shared = 0
        parent = by_number.get(continued.parent) if continued.parent is not None else None
        if parent is not None:
            moved = step(parent, prefix)
            shared = moved.shared
            if moved.found is not None:
                found.append(moved.found)
            elif not continued.forked:
                args = _arguments(prefix, parent, continued)
                if args is not None:
                    found.append(args)
            late = rules.lookback(parent, prefix, shared)
            if late is not None:
                found.append(late)
            lineage = lineage_of[parent.number]
        else:
            lineage = len(members) + 1
        for check in (rules.too_many, rules.no_breakpoint):
            extra = check(prefix)
            if extra is not None:
                found.append(extra)
        lineage_of[prefix.number] = lineage
        members.setdefault(lineage, []).append(prefix)
        warm = read.source if parent is None and read.predicted else None
        rows.append(
            RequestCache(
                prefix.number,
                prefix.api,
                prefix.model,
                lineage,
                prefix.size,
                shared,
                read.predicted,
                prefix.usage,
                tuple(_diagnosed(prefix, found)),
                continued.parent,
                warm,
            )
        )
        lineages.add(prefix)
        index.add(prefix)
    short = [rules.too_short(members[n]) for n in sorted(members)]
    extra_by = {f.number: f for f in short if f is not None}
    requests = tuple(_with(r, extra_by[r.number]) if r.number in extra_by else r for r in rows)
    unseen = next((p.unseen for p in prefixes if p.unseen), ())
    why = (note or UNPINNED) if unseen else ""
    return CacheReport(name, pinned, requests, unseen, why, approximated)


def _with(row: RequestCache, finding: CacheFinding) -> RequestCache:
    return replace(row, findings=(*row.findings, finding))


def cache_report(source: Source) -> CacheReport:
    """The cache report of a ``WireRun``, a ``WireRecording`` or a wire recording's path
    (``WireRecordingError`` when the file is not one)."""
    if isinstance(source, WireRun):
        name = source.path.as_posix() if source.path is not None else "run"
        return build_report(name, None, run_prefixes(source))
    if isinstance(source, WireRecording):
        note = "the header lock is read beside a recording's path" if _referenced(source) else ""
        return build_report("recording", source.pinned, entry_prefixes(source), note)
    path = Path(source)
    return recording_report(path, load_wire_recording(path, apis=NAMES))


def check_codes(allow: Iterable[str]) -> tuple[str, ...]:
    """``allow`` as a tuple; ``ConfigError`` naming an unknown code."""
    allowed = (allow,) if isinstance(allow, str) else tuple(allow)
    unknown = [code for code in allowed if code not in CODES]
    if unknown:
        raise ConfigError(
            f"unknown cache finding code {unknown[0]!r}; expected one of {', '.join(CODES)}",
            key="allow",
        )
    return allowed


def assert_cache_stable(source: Source, allow: Iterable[str] = ()) -> CacheReport:
    """The report of ``source`` when it has no finding but those whose code is in
    ``allow``; else ``CacheBreakError`` (an ``AssertionError``) listing the others with
    their request, segment and cause."""
    __tracebackhide__ = True
    allowed = check_codes(allow)
    report = cache_report(source)
    left = [f for f in report.findings if f.code not in allowed]
    if left:
        raise CacheBreakError(
            break_message(report, left),
            path=report.name,
            findings=[f.line() for f in left],
            codes=[f.code for f in left],
        )
    return report
