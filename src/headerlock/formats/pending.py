"""Pending files: the recording a mismatching replay would have made, beside the recording.

``recordings/<name>.yaml.new`` holds the canonical text of the new recording after a
few ``#`` comment lines (so it is still a valid recording for ``headerlock diff``)::

    # headerlock pending: review with `headerlock review` (accept or reject)
    # base: sha256:<hex of the recording's bytes when this was written> | none
    # partial: <why the session stops early>            (only when it does)

It is written atomically and never touches the recording. The ``base`` line makes a
pending file whose recording changed since (re-recorded, another accept) stale: it
is refused, not applied. Keep pending files out of version control with the
``.gitignore`` line ``GITIGNORE_LINE``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from headerlock.errors import InputFileError, OutputFileError
from headerlock.formats.atomic import atomic_write

SUFFIX: Final = ".new"
GITIGNORE_LINE: Final = "*.yaml.new"
_HEAD: Final = "# headerlock pending: review with `headerlock review` (accept or reject)"
_BASE: Final = "# base: "
_PARTIAL: Final = "# partial: "
NO_BASE: Final = "none"
_IS_DIRECTORY: Final = (
    "is a directory, where headerlock keeps this recording's pending file; remove or rename"
    " it (headerlock never removes a directory)"
)


def pending_path(recording: Path) -> Path:
    """Where the pending file of ``recording`` lives (``<name>.yaml.new``)."""
    return recording.with_name(recording.name + SUFFIX)


def recording_of(pending: Path) -> Path:
    """The recording a pending file would replace."""
    if not pending.name.endswith(SUFFIX):
        raise InputFileError(f"{pending}: not a pending file (*{SUFFIX})", path=str(pending))
    return pending.with_name(pending.name[: -len(SUFFIX)])


def base_of(recording: Path) -> str:
    """``sha256:<hex>`` of the recording's bytes now, ``none`` when there is none."""
    try:
        data = recording.read_bytes()
    except FileNotFoundError:
        return NO_BASE
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class Pending:
    """A pending file read back: where it is, what it replaces, its base and text."""

    path: Path
    recording: Path
    base: str
    text: str
    """The new recording's canonical text (without the comment lines)."""
    partial: str | None = None

    @property
    def stale(self) -> bool:
        """Whether the recording changed since this was written."""
        return base_of(self.recording) != self.base


def write_pending(recording: Path, text: str, *, partial: str | None = None) -> Path:
    """Write the pending file of ``recording`` atomically; returns its path."""
    head = [_HEAD, _BASE + base_of(recording)]
    if partial is not None:
        head.append(_PARTIAL + " ".join(partial.split()))
    path = pending_path(recording)
    if path.is_dir() and not path.is_symlink():
        raise OutputFileError(_IS_DIRECTORY, path=path.as_posix())
    atomic_write(path, "\n".join(head) + "\n" + text)
    return path


def remove_pending(recording: Path) -> bool:
    """Remove the pending file of ``recording`` if there is one; whether there was. A
    directory there is an ``OutputFileError`` naming it (never removed)."""
    path = pending_path(recording)
    if path.is_dir() and not path.is_symlink():
        raise OutputFileError(_IS_DIRECTORY, path=path.as_posix())
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def read_pending(path: Path) -> Pending:
    """Read a pending file; one that is not one is an ``InputFileError`` naming it."""
    try:
        raw = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputFileError(f"{path}: not UTF-8 text", path=str(path)) from None
    lines = raw.split("\n")
    if len(lines) < 3 or lines[0] != _HEAD or not lines[1].startswith(_BASE):
        raise InputFileError(
            f"{path}: not a headerlock pending file (no `{_HEAD[:22]}` header)", path=str(path)
        )
    base = lines[1][len(_BASE) :]
    partial = None
    body = 2
    if lines[2].startswith(_PARTIAL):
        partial, body = lines[2][len(_PARTIAL) :], 3
    return Pending(path, recording_of(path), base, "\n".join(lines[body:]), partial)
