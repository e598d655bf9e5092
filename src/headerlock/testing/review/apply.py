"""One pending change: its readable diff, and accepting or rejecting it.

Accepting validates the pending text as the recording kind it claims (a wire
recording, or a scenario recording) and refuses, writing nothing: a stale one (its
recording changed since the pending file was written: ``StalePendingError``), a
partial one (its session stopped early: the recording could never pass) and a
scenario fixture's recording that fails the guard ``headerlock record`` runs (the
fixture replayed with the pending model output, its headers checked against its
class's pin) (both ``RefusedPendingError``). Then it writes the recording
atomically, as an update does (a reader sees the old bytes or the new ones), and
only then removes the pending file. Rejecting removes the pending file only.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from headerlock.errors import (
    HeaderlockError,
    InputFileError,
    PinError,
    RefusedPendingError,
    StalePendingError,
)
from headerlock.formats.explain import explain
from headerlock.formats.header_lock import (
    HeaderLock,
    exclusive,
    is_lock_data,
    load_lock_or_empty,
    lock_path,
    parse_lock,
    prune_lock,
    save_lock,
)
from headerlock.formats.pending import Pending, read_pending
from headerlock.formats.recording import Recording, parse_recording, write_recording_text
from headerlock.formats.strict_yaml import loads
from headerlock.formats.wire_recording import (
    WireRecording,
    is_wire_data,
    load_wire_recording,
    parse_wire_recording,
    save_wire_recording,
)
from headerlock.formats.write_lock import recording_lock
from headerlock.testing.wire.apis import NAMES
from headerlock.testing.wire.explain import explain_wire

if TYPE_CHECKING:
    from headerlock.testing.scenario.project import Project


@dataclass(frozen=True, slots=True)
class Change:
    """A pending file read and validated: the new recording it holds."""

    pending: Pending
    new: WireRecording | Recording | HeaderLock

    @property
    def kind(self) -> str:
        """``wire``, ``header lock`` or ``scenario``."""
        if isinstance(self.new, HeaderLock):
            return "header lock"
        return "wire" if isinstance(self.new, WireRecording) else "scenario"

    def line(self) -> str:
        """One line for ``--list``: the pending file, what it changes, and how."""
        recording = self.pending.recording.as_posix()
        what = "new recording" if not self.pending.recording.exists() else "changes"
        new = self.new
        if isinstance(new, HeaderLock):
            size, noun = len(new.headers), "header"
        elif isinstance(new, WireRecording):
            size, noun = len(new.requests), "request"
        else:
            size, noun = len(new.events), "event"
        count = f"{size} {noun}" if size == 1 else f"{size} {noun}s"
        notes = [f"{self.kind}, {count}"]
        if self.pending.stale:
            notes.append("STALE: the recording changed since")
        if self.pending.partial:
            notes.append(f"PARTIAL, cannot be accepted: {self.pending.partial}")
        return f"{self.pending.path.as_posix()}: {what} {recording} ({'; '.join(notes)})"


def read_change(path: Path) -> Change:
    """Read the pending file at ``path``; an invalid one is an ``InputFileError``."""
    pending = read_pending(path)
    where = path.as_posix()
    text = "\n" * pending.header_lines + pending.text  # line numbers: the file's own
    try:
        data = loads(text, path=where)
        new: WireRecording | Recording | HeaderLock
        if is_lock_data(data):
            new = parse_lock(text, path=where)
        elif is_wire_data(data):
            new = parse_wire_recording(text, path=where, apis=NAMES)
        else:
            new = parse_recording(text, path=where)
    except InputFileError:
        raise
    except HeaderlockError as error:
        raise InputFileError(f"{where}: {error}", path=where) from None
    return Change(pending, new)


def diff(change: Change) -> str:
    """The readable diff of the change: the explainer's words (request, segment, tool,
    byte) for a wire recording, the changed paths for a scenario, then the unified diff."""
    pending, new = change.pending, change.new
    names = (pending.recording.as_posix(), pending.path.as_posix())
    lines: list[str] = []
    if pending.partial:
        lines.append(
            f"PARTIAL: {pending.partial}; it cannot be accepted: re-record that test instead"
        )
    if pending.stale:
        lines.append("STALE: the recording changed since this was written; it cannot be accepted")
    if not pending.recording.exists():
        lines.append(f"new recording {names[0]}:")
        lines += [f"+{line}" for line in new.to_text().splitlines()]
        return "\n".join(lines)
    if isinstance(new, HeaderLock):
        lines.append(_lock_diff(load_lock_or_empty(pending.recording), new))
    elif isinstance(new, WireRecording):
        old = load_wire_recording(pending.recording, apis=NAMES)
        lines.append(explain_wire(old, new, names=names))
    else:
        current = parse_recording(pending.recording.read_text(encoding="utf-8"), path=names[0])
        lines.append(
            explain(
                current.to_data(),
                new.to_data(),
                expected_text=current.to_text(),
                actual_text=new.to_text(),
                names=names,
            )
        )
    return "\n".join(lines)


def accept(change: Change, project: Project | None = None) -> Path:
    """Write the change to its recording (atomically), then remove the pending file;
    returns the recording's path. A stale change raises ``StalePendingError``, a partial
    one, or a recording of ``project``'s scenarios failing the pin guard,
    ``RefusedPendingError``."""
    pending = change.pending
    where = pending.path.as_posix()
    if pending.stale:
        raise _stale(pending)
    if pending.partial:
        raise RefusedPendingError(
            f"{where}: partial: {pending.partial}; accepting it would write a recording"
            " that can never pass: re-record that test instead (or reject it); nothing written",
            path=where,
        )
    new = change.new
    if isinstance(new, HeaderLock):
        write = partial(save_lock, new, pending.recording)
    elif isinstance(new, WireRecording):
        write = partial(save_wire_recording, new, pending.recording)
    else:
        _guard(new, pending.recording, project, where)
        write = partial(write_recording_text, pending.recording, new.to_text())
    with recording_lock(pending.recording):  # the check and the write: one step for others
        if pending.stale:
            raise _stale(pending)
        write()
        pending.path.unlink(missing_ok=True)
    if isinstance(new, HeaderLock | WireRecording):  # the header it replaced, if now unused
        lock = lock_path(pending.recording.parent)
        with exclusive(lock):
            prune_lock(lock)
    return pending.recording


def _stale(pending: Pending) -> StalePendingError:
    where = pending.path.as_posix()
    return StalePendingError(
        f"{where}: stale: {pending.recording.as_posix()} changed since"
        " this pending file was written; run the test again for a fresh one (or reject"
        " it); nothing written",
        path=where,
    )


def _lock_diff(old: HeaderLock, new: HeaderLock) -> str:
    """The headers a pending lock adds, each against the locked header of its api most
    like it (the recordings' pending files refer to them by id)."""
    from headerlock.testing.wire.header_change import explain_header

    lines = []
    for key, header in new.headers.items():
        if key in old.headers:
            continue
        same_api = [k for k, h in old.headers.items() if h.get("api") == header.get("api")]
        if not same_api:
            lines.append(f"header {key} ({header.get('api')}): new")
            continue
        changes = [explain_header(k, old.headers[k], key, header) for k in same_api]
        change = min(changes, key=lambda c: (len(c.lines), c.old or ""))
        lines.append(f"header {key} ({header.get('api')}), against {change.old}:")
        lines += [f"  {line}" for line in change.lines]
    return "\n".join(lines) or "no new header"


def _guard(new: Recording, path: Path, project: Project | None, where: str) -> None:
    """Run ``record``'s guard when ``path`` is the recording of one of ``project``'s
    scenarios, the scenario its *path* names whatever the text says (a Python test's
    recording has no fixture, and no guard)."""
    if project is None or path.parent.resolve() != project.recordings.resolve():
        return
    name = path.name.removesuffix(".yaml")
    try:
        fixture = project.scenario_path(name)
    except HeaderlockError:
        return  # a name no fixture can have
    if not fixture.is_file():
        return
    if new.scenario != name:
        raise RefusedPendingError(
            f"{where}: it says `scenario: {new.scenario}`, but it would replace the recording"
            f" of scenario {name!r}; nothing written",
            path=where,
        )
    try:
        asyncio.run(project.check_recording_guard(project.scenario(name), new))
    except HeaderlockError as error:
        what = "failed" if isinstance(error, PinError) else "could not run"
        reason = " ".join(line.strip() for line in str(error).splitlines() if line.strip())
        raise RefusedPendingError(
            f"{where}: the pin guard {what}: {reason}; nothing written", path=where
        ) from None


def reject(change: Change) -> None:
    """Remove the pending file; the recording stays as it is."""
    change.pending.path.unlink(missing_ok=True)
