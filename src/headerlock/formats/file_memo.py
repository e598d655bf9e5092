"""What was read from a file, kept while the file stays the same file.

A pytest session replays many tests against one header lock and may open one recording
in several locks; parsing each again for every test costs more than the test. A
``FileMemo`` keeps the value read from each path with the file's stamp (device, inode,
size, modification and change time, in nanoseconds), taken *before* the read: a file
replaced meanwhile (atomic writes rename a new inode in) or edited in place shows a
different stamp next time and is read again; a value is never kept under a stamp newer
than its bytes.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Hashable
from stat import S_ISREG
from typing import Final, Generic, TypeVar

T = TypeVar("T")
Stamp = tuple[int, int, int, int, int]
"""A file's device, inode, size, modification and change time (ns)."""
DEFAULT_SIZE: Final = 64


def stamp(info: os.stat_result) -> Stamp:
    """The stamp of a file by its ``stat``."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class FileMemo(Generic[T]):
    """At most ``size`` values read from files, the oldest dropped first (thread-safe)."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self._size = size
        self._kept: dict[str, tuple[Stamp, Hashable, T]] = {}
        self._guard = threading.Lock()

    def get(
        self, path: str | os.PathLike[str], read: Callable[[], T], *, context: Hashable = None
    ) -> T:
        """``read()``'s value for the file at ``path``: kept from an earlier call while
        the file's stamp and the ``context`` the value also depends on (the secrets a
        read refuses) are unchanged. When ``path`` cannot be stat'ed, ``read()`` runs
        (and raises its own error) and nothing is kept."""
        key = os.fspath(path)
        try:
            now = stamp(os.stat(key))
        except OSError:
            return read()
        return self._kept_or_read(key, now, read, context)

    def get_regular(
        self,
        path: str | os.PathLike[str],
        read: Callable[[], T],
        *,
        absent: Callable[[], T],
        context: Hashable = None,
    ) -> T:
        """``get``, for a regular file: ``absent()`` when there is none at ``path`` (no
        such path, or a directory or another kind of file there), with the one ``stat``
        that also stamps it; ``read()`` says why one that cannot be stat'ed otherwise
        (permissions) cannot be read."""
        key = os.fspath(path)
        try:
            info = os.stat(key)
        except (FileNotFoundError, NotADirectoryError, ValueError):
            return absent()
        except OSError:
            return read()
        if not S_ISREG(info.st_mode):
            return absent()
        return self._kept_or_read(key, stamp(info), read, context)

    def _kept_or_read(self, key: str, now: Stamp, read: Callable[[], T], context: Hashable) -> T:
        with self._guard:
            held = self._kept.get(key)
        if held is not None and held[0] == now and held[1] == context:
            return held[2]
        value = read()
        with self._guard:
            self._kept.pop(key, None)
            if len(self._kept) >= self._size:
                del self._kept[next(iter(self._kept))]
            self._kept[key] = (now, context, value)
        return value

    def clear(self) -> None:
        """Forget every kept value."""
        with self._guard:
            self._kept.clear()
