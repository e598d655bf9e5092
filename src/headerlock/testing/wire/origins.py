"""Who sent a request: the lock that owns the running code, and where in it the code runs.

A lock's block is the root origin ``()``. Every task, thread or pool job started from an
origin is numbered by it: the k-th spawn or request of origin ``P`` is ``P + (k,)``. A
request's key is ``origin + (k,)``, so sorting by key orders a concurrent session the
same way in every run and hash seed (each task's requests in its own order, tasks in the
order they were started), never by arrival. Whether a task still runs is tracked too:
two tasks that run at the same time can race for one positional scripted reply.

While at least one lock is open, the spawn points are patched so that the new task,
thread or job runs in a copy of its starter's context with a child origin:
``BaseEventLoop.create_task`` (``asyncio.create_task``, ``gather``, ``ensure_future``),
``threading.Thread.start``, ``ThreadPoolExecutor.submit`` (``loop.run_in_executor``) and
``asyncio.to_thread``. Code started before the lock opened, or in a thread the lock did
not start, has no owner.
"""

from __future__ import annotations

import asyncio
import asyncio.base_events
import asyncio.threads
import contextvars
import functools
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

Key = tuple[int, ...]


class Origin:
    """One task, thread or job under a lock (the block itself is ``()``)."""

    __slots__ = ("_guard", "_next", "alive", "family", "path")

    def __init__(self, path: Key, family: dict[Key, Origin] | None = None) -> None:
        self.path = path
        self.alive = True
        self.family: dict[Key, Origin] = {} if family is None else family
        """The running origins of the same lock (its root's, shared by every descendant):
        paths of two locks' origins are alike, so each lock keeps its own."""
        self._next = 0
        self._guard = threading.Lock()

    def next_key(self) -> Key:
        """The key of this origin's next spawn or request."""
        with self._guard:
            k = self._next
            self._next += 1
        return (*self.path, k)

    def related(self, other: Key) -> bool:
        """Whether ``other`` is this origin, an ancestor or a descendant of it."""
        shorter = min(len(self.path), len(other))
        return self.path[:shorter] == other[:shorter]


_owner: contextvars.ContextVar[object | None] = contextvars.ContextVar(
    "headerlock_owner", default=None
)
_origin: contextvars.ContextVar[Origin | None] = contextvars.ContextVar(
    "headerlock_origin", default=None
)
_quiet: contextvars.ContextVar[bool] = contextvars.ContextVar("headerlock_quiet", default=False)
_guard = threading.RLock()
_depth = 0
_originals: list[tuple[Any, str, Any]] = []


def owner() -> object | None:
    """The lock that owns the running code, as its ``enter`` said (``None``: no owner)."""
    return _owner.get()


def current_origin() -> Origin | None:
    """The origin of the running code (``None`` outside any lock's tasks)."""
    return _origin.get()


def alive_unrelated(origin: Origin) -> frozenset[Key]:
    """The paths of the running origins of ``origin``'s lock that are neither its
    ancestors nor its descendants: code of that lock that runs at the same time as it."""
    with _guard:
        running = list(origin.family.items())
    return frozenset(k for k, o in running if o.alive and not origin.related(k))


@contextmanager
def enter(lock: object) -> Iterator[Origin]:
    """Own the running context by ``lock`` with a fresh root origin for the block."""
    root = Origin(())
    owner_token = _owner.set(lock)
    origin_token = _origin.set(root)
    _install()
    try:
        yield root
    finally:
        _uninstall()
        _reset(_origin, origin_token)
        _reset(_owner, owner_token)


@contextmanager
def quiet() -> Iterator[None]:
    """Start no origins in the block: what an HTTP client or a pool starts for itself (a
    DNS lookup, a worker thread) may vary from run to run and must not shift the keys."""
    token = _quiet.set(True)
    try:
        yield
    finally:
        _quiet.reset(token)


def _reset(var: contextvars.ContextVar[Any], token: contextvars.Token[Any]) -> None:
    try:
        var.reset(token)
    except ValueError:  # left from another context than the one it entered
        var.set(None)


def _spawn(base: contextvars.Context | None = None) -> tuple[contextvars.Context, Origin] | None:
    """A copy of ``base`` (default: the running context) with a child origin, or ``None``
    when the running code belongs to no lock (or is quiet)."""
    parent = _origin.get()
    if parent is None or _quiet.get():
        return None
    child = Origin(parent.next_key(), parent.family)
    context = (base or contextvars.copy_context()).copy()
    context.run(_origin.set, child)
    with _guard:
        child.family[child.path] = child
    return context, child


def _finish(child: Origin) -> None:
    child.alive = False
    with _guard:
        child.family.pop(child.path, None)


def _run_as(context: contextvars.Context, child: Origin, fn: Callable[..., Any], *a: Any) -> Any:
    try:
        return context.run(fn, *a)
    finally:
        _finish(child)


def _patched_create_task(original: Any) -> Any:
    def create_task(self: Any, coro: Any, *args: Any, **kwargs: Any) -> Any:
        spawned = _spawn(kwargs.get("context"))
        if spawned is None:
            return original(self, coro, *args, **kwargs)
        context, child = spawned
        task = original(self, coro, *args, **{**kwargs, "context": context})
        task.add_done_callback(lambda _: _finish(child))
        return task

    return create_task


def _patched_thread_start(original: Any) -> Any:
    def start(self: threading.Thread) -> None:
        spawned = _spawn()
        if spawned is not None:
            context, child = spawned
            self.run = functools.partial(_run_as, context, child, self.run)  # type: ignore[method-assign]
        original(self)

    return start


def _patched_submit(original: Any) -> Any:
    def submit(self: Any, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        spawned = _spawn()
        if spawned is None:
            with quiet():
                return original(self, fn, *args, **kwargs)
        context, child = spawned
        with quiet():  # the worker threads the pool starts are the pool's, not the job's
            return original(self, functools.partial(_run_as, context, child, fn), *args, **kwargs)

    return submit


async def _to_thread(func: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``asyncio.to_thread`` whose job runs with its own child origin."""
    loop = asyncio.get_running_loop()
    spawned = _spawn()
    call = functools.partial(func, *args, **kwargs)
    if spawned is None:
        context = contextvars.copy_context()
        return await loop.run_in_executor(None, functools.partial(context.run, call))
    context, child = spawned
    return await loop.run_in_executor(None, functools.partial(_run_as, context, child, call))


def _install() -> None:
    global _depth
    with _guard:
        _depth += 1
        if _depth > 1:
            return
        loop_class = asyncio.base_events.BaseEventLoop
        for owner_object, name, make in (
            (loop_class, "create_task", _patched_create_task),
            (threading.Thread, "start", _patched_thread_start),
            (ThreadPoolExecutor, "submit", _patched_submit),
        ):
            original = owner_object.__dict__[name]
            _originals.append((owner_object, name, original))
            setattr(owner_object, name, make(original))
        for module in (asyncio, asyncio.threads):
            _originals.append((module, "to_thread", getattr(module, "to_thread")))  # noqa: B009
            setattr(module, "to_thread", _to_thread)  # noqa: B010


def _uninstall() -> None:
    global _depth
    with _guard:
        _depth -= 1
        if _depth > 0:
            return
        while _originals:
            owner_object, name, original = _originals.pop()
            setattr(owner_object, name, original)
