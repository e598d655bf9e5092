"""Requests through ``httpx2`` and legacy ``httpx``: their default transports.

``HTTPTransport.handle_request`` and ``AsyncHTTPTransport.handle_async_request`` are
patched (each class once, however many modules alias it). A client built with a
custom transport (``httpx.MockTransport``, a mounted or third-party transport) does not
go through them and is not seen; the seal then refuses whatever it connects to.
"""

from __future__ import annotations

from typing import Any, Final

from headerlock.testing.wire import origins
from headerlock.testing.wire.clients.core import WireAnswer, route, sent_request
from headerlock.testing.wire.clients.libraries import Patches, find_library

LIBRARIES: Final = ("httpx2", "httpx")
_METHODS: Final = (
    ("HTTPTransport", "handle_request"),
    ("AsyncHTTPTransport", "handle_async_request"),
)
_patches = Patches()
_found: dict[str, Any] = {}
"""Each library imported by an earlier lock (while it stays imported)."""
_absent: dict[str, tuple[str, ...]] = {}
"""Each library found missing, with the ``sys.path`` it was looked for on."""


def _sent(module: Any, request: Any, body: bytes) -> Any:
    headers = ((k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw)
    return sent_request(module.__name__, request.method, str(request.url), headers, body)


def _response(module: Any, request: Any, answer: WireAnswer) -> Any:
    headers = [] if answer.content_type is None else [("content-type", answer.content_type)]
    return module.Response(answer.status, headers=headers, content=answer.body, request=request)


def _sync(module: Any, original: Any) -> Any:
    def handle_request(self: Any, request: Any) -> Any:
        decision = route(_sent(module, request, request.read()))
        if decision is None:
            return original(self, request)
        if isinstance(decision, WireAnswer):
            return _response(module, request, decision)
        try:
            with origins.quiet():
                response = original(self, request)
                try:
                    body = response.read()
                finally:
                    response.close()
        except BaseException:
            decision(None)
            raise
        answer = WireAnswer(response.status_code, response.headers.get("content-type"), body)
        decision(answer)
        return _response(module, request, answer)

    return handle_request


def _async(module: Any, original: Any) -> Any:
    async def handle_async_request(self: Any, request: Any) -> Any:
        decision = route(_sent(module, request, await request.aread()))
        if decision is None:
            return await original(self, request)
        if isinstance(decision, WireAnswer):
            return _response(module, request, decision)
        try:
            with origins.quiet():
                response = await original(self, request)
                try:
                    body = await response.aread()
                finally:
                    await response.aclose()
        except BaseException:
            decision(None)
            raise
        answer = WireAnswer(response.status_code, response.headers.get("content-type"), body)
        decision(answer)
        return _response(module, request, answer)

    return handle_async_request


def install() -> None:
    """Patch the transports of every installed library."""
    for name in LIBRARIES:
        module = find_library(name, _found, _absent)
        if module is None:
            continue
        for class_name, method in _METHODS:
            cls = getattr(module, class_name, None)
            if cls is not None:  # an alias (httpx2.alias_httpx) is patched once
                wrap = _sync if method == "handle_request" else _async
                _patches.patch(cls, method, lambda original, w=wrap, m=module: w(m, original))


def uninstall() -> None:
    """Restore every patched transport method."""
    _patches.restore()


def patched_classes() -> list[type[Any]]:
    """The transport classes patched right now (for tests and diagnostics)."""
    return _patches.classes()
