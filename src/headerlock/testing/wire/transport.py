"""Seeing model requests at the HTTP transport of ``httpx2`` and legacy ``httpx``.

While at least one interceptor is active, the ``handle_request`` and
``handle_async_request`` methods of ``HTTPTransport`` and ``AsyncHTTPTransport``
are patched (each class once, however many modules alias it; restored when the
last interceptor leaves, also on error). A model request (see
``apis.detect_api``) goes to the interceptor of the current context, or to the
latest one entered when the context has none (threads started inside a lock);
anything else goes to the original method untouched.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final, Protocol

from headerlock.testing.wire.apis import detect_api

MODULES: Final = ("httpx2", "httpx")
_METHODS: Final = (
    ("HTTPTransport", "handle_request"),
    ("AsyncHTTPTransport", "handle_async_request"),
)


@dataclass(frozen=True, slots=True)
class SentRequest:
    """A model request as it reaches the transport: api, path, headers, raw body."""

    api: str
    path: str
    headers: tuple[tuple[str, str], ...]
    body: bytes


@dataclass(frozen=True, slots=True)
class WireAnswer:
    """A decoded HTTP answer: status, content type (the one header kept) and body."""

    status: int
    content_type: str | None
    body: bytes


Pending = Callable[[WireAnswer | None], None]
"""Told the forwarded answer, or ``None`` when forwarding raised."""


class Interceptor(Protocol):
    """Decides each model request: answer it, forward it (``Pending``) or pass (``None``)."""

    def request(self, sent: SentRequest) -> WireAnswer | Pending | None: ...


_guard = threading.RLock()
_active: list[Interceptor] = []
_patched: list[tuple[type[Any], str, Any]] = []
_current: ContextVar[Interceptor | None] = ContextVar("headerlock_wire", default=None)


def _interceptor() -> Interceptor | None:
    current = _current.get()
    active = list(_active)
    if current is not None and current in active:
        return current
    return active[-1] if active else None


def _sent(request: Any, api: str, body: bytes) -> SentRequest:
    headers = tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw)
    return SentRequest(api, request.url.path, headers, body)


def _response(module: Any, request: Any, reply: WireAnswer) -> Any:
    headers = [] if reply.content_type is None else [("content-type", reply.content_type)]
    return module.Response(reply.status, headers=headers, content=reply.body, request=request)


def _sync(module: Any, original: Any) -> Any:
    def handle_request(self: Any, request: Any) -> Any:
        interceptor = _interceptor()
        api = None if interceptor is None else detect_api(request.method, request.url.path)
        if interceptor is None or api is None:
            return original(self, request)
        decision = interceptor.request(_sent(request, api, request.read()))
        if decision is None:
            return original(self, request)
        if isinstance(decision, WireAnswer):
            return _response(module, request, decision)
        try:
            response = original(self, request)
            try:
                body = response.read()
            finally:
                response.close()
        except BaseException:
            decision(None)
            raise
        reply = WireAnswer(response.status_code, response.headers.get("content-type"), body)
        decision(reply)
        return _response(module, request, reply)

    return handle_request


def _async(module: Any, original: Any) -> Any:
    async def handle_async_request(self: Any, request: Any) -> Any:
        interceptor = _interceptor()
        api = None if interceptor is None else detect_api(request.method, request.url.path)
        if interceptor is None or api is None:
            return await original(self, request)
        decision = interceptor.request(_sent(request, api, await request.aread()))
        if decision is None:
            return await original(self, request)
        if isinstance(decision, WireAnswer):
            return _response(module, request, decision)
        try:
            response = await original(self, request)
            try:
                body = await response.aread()
            finally:
                await response.aclose()
        except BaseException:
            decision(None)
            raise
        reply = WireAnswer(response.status_code, response.headers.get("content-type"), body)
        decision(reply)
        return _response(module, request, reply)

    return handle_async_request


_found: dict[str, Any] = {}
"""Each module of ``MODULES`` imported by an earlier lock (while it stays imported)."""
_absent: dict[str, tuple[str, ...]] = {}
"""Each module found missing, with the ``sys.path`` it was looked for on."""


def _modules() -> list[Any]:
    found = []
    for name in MODULES:
        module = _found.get(name)
        if module is not None and sys.modules.get(name) is module:
            found.append(module)
            continue
        if _absent.get(name) == tuple(sys.path):
            continue  # not installed: searching sys.path again on every lock costs a stat each
        if importlib.util.find_spec(name) is None:
            _absent[name] = tuple(sys.path)
            continue
        with suppress(ImportError):
            module = importlib.import_module(name)
            _found[name] = module
            found.append(module)
    return found


def _patch() -> None:
    for module in _modules():
        for class_name, method in _METHODS:
            cls = getattr(module, class_name, None)
            if cls is None or any(done is cls for done, _, _ in _patched):
                continue  # an alias (httpx2.alias_httpx) of a class already patched
            original = cls.__dict__[method]
            wrap = _sync if method == "handle_request" else _async
            setattr(cls, method, wrap(module, original))
            _patched.append((cls, method, original))


def _unpatch() -> None:
    while _patched:
        cls, method, original = _patched.pop()
        setattr(cls, method, original)


@contextmanager
def intercept(interceptor: Interceptor) -> Iterator[None]:
    """Route model requests to ``interceptor`` for the duration of the block."""
    with _guard:
        if not _active:
            try:
                _patch()
            except BaseException:
                _unpatch()
                raise
        _active.append(interceptor)
    token = _current.set(interceptor)
    try:
        yield
    finally:
        try:
            _current.reset(token)
        except ValueError:  # left from another context than the one it entered
            _current.set(None)
        with _guard:
            _active.remove(interceptor)
            if not _active:
                _unpatch()


def patched_classes() -> list[type[Any]]:
    """The transport classes patched right now (for tests and diagnostics)."""
    with _guard:
        return [cls for cls, _, _ in _patched]
