"""One thread that runs a session's recording writes in order, while the next test runs.

A passed test's update (lock, staleness check, temp file, ``fdatasync``, rename, header
lock merge, unlock: ``Updates._commit``) waits mostly on the disk; here it overlaps the
next test instead of delaying it. Jobs run one at a time, first in first out, each
holding its locks from its check to its rename as before. ``drain`` waits until every
job submitted so far has run (the session's end: also on ``KeyboardInterrupt``, so an
interrupted run still writes every passed test's recording). The thread is not a daemon:
a process that exits without ``drain`` still finishes the writes it accepted. A job
reports its own failures; an exception it lets escape is raised again by ``drain``.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Final

MAX_PENDING: Final = 64
"""Jobs that may wait; a test that would queue more waits for the writer instead."""


class BackgroundWriter:
    """A queue of write jobs and the one thread that runs them."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[Callable[[], None] | None] = queue.Queue(MAX_PENDING)
        self._escaped: list[BaseException] = []
        self._thread: threading.Thread | None = None

    def submit(self, job: Callable[[], None]) -> None:
        """Run ``job`` after every job submitted before it."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="headerlock-writer", daemon=False
            )
            self._thread.start()
        self._jobs.put(job)

    def drain(self) -> None:
        """Wait until every submitted job ran; an exception one let escape is raised."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._jobs.put(None)
            thread.join()
        if self._escaped:
            error = self._escaped.pop(0)
            self._escaped.clear()
            raise error

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            try:
                job()
            except BaseException as error:  # handed to drain()
                self._escaped.append(error)
