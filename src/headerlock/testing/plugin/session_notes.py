"""What the session's books learn from each ``headerlock_wire`` test's lock: the pending
file a mismatching replay wrote, which ``headerlock_ignore`` ini rules matched, and the
rules that turn a header check off (``ignore.header_notice``, printed once).

The ini rules are shared by every wire test, so a rule is reported only when no test
of the whole session matched it (``Updates.summary``); a marker's own rules must match
in their test (``IgnoreRuleError``).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from headerlock.errors import ConfigError
from headerlock.formats.header_lock import LOCK_NAME
from headerlock.testing.plugin.updates import updates_of
from headerlock.testing.wire.ignore import IgnoreRules, header_notice
from headerlock.testing.wire.lock import WireLock
from headerlock.testing.wire.run import WireRun

INI: str = "headerlock_ignore"


def ignore_rules(item: pytest.Item, marker_rules: Sequence[str]) -> IgnoreRules:
    """The test's rules: its marker's (checked in the test), then the ini option's."""
    shared = list(item.config.getini(INI) or ())
    try:
        return IgnoreRules(marker_rules, shared, where=INI if not marker_rules else "ignore")
    except ConfigError as error:
        raise ConfigError(f"{item.nodeid}: {error}", key="ignore") from None


def note_session(item: pytest.Item, run: WireRun, lock: WireLock) -> None:
    """Put the lock's pending file and ini rule matches in the session's books."""
    ledger = updates_of(item.config).ledger
    if run.pending is not None:
        ledger.pending.add(str(run.pending.resolve()))
    if run.pending_lock is not None:
        ledger.pending.add(str(run.pending_lock.resolve()))
    recording = run.recording if run.mode == "replay" else None
    if recording is not None and recording.migrated_from is not None and run.path is not None:
        ledger.older_format.add(str(run.path.resolve()))
    rules = lock.ignore
    ledger.ignore_seen.update(p.text for p in rules.shared)
    ledger.ignore_matched.update(p.text for p in rules.shared if p.text in rules.matched)
    ledger.ignore_notes.update(n for n in map(header_notice, rules.paths) if n is not None)


def note_header_changes(item: pytest.Item, run: WireRun, lock: WireLock) -> None:
    """Put the header changes that failed the test in the session's books: the summary
    names each once, with every test it failed."""
    where = lock.header_lock or (None if lock.path is None else lock.path.parent / LOCK_NAME)
    shown = "the header lock" if where is None else where.as_posix()
    for difference in run.differences:
        change = difference.header
        if change is None:
            continue
        line = f"{shown}: {change.old or 'none'} -> {change.new} ({', '.join(change.segments)})"
        updates_of(item.config).ledger.header_changes.setdefault(line, set()).add(item.nodeid)
