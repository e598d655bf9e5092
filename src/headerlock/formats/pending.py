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
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from headerlock.errors import InputFileError, OutputFileError
from headerlock.formats.atomic import atomic_write
from headerlock.formats.strict_yaml import MAX_BYTES
from headerlock.formats.wire_recording import WIRE_MAX_BYTES

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
    header_lines: int = 2
    """How many comment lines come before ``text`` (its line 1 is the file's line
    ``header_lines + 1``)."""

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


_NO_EXCEPTION_ASK: Final = os.access in os.supports_follow_symlinks
"""Whether ``os.access`` can tell, without following a link, that nothing is at a path."""


def remove_pending(recording: Path) -> bool:
    """Remove the pending file of ``recording`` if there is one; whether there was. A
    directory there is an ``OutputFileError`` naming it (never removed)."""
    path = pending_path(recording)
    if _NO_EXCEPTION_ASK and not os.access(path, os.F_OK, follow_symlinks=False):
        return False  # the common case, asked without raising FileNotFoundError
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):  # a link to one is only a link: removed
            raise OutputFileError(_IS_DIRECTORY, path=path.as_posix())
        path.unlink()
    except FileNotFoundError:  # the common case: one stat, no more
        return False
    return True


def read_pending(path: Path) -> Pending:
    """Read a pending file; one that is not one, or larger than the recording it would
    become may be (checked before it is read whole), is an ``InputFileError`` naming it."""
    where = path.as_posix()
    try:
        with open(path, "rb") as file:
            head = [file.readline(_LINE_BYTES) for _ in range(4)]
            size = os.fstat(file.fileno()).st_size
            limit = _limit(head) + sum(len(line) for line in head[:3])
            if size > limit:
                raise InputFileError(
                    f"{where}: {size} bytes, more than the limit of {limit} of the recording"
                    " it would become; not read",
                    path=where,
                )
            file.seek(0)
            data = file.read()
    except IsADirectoryError:
        raise InputFileError(f"{where}: is a directory, not a pending file", path=where) from None
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputFileError(f"{where}: not UTF-8 text", path=where) from None
    lines = raw.split("\n")
    if len(lines) < 3 or lines[0] != _HEAD or not lines[1].startswith(_BASE):
        raise InputFileError(
            f"{where}: not a headerlock pending file (no `{_HEAD[:22]}` header)", path=where
        )
    base = lines[1][len(_BASE) :]
    partial = None
    body = 2
    if lines[2].startswith(_PARTIAL):
        partial, body = lines[2][len(_PARTIAL) :], 3
    return Pending(path, recording_of(path), base, "\n".join(lines[body:]), partial, body)


_LINE_BYTES: Final = 64 * 1024
"""The longest header line read when checking the size."""


def _limit(head: list[bytes]) -> int:
    """The size limit of the recording a pending file starting with ``head`` becomes: a
    wire recording's, else a scenario recording's."""
    body = head[3] if head[2].startswith(_PARTIAL.encode()) else head[2]
    return WIRE_MAX_BYTES if body.rstrip(b"\r\n") == b"kind: wire" else MAX_BYTES
