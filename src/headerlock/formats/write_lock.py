"""The one cross-process lock every writer of a recording holds, and its staleness check.

Every writer of a recording (the pytest plugin's updates, ``headerlock record``,
``headerlock review --accept``, a ``lock()`` that records) writes through
``write_unless_changed``: it takes the recording's lock (a ``filelock.FileLock``: an OS
lock the kernel releases when the process dies), checks that the recording is still what
it was when the writer began (its *base*), writes it atomically and only then lets go.
A recording that changed since is not written: a ``RecordingRunError`` naming it.

The lock file is ``<temp dir>/headerlock-locks-<user>/<sha256 of the recording's real
path>.lock``: one per recording, outside the project (nothing is added beside the
recordings), shared by every process of the user on the machine.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

from filelock import FileLock, Timeout

from headerlock.errors import OutputFileError, RecordingRunError

TIMEOUT_SECONDS: Final = 120.0
"""How long a writer waits for another one's write of the same recording (a write of the
largest recording takes about a second)."""


def lock_file(recording: Path) -> Path:
    """The lock file of ``recording`` (one per real path of the recording)."""
    real = Path(os.path.realpath(recording.parent)) / recording.name
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:40]
    return _lock_dir() / f"{digest}.lock"


def _lock_dir() -> Path:
    user = str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    directory = Path(tempfile.gettempdir()) / f"headerlock-locks-{user}"
    with contextlib.suppress(FileExistsError):
        directory.mkdir(mode=0o700)
    info = os.lstat(directory)
    mine = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    if not stat.S_ISDIR(info.st_mode) or not mine:
        raise OSError(f"{directory} is not a directory of this user; cannot lock")
    return directory


@contextlib.contextmanager
def recording_lock(recording: Path, *, timeout: float = TIMEOUT_SECONDS) -> Iterator[None]:
    """Hold the lock of ``recording`` for the block (an ``OutputFileError`` naming the
    recording when it cannot be taken within ``timeout`` seconds)."""
    try:
        lock = FileLock(lock_file(recording), timeout=timeout)
        lock.acquire()
    except (Timeout, OSError) as error:
        raise OutputFileError(
            f"cannot lock it for writing ({error}); nothing written", path=str(recording)
        ) from None
    try:
        yield
    finally:
        lock.release()


def write_unless_changed(
    recording: Path, write: Callable[[], None], *, unchanged: Callable[[], bool], since: str
) -> None:
    """Under ``recording``'s lock: when ``unchanged()`` (it is still what it was when the
    writer began: ``since``), ``write()`` it; else raise ``RecordingRunError``."""
    with recording_lock(recording):
        if not unchanged():
            raise RecordingRunError(
                f"{recording.as_posix()}: changed on disk since {since} (another process"
                " wrote it: a `headerlock review --accept`, another session?); nothing written"
                " for it: run again to update it from its new bytes",
                scenario=recording.as_posix(),
            )
        write()
