"""The cache report of one recorded session: per request, its cacheable prefix, what it
shares with the previous request, what the provider would read from its cache, and
every cache problem found.

``cache_report(source)`` takes a ``WireRun`` (the bytes sent in this run: every
segment seen), a ``WireRecording`` or the path of one (a pinned recording keeps the
tools and system bytes; an unpinned one only the tool names, so the report names
those segments as unseen and analyses the rest). A *session* is the requests of one
model API on one model (providers cache per model; for Gemini the model is the URL
path's), in the order the lock keeps them (each task's requests together). Each request
is compared with the previous one of its session (``breaks.step``): the first request on
a model starts its session cold, no finding, and a request back on an earlier model is
compared with that model's last request. The breakpoint and length rules follow
(``breakpoints``). ``assert_cache_stable`` raises
``CacheBreakError`` listing what ``allow`` does not.

Deterministic: the report is a pure function of the bytes (no clock, no set order,
no hash), and linear in the session's size.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from headerlock.errors import CacheBreakError, ConfigError
from headerlock.formats.wire_recording import WireRecording, load_wire_recording
from headerlock.testing.wire.apis import NAMES
from headerlock.testing.wire.apis.cache_rules import CacheUsage
from headerlock.testing.wire.cache import breakpoints as rules
from headerlock.testing.wire.cache.breaks import step
from headerlock.testing.wire.cache.findings import CODES, CacheFinding
from headerlock.testing.wire.cache.prefix import Prefix, estimate_tokens, from_entry, from_request
from headerlock.testing.wire.run import WireRun

Source = WireRun | WireRecording | str | os.PathLike[str]


@dataclass(frozen=True, slots=True)
class RequestCache:
    """One request of the report.

    ``session`` is its session's 1-based number (one per API and model), ``previous``
    the number of the request it is compared with, the previous one of its session
    (``None``: the first, cold); ``prefix_bytes`` the size of its rendered prefix (the
    segments seen), ``shared_bytes`` the part it shares with ``previous``, byte for byte;
    ``predicted`` the tokens the provider's rules would read from its cache (estimated),
    ``actual`` what the recorded response says it read and wrote (``None``: nothing
    recorded); ``findings`` its problems, the first break first.
    """

    number: int
    api: str
    model: str
    session: int
    prefix_bytes: int
    shared_bytes: int
    predicted: int
    actual: CacheUsage | None
    findings: tuple[CacheFinding, ...]
    previous: int | None = None

    @property
    def prefix_tokens(self) -> int:
        """Estimated tokens of the prefix (``ceil(bytes / 4)``)."""
        return estimate_tokens(self.prefix_bytes)

    @property
    def resent_tokens(self) -> int:
        """Estimated tokens the provider processes again (the prefix minus its predicted hit)."""
        return max(0, self.prefix_tokens - self.predicted)

    @property
    def shared_percent(self) -> int:
        """The shared part of the prefix, in whole percent (rounded down)."""
        return self.shared_bytes * 100 // self.prefix_bytes if self.prefix_bytes else 0

    @property
    def first(self) -> CacheFinding | None:
        """The first finding (the break, when the prefix broke)."""
        return self.findings[0] if self.findings else None


@dataclass(frozen=True, slots=True)
class CacheReport:
    """The report of one source: its requests in order, and what it could not see.

    ``name`` names the source (its path, or ``run``); ``pinned`` is ``None`` for a
    run (its bytes are all seen); ``unseen`` lists the segments the source does not
    keep, with why in ``unseen_why``.
    """

    name: str
    pinned: bool | None
    requests: tuple[RequestCache, ...]
    unseen: tuple[str, ...] = ()
    unseen_why: str = ""

    @property
    def findings(self) -> tuple[CacheFinding, ...]:
        """Every finding, request by request."""
        return tuple(f for r in self.requests for f in r.findings)

    @property
    def stable(self) -> bool:
        """Whether nothing was found."""
        return not self.findings

    @property
    def sessions(self) -> int:
        """How many sessions the source holds."""
        return max((r.session for r in self.requests), default=0)

    def lines(self) -> list[str]:
        """The readable report (``text.report_lines``)."""
        from headerlock.testing.wire.cache.text import report_lines

        return report_lines(self)

    def to_text(self) -> str:
        """The readable report as one string (ends with a newline)."""
        return "\n".join(self.lines()) + "\n"


def _prefixes(source: Source) -> tuple[str, bool | None, list[Prefix]]:
    if isinstance(source, WireRun):
        usage = _run_usage(source)
        prefixes = [from_request(r, usage[n]) for n, r in enumerate(source.requests)]
        name = source.path.as_posix() if source.path is not None else "run"
        return name, None, prefixes
    if isinstance(source, WireRecording):
        recording, name = source, "recording"
    else:
        path = Path(source)
        recording, name = load_wire_recording(path, apis=NAMES), path.as_posix()
    prefixes = [from_entry(n, e) for n, e in enumerate(recording.requests, 1)]
    return name, recording.pinned, prefixes


def _run_usage(run: WireRun) -> list[CacheUsage | None]:
    """The usage of each request of a run, from its recording when it has the same
    requests (a recorded or replayed run), else none."""
    blank: list[CacheUsage | None] = [None] * len(run.requests)
    recording = run.recording
    if recording is None or len(recording.requests) != len(run.requests):
        return blank
    pairs = zip(run.requests, recording.requests, strict=True)
    if any(r.api != e.api or r.path != e.path for r, e in pairs):
        return blank
    return [from_entry(n, e).usage for n, e in enumerate(recording.requests, 1)]


def _sessions(prefixes: Sequence[Prefix]) -> dict[int, int]:
    """Each request's 1-based session number: one per api and model (providers cache per
    model), numbered by first request."""
    numbers: dict[tuple[str, str], int] = {}
    return {p.number: numbers.setdefault((p.api, p.model), len(numbers) + 1) for p in prefixes}


def build_report(name: str, pinned: bool | None, prefixes: Sequence[Prefix]) -> CacheReport:
    """The report of ``prefixes`` (in the source's order)."""
    session_of = _sessions(prefixes)
    last: dict[int, Prefix] = {}
    members: dict[int, list[Prefix]] = {}
    found: dict[int, list[CacheFinding]] = {p.number: [] for p in prefixes}
    measured: dict[int, tuple[int, int]] = {}
    previous: dict[int, int | None] = {}
    for prefix in prefixes:
        session = session_of[prefix.number]
        prev = last.get(session)
        shared = 0
        if prev is not None:
            moved = step(prev, prefix)
            shared = moved.shared
            if moved.found is not None:
                found[prefix.number].append(moved.found)
            late = rules.lookback(prev, prefix, shared)
            if late is not None:
                found[prefix.number].append(late)
        many = rules.too_many(prefix)
        if many is not None:
            found[prefix.number].append(many)
        measured[prefix.number] = (shared, rules.predicted(prev, prefix, shared))
        previous[prefix.number] = None if prev is None else prev.number
        last[session] = prefix
        members.setdefault(session, []).append(prefix)
    for session in sorted(members):
        short = rules.too_short(members[session])
        if short is not None:
            found[short.number].append(short)
    requests = tuple(
        RequestCache(
            p.number,
            p.api,
            p.model,
            session_of[p.number],
            p.size,
            measured[p.number][0],
            measured[p.number][1],
            p.usage,
            tuple(found[p.number]),
            previous[p.number],
        )
        for p in prefixes
    )
    unseen = next((p.unseen for p in prefixes if p.unseen), ())
    why = "an unpinned recording keeps only the tool names" if unseen else ""
    return CacheReport(name, pinned, requests, unseen, why)


def cache_report(source: Source) -> CacheReport:
    """The cache report of a ``WireRun``, a ``WireRecording`` or a wire recording's path
    (``WireRecordingError`` when the file is not one)."""
    name, pinned, prefixes = _prefixes(source)
    return build_report(name, pinned, prefixes)


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
        from headerlock.testing.wire.cache.text import break_message

        raise CacheBreakError(
            break_message(report, left),
            path=report.name,
            findings=[f.line() for f in left],
            codes=[f.code for f in left],
        )
    return report
