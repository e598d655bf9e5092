"""A lock's header bookkeeping: each request's header, and how it differs from the lock.

``HeaderBook`` computes each unpinned request's header (``request_header``), keeps every
header the lock's requests carried (``headers``: shared with other locks' requests, so
read-only; what leaves the book is a copy), and explains a header that is not the
locked one once per (recorded id, sent id), however many requests carry it. ``locked``
reads the header lock a replay compares with.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from headerlock.errors import ConfigError
from headerlock.formats.file_memo import FileMemo
from headerlock.formats.header_lock import LOCK_NAME, HeaderLock, load_lock
from headerlock.formats.wire_recording import WireEntry, WireRecording
from headerlock.formats.wire_scrub import Scrubber
from headerlock.testing.wire.apis import ModelApi, Split
from headerlock.testing.wire.clients.core import SentRequest
from headerlock.testing.wire.compare import Difference, HeaderChange
from headerlock.testing.wire.header_change import explain_header
from headerlock.testing.wire.request_header import HttpRules, LockedHeader, request_header


class HeaderBook:
    """``rules``: lock each unpinned request's header (``None``: keep none); ``lock``: the
    locked headers a replay compares with, by id."""

    def __init__(self, rules: HttpRules | None, lock: Mapping[str, Mapping[str, Any]] | None):
        self.rules = rules
        self.lock = lock or {}
        self.headers: dict[str, Mapping[str, Any]] = {}
        self._changes: dict[tuple[str | None, str], HeaderChange] = {}
        self._guard = threading.Lock()

    def header(
        self, split: Split, sent: SentRequest, pinned: bool, scrubber: Scrubber
    ) -> LockedHeader | None:
        """The request's locked header (``None`` when this lock keeps none)."""
        if self.rules is None or pinned:
            return None
        found = request_header(
            split,
            path=sent.path,
            headers=sent.headers,
            query=sent.query,
            scrubber=scrubber,
            rules=self.rules,
        )
        with self._guard:
            self.headers.setdefault(found.id, found.data)
        return found

    def differs(self, recorded: WireEntry, live: WireEntry | LockedHeader | None) -> bool:
        """Whether ``live``'s header (a live entry's, or a request's ``LockedHeader``) is not
        the locked header ``recorded`` refers to."""
        sent = live.header if isinstance(live, WireEntry) else None if live is None else live.id
        if sent is None:
            return False
        return sent != recorded.header or sent not in self.lock

    def difference(
        self, number: int, recorded: WireEntry, live: WireEntry, model: ModelApi
    ) -> Difference:
        """``live``'s header (of a request of ``model``) differs from ``recorded``'s: one
        change however many requests carry it."""
        assert live.header is not None
        key = (recorded.header, live.header)
        change = self._changes.get(key)
        if change is None:
            old = None if recorded.header is None else self.lock.get(recorded.header)
            new = _copy(self.headers[live.header])
            change = explain_header(recorded.header, old, live.header, new, model=model)
            self._changes[key] = change
        detail = f"{', '.join(change.segments)} differ from the locked header"
        detail += f" ({recorded.header or 'none'} -> {live.header})"
        return Difference(number, live.api, "header", detail, header=change)

    def of(self, recording: WireRecording) -> dict[str, Mapping[str, Any]]:
        """The headers ``recording``'s requests refer to, by id."""
        ids = dict.fromkeys(e.header for e in recording.requests if e.header)
        return {i: _copy(self.headers[i]) for i in ids}


def _copy(header: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a header (JSON data: its text parses back to equal data, at C speed)."""
    copied: dict[str, Any] = json.loads(json.dumps(header, ensure_ascii=False))
    return copied


def locked(path: Path, recording: WireRecording, lock: Path | None) -> dict[str, Any] | None:
    """The locked headers a replay of ``recording`` (at ``path``) compares with; ``None``
    for a pinned one, and for one from before header locks when no ``lock`` is asked for
    (a pinned class's guard checks it); such a recording is refused otherwise."""
    if recording.pinned or not recording.requests:
        return None
    if all(e.header is None for e in recording.requests):
        if lock is None:
            return None
        raise ConfigError(
            f"{path.as_posix()}: the recording predates header locks (its requests keep no"
            " header id), so its system prompt and tools would go unchecked; re-record it",
            key="header",
        )
    where = lock or path.parent / LOCK_NAME

    def absent() -> HeaderLock:
        raise ConfigError(
            f"{path.as_posix()}: its requests refer to the header lock {where.as_posix()},"
            " which does not exist; re-record it",
            key="header",
        )

    return dict(_LOCKS.get_regular(where, lambda: load_lock(where), absent=absent).headers)


_LOCKS: FileMemo[HeaderLock] = FileMemo(size=16)
"""Header locks read by earlier locks (every test of a directory replays against one),
while their files stay the same."""
