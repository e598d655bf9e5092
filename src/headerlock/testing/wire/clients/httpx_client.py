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
    headers = _decoded(request.headers.raw)
    return sent_request(module.__name__, request.method, str(request.url), headers, body)


def _decoded(raw: list[tuple[bytes, bytes]]) -> tuple[tuple[str, str], ...]:
    """The header pairs decoded (Latin-1), each pair seen before as the same strings: a
    client sends the same headers with every request."""
    pairs = _PAIRS
    try:
        return tuple(map(pairs.__getitem__, raw))
    except KeyError:
        found = tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in raw)
        if len(pairs) >= _PAIRS_KEPT:
            pairs.clear()
        pairs.update(zip(raw, found, strict=True))
        return found


_PAIRS: dict[tuple[bytes, bytes], tuple[str, str]] = {}
"""Header pairs as sent, and as decoded."""
_PAIRS_KEPT = 1024


def _response(module: Any, request: Any, answer: WireAnswer) -> Any:
    """The library's ``Response`` of ``answer``, read: ``Response(content=body)``, or the
    same state set directly where ``_read_is_set`` shows it is (no decoder run over a
    body that has no content encoding)."""
    headers = [] if answer.content_type is None else [("content-type", answer.content_type)]
    if not _read_is_set(module):
        return module.Response(answer.status, headers=headers, content=answer.body, request=request)
    return _read(module, answer.status, headers, answer.body, request)


def _read(
    module: Any, status: int, headers: list[tuple[str, str]], body: bytes, request: Any
) -> Any:
    """``module.Response(status, headers=headers, content=body, request=request)`` as its
    constructor leaves it (content headers added, the body read, the stream closed),
    built without running the body through its (identity) decoders."""
    if body:
        headers.append(("Content-Length", str(len(body))))
    stream = module.ByteStream(body)
    response = module.Response(status, headers=headers, stream=stream, request=request)
    response._content = body
    response.is_stream_consumed = True
    response.is_closed = True
    return response


_CHECKED: dict[str, bool] = {}
"""Per library module, whether ``_read`` builds what its ``Response(content=...)`` does."""


def _read_is_set(module: Any) -> bool:
    """Whether ``_read`` gives the state ``module.Response(content=...)`` gives (every
    attribute, the stream's type and bytes): checked once per module on sample answers,
    so a library version that reads its content otherwise gets its own constructor."""
    known = _CHECKED.get(module.__name__)
    if known is None:
        try:
            known = all(_same(module, body) for body in (b"", b'{"a": 1}'))
        except Exception:  # any difference in the library's API: its constructor
            known = False
        _CHECKED[module.__name__] = known
    return known


def _same(module: Any, body: bytes) -> bool:
    request = module.Request("POST", "http://127.0.0.1/sample")
    headers = [("content-type", "application/json")]
    made = module.Response(200, headers=list(headers), content=body, request=request)
    read = _read(module, 200, list(headers), body, request)
    if type(made.stream) is not type(read.stream) or list(made.stream) != list(read.stream):
        return False
    state = {k: v for k, v in vars(made).items() if k not in _MADE_WHEN_ASKED}
    return state.keys() == vars(read).keys() - _MADE_WHEN_ASKED and all(
        _equal(v, getattr(read, k)) for k, v in state.items()
    )


_MADE_WHEN_ASKED: Final = {"stream", "_decoder"}
"""The stream (compared apart) and the content decoder a response makes when first asked
(a read body is served without one)."""


def _equal(made: Any, read: Any) -> bool:
    if hasattr(made, "raw") and hasattr(read, "raw"):  # Headers: the raw pairs, in order
        return bool(made.raw == read.raw)
    return bool(made == read)


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
