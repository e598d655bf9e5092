"""Running blocking code in a daemon thread that nobody has to join.

``asyncio.to_thread`` uses the loop's default executor, which ``asyncio.run``
joins on exit, and ``concurrent.futures`` joins its workers at interpreter
exit: a call that never returns would hang the process. A daemon thread per
call does not: a caller that stops waiting (a timeout, Ctrl-C) can leave.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def start_daemon(
    func: Callable[..., T], *args: Any, name: str = "headerlock-worker"
) -> concurrent.futures.Future[T]:
    """Call ``func(*args)`` in a new daemon thread (in a copy of the current
    context); the future holds its result or whatever it raised, ``SystemExit``
    and ``KeyboardInterrupt`` included."""
    future: concurrent.futures.Future[T] = concurrent.futures.Future()
    context = contextvars.copy_context()

    def work() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            result = context.run(func, *args)
        except BaseException as error:
            future.set_exception(error)
        else:
            future.set_result(result)

    threading.Thread(target=work, name=name, daemon=True).start()
    return future
