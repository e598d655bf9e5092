"""Running blocking code in daemon threads that nobody has to join.

``asyncio.to_thread`` uses the loop's default executor, which ``asyncio.run``
joins on exit, and ``concurrent.futures`` joins its workers at interpreter
exit: a call that never returns would hang the process. The daemon workers
here are never joined: a caller that stops waiting (a timeout, Ctrl-C) can
leave, and a worker stuck in such a call is simply not reused. Idle workers
are kept for the next call (starting a thread costs ten times a hand-over).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import inspect
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_Job = tuple[
    "concurrent.futures.Future[Any]", contextvars.Context, Callable[..., Any], tuple[Any, ...], str
]
"""A future to settle, the context to run in, the call, and the worker's name."""

_MAX_IDLE = 8
_idle: list[queue.SimpleQueue[_Job]] = []
"""The inboxes of idle workers (the last one to finish is reused first)."""
_lock = threading.Lock()


def is_coroutine_callable(func: object) -> bool:
    """Whether calling ``func`` gives a coroutine (an ``async def`` function, a
    partial of one, or an object with an ``async def __call__``)."""
    return inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(type(func).__call__)


def start_daemon(
    func: Callable[..., T], *args: Any, name: str = "worker"
) -> concurrent.futures.Future[T]:
    """Call ``func(*args)`` in a daemon worker thread named ``headerlock-<name>``
    (in a copy of the current context); the future holds its result or whatever
    it raised, ``SystemExit`` and ``KeyboardInterrupt`` included."""
    future: concurrent.futures.Future[T] = concurrent.futures.Future()
    job: _Job = (future, contextvars.copy_context(), func, args, f"headerlock-{name}")
    with _lock:
        inbox = _idle.pop() if _idle else None
    if inbox is None:
        inbox = queue.SimpleQueue()
        threading.Thread(target=_serve, args=(inbox,), name=job[4], daemon=True).start()
    inbox.put(job)
    return future


async def wait_awake(future: concurrent.futures.Future[T]) -> T:
    """Await a worker's ``future``, waking the loop every ``TICK`` seconds meanwhile.

    A signal (Ctrl-C) may be delivered to the worker thread; Python runs its
    handler only in the main thread, which sleeps in ``select()`` until
    something wakes it. The ticks do, so Ctrl-C cancels the wait at once.
    """
    loop = asyncio.get_running_loop()
    handle: asyncio.TimerHandle | None = None

    def tick() -> None:
        nonlocal handle
        handle = loop.call_later(TICK, tick)

    tick()
    try:
        return await asyncio.wrap_future(future)
    finally:
        assert handle is not None
        handle.cancel()


TICK = 0.05
"""Seconds between wake-ups of a thread waiting for a worker (see ``wait_awake``)."""


def _serve(inbox: queue.SimpleQueue[_Job]) -> None:
    while True:
        _run(inbox.get())
        with _lock:
            if len(_idle) >= _MAX_IDLE:
                return
            _idle.append(inbox)


def _run(job: _Job) -> None:
    future, context, func, args, name = job
    threading.current_thread().name = name
    if not future.set_running_or_notify_cancel():
        return
    try:
        result = context.run(func, *args)
    except BaseException as error:
        future.set_exception(error)
    else:
        future.set_result(result)


def _forget_workers() -> None:
    """In a forked child the workers do not exist: start afresh."""
    global _lock
    _lock = threading.Lock()
    _idle.clear()


os.register_at_fork(after_in_child=_forget_workers)
