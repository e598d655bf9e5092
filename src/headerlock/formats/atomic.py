"""Atomic file writes: a reader sees the old file or the new one, never half of one.

The new bytes go to ``.<name>.headerlock-tmp-<random>`` in the same directory,
are made durable (``fdatasync``, else ``fsync``) and renamed over the target. The
target keeps its mode (a new file gets the umask's). A symbolic link at the target is
refused, naming it (headerlock writes only files it owns: never through a link a
repository may hold, whose target could be any file; a linked directory above it is
fine). No temp file survives an exception, ``KeyboardInterrupt`` included; one left by
a killed process is removed by a later write to that directory once it is
``STALE_SECONDS`` old (a process looks for them in a directory at most once every
``STALE_SECONDS``: a scan per write made writing many files to one directory
quadratic). A failed write is an
``OutputFileError`` naming the file; the old bytes stay.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

from headerlock.errors import OutputFileError

TEMP_MARKER: Final = ".headerlock-tmp"
"""Every temp file's name starts with ``.`` and contains this."""
STALE_SECONDS: Final = 10.0
"""A temp file not ours and not modified for this long is left over from a killed run."""

_FLAGS: Final = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
)
_ours: set[str] = set()
_ours_lock = threading.Lock()
_deferring = 0
"""How many ``defer_directory_syncs`` are active."""
_pending: set[str] = set()
"""Directories a deferred write renamed a file into, not fsynced yet."""
_scanned: dict[str, float] = {}
"""When (``time.monotonic``) this process last looked for stale temp files, by directory."""


def atomic_write(path: Path, text: str, *, max_bytes: int | None = None) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically; ``max_bytes`` refuses larger text."""
    label = str(path)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as error:
        point = ord(text[error.start])
        raise OutputFileError(
            f"cannot write a lone surrogate (U+{point:04X}, character {error.start}):"
            " it is not a Unicode character; nothing written",
            path=label,
        ) from None
    if max_bytes is not None and len(data) > max_bytes:
        raise OutputFileError(
            f"would be {len(data)} bytes, more than the limit of {max_bytes}; nothing written",
            path=label,
        )
    if os.path.islink(path):
        raise OutputFileError(
            "is a symbolic link; headerlock writes only files it owns, never through a"
            " link: put the file itself there; nothing written",
            path=label,
        )
    try:
        _write(path, data)
    except OSError as error:
        kept = "the old file is kept" if os.path.exists(path) else "nothing written"
        raise OutputFileError(f"cannot write: {_cause(error)}; {kept}", path=label) from None
    _sync_directory(path.parent)


def defer_directory_syncs() -> Callable[[], None]:
    """Until the returned function is called, fsync each directory that a write renamed a
    file into once, then, instead of after every write (a pytest session: the file's
    bytes are still fsynced before the rename, and the old file is kept until it; only
    the rename's own durability waits for the end of the session). Nested calls: the
    outermost one syncs."""
    global _deferring
    with _ours_lock:
        _deferring += 1
    done = False

    def flush() -> None:
        global _deferring
        nonlocal done
        with _ours_lock:
            if done:
                return
            done = True
            _deferring -= 1
            if _deferring:
                return
            pending = sorted(_pending)
            _pending.clear()
        for directory in pending:
            _fsync_dir(Path(directory))

    return flush


def _sync_directory(directory: Path) -> None:
    with _ours_lock:
        if _deferring:
            _pending.add(os.path.abspath(directory))
            return
    _fsync_dir(directory)


def _write(path: Path, data: bytes) -> None:
    directory = path.parent
    directory.mkdir(parents=True, exist_ok=True)
    _remove_stale_now_and_then(directory)
    mode = _mode_of(path)
    temp: str | None = None
    try:
        fd, temp = _create_temp(directory, path.name)
        try:
            if mode is not None:
                _chmod(fd, temp, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            _sync_data(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
        done, temp = temp, None
        _forget(done)
    finally:
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            _forget(temp)


def _sync_data(fd: int) -> None:
    """Make a temp file's bytes durable before the rename: ``fdatasync`` where there is
    one (the data and what reading it back needs, its size; not its times, which ``fsync``
    also writes: a third of each write's wait), else ``fsync``."""
    sync = getattr(os, "fdatasync", None)
    (os.fsync if sync is None else sync)(fd)


def _mode_of(path: Path) -> int | None:
    """The permission bits of the file at ``path``; None when there is none."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(21, "Is a directory")
    return stat.S_IMODE(info.st_mode)


def _create_temp(directory: Path, name: str) -> tuple[int, str]:
    stem = name if len(name) <= 150 else name[:150]
    for _ in range(100):
        candidate = os.path.abspath(
            os.path.join(directory, f".{stem}{TEMP_MARKER}-{secrets.token_hex(4)}")
        )
        with _ours_lock:
            _ours.add(candidate)
        try:
            fd = os.open(candidate, _FLAGS, 0o666)
        except FileExistsError:
            _forget(candidate)
            continue
        except BaseException:
            _forget(candidate)
            raise
        return fd, candidate
    raise FileExistsError(17, "no free temp file name", str(directory))  # pragma: no cover


def _chmod(fd: int, temp: str, mode: int) -> None:
    fchmod = getattr(os, "fchmod", None)
    if fchmod is not None:
        fchmod(fd, mode)
    else:  # pragma: no cover - Windows
        os.chmod(temp, mode)


def _forget(temp: str) -> None:
    with _ours_lock:
        _ours.discard(temp)


def _remove_stale_now_and_then(directory: Path) -> None:
    """``remove_stale_temp_files``, unless this process did so in ``directory`` less than
    ``STALE_SECONDS`` ago (a file younger than that then is not stale yet either)."""
    key, now = os.path.abspath(directory), time.monotonic()
    with _ours_lock:
        last = _scanned.get(key)
        if last is not None and now - last < STALE_SECONDS:
            return
        _scanned[key] = now
    remove_stale_temp_files(directory)


def remove_stale_temp_files(directory: Path, *, older_than: float = STALE_SECONDS) -> list[str]:
    """Remove temp files a killed write left in ``directory``; the names removed.

    Only regular files named like ours, not in use by this process and not
    modified for ``older_than`` seconds (another process may be writing the rest).
    """
    removed: list[str] = []
    now = time.time()
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(".") or TEMP_MARKER not in entry.name:
            continue
        full = os.path.abspath(entry.path)
        with _ours_lock:
            if full in _ours:
                continue
        try:
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(info.st_mode) and now - info.st_mtime >= older_than:
                os.unlink(full)
                removed.append(entry.name)
        except OSError:
            continue
    return removed


def _cause(error: OSError) -> str:
    reason = error.strerror or str(error)
    if error.errno == errno.ENOSPC:
        reason += " (the disk is full)"
    return reason


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)
