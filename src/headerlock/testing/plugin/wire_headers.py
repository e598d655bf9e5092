"""The header lock on the pytest wire path: staging a test's recording with its headers.

A recorded test's file is written once the test passed (``updates.stage``), under the
header lock's cross-process lock; then its headers are merged into the directory's
``headers.lock.yaml`` (``formats.header_lock.merge_lock``), also when the recording's
bytes did not change (the lock may lack them). A failed test writes neither.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from headerlock.errors import ConfigError
from headerlock.formats.header_lock import exclusive, merge_lock
from headerlock.formats.wire_recording import WireRecording, save_wire_recording
from headerlock.testing.plugin.session_notes import note_header_changes
from headerlock.testing.plugin.updates import stage, stage_after
from headerlock.testing.wire.lock import WireLock, pending_line
from headerlock.testing.wire.run import WireRun


def stage_recording(item: pytest.Item, path: Path, wire_lock: WireLock) -> None:
    """Write the lock's recording to ``path``, and its headers to its header lock, once
    ``item`` passed."""
    run, lock = wire_lock.run, wire_lock.header_lock
    assert run is not None and run.recording is not None
    recording, headers = run.recording, run.headers
    stage(item, path, recording.to_text(), _writer(recording, path, lock))
    if lock is not None:
        stage_after(item, lock, _merger(lock, headers))


def _writer(recording: WireRecording, path: Path, lock: Path | None) -> Callable[[], None]:
    def write() -> None:
        if lock is None:
            save_wire_recording(recording, path)  # atomic: a reader sees old or new bytes
            return
        with exclusive(lock):  # a header lock merge sees it written or not
            save_wire_recording(recording, path)

    return write


def _merger(lock: Path, headers: Mapping[str, Mapping[str, Any]]) -> Callable[[], None]:
    def merge() -> None:
        with exclusive(lock):
            merge_lock(lock, headers)

    return merge


def header_notes(item: pytest.Item, run: WireRun, lock: WireLock) -> list[str]:
    """Note the test's header changes for the summary; the lines a mismatch adds about its
    pending files (the recording's, the header lock's)."""
    note_header_changes(item, run, lock)
    lines = [] if run.pending is None else [pending_line(run.pending)]
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
