"""What the session's books say at the end of a run: recordings written, matched,
pending, kept, unused and removed, header changes and unmatched ignore rules."""

from __future__ import annotations

from collections.abc import Callable

from headerlock.testing.plugin.ledger import Ledger
from headerlock.testing.plugin.updates import Updates, shown_path


def books_lines(books: Updates) -> list[str]:
    """What the books say at the end (each line shown after ``headerlock:``); nothing
    in a project that has no recordings and used none."""
    ledger = books.ledger
    lines: list[str] = []
    if not (ledger.claims or books.unused or books.recordings.is_dir()):
        return lines
    if ledger.written or (books.update and ledger.unchanged):
        lines.append(
            f"{_count(len(ledger.written), 'recording')} written, {len(ledger.unchanged)} unchanged"
        )
        lines += named_paths(ledger, shown_path)
    if ledger.matched and not books.update:
        lines.append(f"{_count(len(ledger.matched), 'recording')} matched")
    if ledger.pending:
        lines.append(
            f"{_count(len(ledger.pending), 'pending change')}"
            f" ({capped(sorted(shown_path(p) for p in ledger.pending))});"
            " accept or reject with: headerlock review"
        )
    lines += sorted(ledger.ignore_notes)
    if ledger.older_format:
        lines.append(
            f"{_count(len(ledger.older_format), 'recording')} in an older format version"
            f" replayed ({capped(sorted(shown_path(p) for p in ledger.older_format))});"
            " update them with: headerlock migrate"
        )
    for change, nodeids in sorted(ledger.header_changes.items()):
        tests = sorted(nodeids)
        lines.append(
            f"header changed: {change}: {_count(len(tests), 'test')} ({capped(tests)});"
            f" accept it: headerlock review (or pytest --snapshot-update {' '.join(tests)})"
        )
    unmatched = sorted(ledger.ignore_seen - ledger.ignore_matched)
    if unmatched:
        lines.append(
            f"headerlock_ignore: {', '.join(map(repr, unmatched))} matched no request of"
            " this session (a misspelled path ignores nothing)"
        )
    kept = sorted(ledger.kept.items())
    for key, nodeid in kept[:SHOWN_PATHS]:
        lines.append(f"kept {shown_path(key)}: {nodeid} failed, so it was not updated")
    if len(kept) > SHOWN_PATHS:
        lines.append(
            f"and {len(kept) - SHOWN_PATHS} more kept: their tests failed, so they were not updated"
        )
    shown = capped([shown_path(p) for p in books.unused])
    unused = _count(len(books.unused), "unused recording")
    if books.removed:
        removed = capped([shown_path(p) for p in books.removed])
        lines.append(f"removed {_count(len(books.removed), 'unused recording')}: {removed}")
    elif books.update and books.problem is not None:
        what = f"{unused} kept ({shown})" if books.unused else "no unused recording removed"
        lines.append(f"{what}: {books.problem}")
    elif books.unused and not books.update:
        lines.append(f"{unused}: {shown}; remove with: pytest --snapshot-update")
    if books.update and books.problem is None and books.partial:
        lines.append(
            "unused recordings are removed only where every test of a file (every"
            " fixture) ran; this run left some out"
        )
    if books.fresh:
        fresh = capped([shown_path(p) for p in books.fresh])
        lines.append(
            f"kept {_count(len(books.fresh), 'recording')} written after this session"
            f" started (another session's?): {fresh}"
        )
    lines.extend(f"could not remove {error}" for error in books.remove_errors)
    return lines


SHOWN_PATHS = 10
"""How many paths a summary line names before it says how many more."""


def capped(paths: list[str], most: int = SHOWN_PATHS) -> str:
    """``paths`` joined, at most ``most`` of them, then ``and N more``."""
    shown = ", ".join(paths[:most])
    return shown + (f", and {len(paths) - most} more" if len(paths) > most else "")


def named_paths(ledger: Ledger, shown: Callable[[str], str]) -> list[str]:
    """The lines naming the recordings written: new ones, changed ones."""
    lines = []
    changed = sorted(shown(k) for k in ledger.written & ledger.changed)
    new = sorted(shown(k) for k in ledger.written - ledger.changed)
    if new:
        lines.append(f"  new: {capped(new)}")
    if changed:
        lines.append(f"  changed: {capped(changed)}")
    return lines


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
