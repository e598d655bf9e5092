"""Volatile text: values that change every request (dates, times, ids, counters) found
where two prefixes part.

A prefix break is *volatile content* when the text covering the first differing byte
is, in both requests, the same kind of changing value: an ISO date-time, a date, a
time of day, a UUID, a long hex id, or (in text, not in a JSON schema) a counter.
Only what differs is judged: a fixed date in a system prompt that never changes is no
problem, and is never reported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

_WINDOW: Final = 48
"""Bytes searched on each side of the differing byte."""

KINDS: Final[tuple[tuple[str, re.Pattern[bytes]], ...]] = (
    (
        "uuid",
        re.compile(rb"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"),
    ),
    (
        "date-time",
        re.compile(
            rb"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
        ),
    ),
    ("date", re.compile(rb"\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4}")),
    ("time", re.compile(rb"\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?")),
    ("hex id", re.compile(rb"(?<![0-9A-Za-z])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{16,}")),
    ("counter", re.compile(rb"(?<![0-9A-Za-z.])\d+(?![0-9A-Za-z])")),
)
"""The kinds of volatile value, most specific first."""

TEXT_ONLY: Final = ("counter",)
"""Kinds judged only in text (the system, messages): in a schema a changed number is a
changed schema."""


@dataclass(frozen=True, slots=True)
class Volatile:
    """The changing value at a break: its kind and its text in each request."""

    kind: str
    before: str
    after: str

    def describe(self) -> str:
        """``date-time `2026-01-01T10:15` -> `2026-01-01T10:16```."""
        return f"{self.kind} `{self.before}` -> `{self.after}`"


def _covering(raw: bytes, offset: int, pattern: re.Pattern[bytes]) -> re.Match[bytes] | None:
    start = max(0, offset - _WINDOW)
    for match in pattern.finditer(raw, start, offset + _WINDOW):
        if match.start() <= offset < match.end() or (match.end() == offset and offset):
            return match
    return None


def volatile_at(before: bytes, after: bytes, offset: int, *, text: bool) -> Volatile | None:
    """The volatile value covering ``offset`` in both ``before`` and ``after`` (the same
    kind in each, different text), or ``None``. ``text`` allows counters."""
    for kind, pattern in KINDS:
        if kind in TEXT_ONLY and not text:
            continue
        old, new = _covering(before, offset, pattern), _covering(after, offset, pattern)
        if old is None or new is None or old.group() == new.group():
            continue
        if old.start() != new.start():
            continue
        return Volatile(kind, _text(old.group()), _text(new.group()))
    return None


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")
