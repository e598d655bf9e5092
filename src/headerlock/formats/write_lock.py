"""The one cross-process lock every writer of a recording holds, and its staleness check.

Every writer of a recording (the pytest plugin's updates, ``headerlock record``,
``headerlock review --accept``, a ``lock()`` that records) writes through
``write_unless_changed``: it takes the recording's lock (a ``filelock.FileLock``: an OS
lock the kernel releases when the process dies), checks that the recording is still what
it was when the writer began (its *base*), writes it atomically and only then lets go.
A recording that changed since is not written: a ``RecordingRunError`` naming it.

The lock file is ``<temp dir>/headerlock-locks-<user>/<sha256 of the recording's real
path>.lock``: one per recording, outside the project (nothing is added beside the
recordings), shared by every process of the user on the machine. On POSIX the lock is
the ``flock`` that ``filelock`` takes on that file, taken directly (``filelock``'s
bookkeeping cost more than a test's whole update; a session takes one or two per test):
reentrant in a thread, exclusive between threads and processes, released by the kernel
when the process dies. Elsewhere, or where ``flock`` is not supported, ``filelock`` takes it.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Final

try:
    import fcntl
except ImportError:  # Windows: filelock takes every lock
    fcntl = None  # type: ignore[assignment]

from headerlock.errors import OutputFileError, RecordingRunError

TIMEOUT_SECONDS: Final = 120.0
"""How long a writer waits for another one's write of the same recording (a write of the
largest recording takes about a second)."""


def lock_file(recording: Path) -> Path:
    """The lock file of ``recording`` (one per real path of the recording)."""
    real = os.path.join(os.path.realpath(recording.parent), recording.name)
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:40]
    return _checked_lock_dir() / f"{digest}.lock"


_CHECKED: dict[str, Path] = {}
"""The lock directory, once this process made sure it is its user's (by the temp dir)."""


def _checked_lock_dir() -> Path:
    temp = tempfile.gettempdir()
    found = _CHECKED.get(temp)
    if found is None:
        found = _CHECKED[temp] = _lock_dir()
    return found


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
        try:
            release = _acquire(lock_file(recording), timeout)
        except FileNotFoundError:  # the lock directory went away (a temp cleaner): again
            _CHECKED.clear()
            release = _acquire(lock_file(recording), timeout)
    except OSError as error:  # filelock's Timeout is a TimeoutError
        raise OutputFileError(
            f"cannot lock it for writing ({error}); nothing written", path=str(recording)
        ) from None
    try:
        yield
    finally:
        release()


def _acquire(path: Path, timeout: float) -> Callable[[], None]:
    """Take the lock at ``path``; the function that lets go of it."""
    if fcntl is None:
        return _with_filelock(path, timeout)
    held: dict[str, list[int]] = _HELD.__dict__.setdefault("locks", {})
    key = str(path)
    if key in held:  # this thread holds it already
        held[key][1] += 1
        return partial(_let_go, held, key)
    fd = os.open(key, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        _flock(fd, timeout, key)
    except OSError as error:
        os.close(fd)
        if isinstance(error, BlockingIOError) or error.errno not in _NO_FLOCK:
            raise
        return _with_filelock(path, timeout)  # a file system without flock
    except BaseException:
        os.close(fd)
        raise
    held[key] = [fd, 1]
    return partial(_let_go, held, key)


def _flock(fd: int, timeout: float, key: str) -> None:
    assert fcntl is not None
    deadline, pause = time.monotonic() + timeout, 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                from filelock import Timeout  # its message, as where filelock takes the lock

                raise Timeout(key) from None
            time.sleep(pause)
            pause = min(pause * 2, 0.05)


def _let_go(held: dict[str, list[int]], key: str) -> None:
    entry = held[key]
    entry[1] -= 1
    if entry[1]:
        return
    del held[key]
    try:
        assert fcntl is not None
        fcntl.flock(entry[0], fcntl.LOCK_UN)
    finally:
        os.close(entry[0])


def _with_filelock(path: Path, timeout: float) -> Callable[[], None]:
    from filelock import FileLock  # imported only where it takes the lock (13 ms)

    lock = FileLock(path, timeout=timeout)
    lock.acquire()
    return lock.release


_HELD: Final = threading.local()
"""The locks each thread holds: their file descriptors and how often each is held."""
_NO_FLOCK: Final = frozenset(
    e for e in (getattr(errno, n, None) for n in ("ENOLCK", "EOPNOTSUPP", "ENOTSUP")) if e
)


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
