"""The header lock on the pytest wire path: staging a test's recording with its headers.

A recorded test's file is written once the test passed (``updates.stage``), under the
header lock's cross-process lock, and its headers added to the directory's
``headers.lock.yaml`` in the same hold (``formats.header_lock.add_to_lock``), also when
the recording's bytes did not change (the lock may lack them). A failed test writes
neither. The headers no recording refers to any more leave the lock when the session's
updates end (``Updates.finish``: ``merge_lock``, which reads every recording of the
directory once, not once per test).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from headerlock.errors import ConfigError
from headerlock.formats.header_lock import add_to_lock, exclusive, holds_all
from headerlock.formats.wire_recording import WireRecording, save_wire_recording
from headerlock.testing.plugin.session_notes import note_header_changes
from headerlock.testing.plugin.updates import stage, stage_after, updates_of
from headerlock.testing.wire.lock import WireLock, pending_line
from headerlock.testing.wire.run import WireRun


def stage_recording(item: pytest.Item, path: Path, wire_lock: WireLock) -> None:
    """Write the lock's recording to ``path``, and its headers to its header lock, once
    ``item`` passed."""
    run, lock = wire_lock.run, wire_lock.header_lock
    assert run is not None and run.recording is not None
    recording, headers = run.recording, run.headers
    text = recording.to_text()
    pruned = updates_of(item.config).header_locks
    staged = stage(item, path, text, _writer(recording, text, path, lock, headers, pruned))
    if lock is not None and not staged:  # an unchanged recording: its headers may be missing
        stage_after(item, lock, _adder(lock, headers, pruned))


def _writer(
    recording: WireRecording,
    text: str,
    path: Path,
    lock: Path | None,
    headers: Mapping[str, Mapping[str, Any]],
    pruned: set[Path],
) -> Callable[[], None]:
    def write() -> None:
        if lock is None:
            save_wire_recording(recording, path, text=text)  # atomic: old or new bytes
            return
        with exclusive(lock):  # a header lock merge sees it written with its headers, or not
            save_wire_recording(recording, path, text=text)
            add_to_lock(lock, headers)
        pruned.add(lock)  # only once a write succeeded: a failed update prunes nothing

    return write


def _adder(
    lock: Path, headers: Mapping[str, Mapping[str, Any]], pruned: set[Path]
) -> Callable[[], None]:
    def add() -> None:
        pruned.add(lock)  # its test passed, its recording on disk keeps its headers
        if holds_all(lock, headers):  # no lock taken
            return
        with exclusive(lock):
            add_to_lock(lock, headers)

    return add


def header_notes(item: pytest.Item, run: WireRun, lock: WireLock) -> list[str]:
    """Note the test's header changes for the summary; the lines a mismatch adds about its
    pending files (the recording's, or why none was written; the header lock's)."""
    note_header_changes(item, run, lock)
    lines = [] if run.pending is None else [pending_line(run.pending)]
    if run.pending is None and lock.unpended is not None:
        lines.append(lock.unpended)
    if run.pending_lock is not None:
        lines.append(
            f"pending: {run.pending_lock.as_posix()} holds the new header once (accept it"
            " with the recordings: headerlock review)"
        )
    return lines


def predates(error: ConfigError, command: str) -> ConfigError:
    """A recording from before header locks, and the command that adds them."""
    text = str(error).removesuffix("; re-record it")
    return ConfigError(f"{text}; add them with: {command}", key="header")
