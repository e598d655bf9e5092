"""Pending files of scenario replays (``headerlock.formats.pending``).

A scenario replay serves the recorded model output in order, so a run that differs
still holds the whole session: its normalized recording becomes
``recordings/<name>.yaml.new`` (the recording is never touched), and the mismatch
says so. A matching replay removes a stale one.
"""

from __future__ import annotations

from pathlib import Path

from headerlock.errors import OutputFileError, ReplayMismatch
from headerlock.formats.pending import remove_pending, write_pending
from headerlock.formats.recording import Recording


def pend(path: Path, actual: Recording, error: ReplayMismatch) -> ReplayMismatch:
    """Write ``actual`` as the pending file of ``path``; ``error`` naming it."""
    try:
        written = write_pending(path, actual.to_text())
    except OutputFileError as failure:
        note = f"(no pending file: {failure})"
    else:
        note = (
            f"pending: {written.as_posix()} holds the recording this run would make; accept"
            " or reject it with: headerlock review"
        )
    found = ReplayMismatch(f"{error}\n{note}", scenario=error.scenario)
    found.__cause__ = error.__cause__
    return found


def clear(path: Path) -> None:
    """A matching replay: remove a stale pending file of ``path``."""
    remove_pending(path)
