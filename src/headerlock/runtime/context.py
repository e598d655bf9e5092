"""The plugin host: services, events and concurrently loaded plugins."""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
import math
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from headerlock.errors import (
    PluginError,
    PluginExitError,
    PluginTimeoutError,
    ServiceConflictError,
    ServiceNotFoundError,
)
from headerlock.runtime.threads import is_coroutine_callable, start_daemon
from headerlock.runtime.tools import Dispose, ToolRegistry

logger = logging.getLogger("headerlock")

Listener = Callable[..., Any]
Plugin = Callable[..., Any]
"""A plugin is ``plugin(ctx)`` or ``plugin(ctx, config)``, sync or async."""

T = TypeVar("T")

INTERNAL_ERROR = "internal/error"
"""Event emitted (with ``event_name, exception``) when an ``emit`` listener raises."""


@dataclass(slots=True)
class _Registry:
    services: dict[str, Any] = field(default_factory=dict)
    listeners: dict[str, list[Listener]] = field(default_factory=dict)


class Context:
    """A plugin's view of the host.

    The root context owns the services and listeners; ``fork()`` gives a
    child that shares them but records what it registers, so that disposing
    the child (unloading its plugin) takes all of it away again.
    """

    def __init__(
        self,
        *,
        _registry: _Registry | None = None,
        _parent: Context | None = None,
        name: str = "root",
    ) -> None:
        self._registry = _registry if _registry is not None else _Registry()
        self._parent = _parent
        self._disposers: list[Dispose] = []
        self._children: list[Context] = []
        self.name = name

    # -- scope ---------------------------------------------------------------
    def fork(self, name: str) -> Context:
        """A child context whose registrations are disposed together."""
        child = Context(_registry=self._registry, _parent=self, name=name)
        self._children.append(child)
        return child

    def collect(self, dispose: Dispose) -> Dispose:
        """Run ``dispose`` when this context is disposed; returns a one-shot wrapper."""
        done = False

        def once() -> None:
            nonlocal done
            if done:
                return
            done = True
            if once in self._disposers:
                self._disposers.remove(once)
            dispose()

        self._disposers.append(once)
        return once

    def dispose(self) -> None:
        """Undo everything registered through this context (newest first)."""
        for child in reversed(list(self._children)):
            child.dispose()
        while self._disposers:
            self._disposers[-1]()
        if self._parent is not None and self in self._parent._children:
            self._parent._children.remove(self)

    # -- services ------------------------------------------------------------
    def provide(self, name: str, service: object) -> Dispose:
        """Register ``service`` under ``name``; a taken name raises ``ServiceConflictError``."""
        services = self._registry.services
        if name in services:
            raise ServiceConflictError(name)
        services[name] = service

        def dispose() -> None:
            if services.get(name) is service:
                del services[name]

        return self.collect(dispose)

    def get(self, name: str) -> Any:
        """The service named ``name``, bound to this context when it supports it."""
        try:
            service = self._registry.services[name]
        except KeyError:
            raise ServiceNotFoundError(name, list(self._registry.services)) from None
        bind = getattr(service, "bind", None)
        return bind(self) if callable(bind) else service

    def has(self, name: str) -> bool:
        """Whether a service named ``name`` is provided."""
        return name in self._registry.services

    @property
    def tools(self) -> ToolRegistry:
        """The ``tools`` service (a ``ToolRegistry``) seen from this context."""
        return cast("ToolRegistry", self.get("tools"))

    # -- events --------------------------------------------------------------
    def on(self, name: str, listener: Listener, prepend: bool = False) -> Dispose:
        """Listen to event ``name``; ``prepend`` puts the listener first in line."""
        listeners = self._registry.listeners.setdefault(name, [])
        if prepend:
            listeners.insert(0, listener)
        else:
            listeners.append(listener)

        def dispose() -> None:
            if listener in listeners:
                listeners.remove(listener)

        return self.collect(dispose)

    def listeners(self, name: str) -> tuple[Listener, ...]:
        """A snapshot of the listeners of ``name``, in call order."""
        return tuple(self._registry.listeners.get(name, ()))

    def emit(self, name: str, *args: Any) -> None:
        """Call sync listeners in order; a listener's error is logged and reported
        as an ``internal/error`` event, and the other listeners still run."""
        for listener in self.listeners(name):
            try:
                result = listener(*args)
                if inspect.isawaitable(result):
                    _close(result)
                    raise PluginError(
                        f"listener of {name!r} returned an awaitable; use serial()", plugin=name
                    )
            except Exception as error:
                self._report(name, error)

    def _report(self, name: str, error: Exception) -> None:
        logger.error("listener of %r raised %s: %s", name, type(error).__name__, error)
        if name == INTERNAL_ERROR:
            return
        for listener in self.listeners(INTERNAL_ERROR):
            try:
                listener(name, error)
            except Exception as nested:
                logger.error("internal/error listener raised %r", nested)

    async def serial(self, name: str, *args: Any) -> None:
        """Call listeners one after another, awaiting async ones; errors propagate."""
        for listener in self.listeners(name):
            result = listener(*args)
            if inspect.isawaitable(result):
                await result

    async def waterfall(self, name: str, value: T, *args: Any) -> T:
        """Pass ``value`` through the listeners; each returns the next value."""
        for listener in self.listeners(name):
            result = listener(value, *args)
            value = await result if inspect.isawaitable(result) else result
        return value

    # -- plugins -------------------------------------------------------------
    async def plugin(
        self, plugin: Plugin, config: Any = None, *, timeout: float | None = None
    ) -> Context:
        """Load one plugin into a fork of this context and return that fork.

        A load that takes longer than ``timeout`` seconds raises
        ``PluginTimeoutError``. Dispose the returned context to unload the plugin.
        """
        label = plugin_label(plugin)
        if not callable(plugin):
            raise PluginError(f"plugin {label} is not callable", plugin=label)
        child = self.fork(label)
        try:
            takes_config = _accepts_config(plugin)
            if config is not None and not takes_config:
                raise PluginError(
                    f"plugin {label} takes no config, but config was given", plugin=label
                )
            await _call_plugin(plugin, (child, config) if takes_config else (child,), timeout)
        except SystemExit as stop:  # the plugin's failure, not an exit (it would end the loop)
            child.dispose()
            raise PluginExitError(label, code=stop.code) from None
        except BaseException:
            child.dispose()
            raise
        return child

    async def load_plugins(
        self, plugins: Iterable[Plugin | tuple[Plugin, Any]], *, timeout: float | None = None
    ) -> list[Context]:
        """Load plugins concurrently; registration follows completion order.

        Each plugin has ``timeout`` seconds to load. If any plugin fails, the
        ones that loaded are unloaded and the first error is raised.
        """
        specs = [p if isinstance(p, tuple) else (p, None) for p in plugins]
        results = await asyncio.gather(
            *(self.plugin(p, c, timeout=timeout) for p, c in specs), return_exceptions=True
        )
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors:
            for r in results:
                if isinstance(r, Context):
                    r.dispose()
            raise errors[0]
        return cast("list[Context]", results)


async def _call_plugin(plugin: Plugin, args: tuple[Any, ...], timeout: float | None) -> None:
    """Call ``plugin(*args)`` and await what it returns, within ``timeout`` seconds.

    A sync plugin runs in a daemon thread while the loop waits for it, as it
    would wait for the plugin run in place (so registrations never race), but
    in slices: the timeout fires, a cancellation (Ctrl-C) is seen, and a plugin
    that never returns is abandoned, not joined.
    """
    started = time.monotonic()
    if is_coroutine_callable(plugin):
        result = plugin(*args)
    else:
        future = start_daemon(plugin, *args, name="plugin")
        task = asyncio.current_task()
        deadline = math.inf if timeout is None else started + timeout
        while not future.done():
            left = deadline - time.monotonic()
            if left <= 0:
                raise _timed_out(plugin, timeout)
            concurrent.futures.wait([future], min(left, _WAIT_SLICE))
            if task is not None and task.cancelling():
                raise asyncio.CancelledError
        result = future.result()
    if not inspect.isawaitable(result):
        return
    remaining = None if timeout is None else max(timeout - (time.monotonic() - started), 0.0)
    scope = asyncio.timeout(remaining)
    try:
        async with scope:
            await result
    except TimeoutError:
        if scope.expired():
            raise _timed_out(plugin, timeout) from None
        raise


_WAIT_SLICE = 0.05
"""How often a wait for a sync plugin looks at its timeout and for a cancellation."""


def _timed_out(plugin: Plugin, timeout: float | None) -> PluginTimeoutError:
    return PluginTimeoutError(plugin_label(plugin), timeout=timeout or 0.0)


def plugin_label(plugin: object) -> str:
    """A readable name for a plugin, for messages."""
    module = getattr(plugin, "__module__", None)
    qualname = getattr(plugin, "__qualname__", None) or type(plugin).__qualname__
    return f"{module}:{qualname}" if module else str(qualname)


def _accepts_config(plugin: Plugin) -> bool:
    target = inspect.unwrap(plugin)
    code = getattr(target, "__code__", None)
    if inspect.isfunction(target) and code is not None:
        # The fast path for plain functions (inspect.signature is slow).
        return code.co_argcount >= 2 or bool(code.co_flags & inspect.CO_VARARGS)
    try:
        params: Sequence[inspect.Parameter] = list(inspect.signature(plugin).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [
        p
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    return len(positional) >= 2 or any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)


def _close(awaitable: Awaitable[Any]) -> None:
    close = getattr(awaitable, "close", None)
    if callable(close):
        close()
