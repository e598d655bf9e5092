"""Requests through ``urllib3``: ``HTTPConnectionPool.urlopen``.

``requests``, ``urllib3`` itself (``PoolManager``, ``urllib3.request``) and SDKs such as
botocore send through ``HTTPConnectionPool.urlopen`` (``HTTPSConnectionPool`` inherits it). The
patch builds the full URL from the pool's scheme, host and port (an absolute ``url``,
as sent to an HTTP proxy, is kept as it is), the headers the caller passed (else the
pool's), and the body bytes: a file or an iterable body is read whole first and sent on
as those bytes. An answer becomes a ``urllib3.HTTPResponse`` over the body, honouring
``preload_content``; a forward is read to the end (decoded), reported, and handed back
the same way. The retries and redirects a forward follows inside ``urlopen`` are part
of that one request, not requests of their own.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import io
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http import HTTPStatus
from typing import Any, Final

from headerlock.testing.wire import origins
from headerlock.testing.wire.clients.core import WireAnswer, route, sent_request
from headerlock.testing.wire.clients.libraries import Patches, find_library

LIBRARIES: Final = ("requests", "urllib3")
_CLIENT: Final = "urllib3"
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
_patches = Patches()
_found: dict[str, Any] = {}
"""urllib3 imported by an earlier lock (while it stays imported)."""
_absent: dict[str, tuple[str, ...]] = {}
"""urllib3 found missing, with the ``sys.path`` it was looked for on."""
_inside: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "headerlock_urllib3_inside", default=False
)
"""Set while a routed ``urlopen`` runs: its own retries and redirects call ``urlopen``."""


@contextmanager
def _within() -> Iterator[None]:
    token = _inside.set(True)
    try:
        yield
    finally:
        _inside.reset(token)


def _url(pool: Any, url: str) -> str:
    """The full URL: ``url`` is a path on the pool's host, or already absolute."""
    if url.startswith(("http://", "https://")):
        return url
    host = pool.host
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # an IPv6 literal
    port = pool.port
    netloc = host if port in (None, _DEFAULT_PORTS.get(pool.scheme)) else f"{host}:{port}"
    return f"{pool.scheme}://{netloc}{url if url.startswith('/') else '/' + url}"


def _text(value: Any) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)


def _headers(pool: Any, headers: Mapping[Any, Any] | None) -> Iterator[tuple[str, str]]:
    given = pool.headers if headers is None else headers
    return ((_text(k), _text(v)) for k, v in given.items())


def _chunk(data: Any) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)


def _body(body: Any) -> tuple[bytes, bool]:
    """The body's bytes, and whether reading them used the body up (a file, an
    iterable: the bytes must then be sent in its place)."""
    if body is None:
        return b"", False
    if isinstance(body, str | bytes):
        return _chunk(body), False
    if hasattr(body, "read"):
        parts = []
        while block := body.read(65536):
            parts.append(_chunk(block))
        return b"".join(parts), True
    try:
        return memoryview(body).tobytes(), False
    except TypeError:
        return b"".join(_chunk(c) for c in body), True


def _response(urllib3: Any, method: str, url: str, answer: WireAnswer, args: dict[str, Any]) -> Any:
    """A ``urllib3.HTTPResponse`` over ``answer``'s body, preloaded if asked."""
    headers = {} if answer.content_type is None else {"Content-Type": answer.content_type}
    headers["Content-Length"] = str(len(answer.body))
    try:
        reason = HTTPStatus(answer.status).phrase
    except ValueError:
        reason = ""
    return urllib3.HTTPResponse(
        body=io.BytesIO(answer.body),
        headers=headers,
        status=answer.status,
        version=11,
        reason=reason,
        preload_content=args.get("preload_content", True),
        decode_content=args.get("decode_content", True),
        request_method=method,
        request_url=url,
    )


def _arguments(signature: inspect.Signature, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """``urlopen``'s arguments by name (its ``**response_kw`` flattened)."""
    bound = signature.bind(*args, **kwargs)
    named = dict(bound.arguments)
    named.pop("self", None)
    extra = named.pop("response_kw", {})
    return {**named, **extra}


@functools.lru_cache(maxsize=8)
def _signature(original: Any) -> inspect.Signature:
    """``original``'s signature, read once (every lock installs the patch again)."""
    return inspect.signature(original)


def _wrap(urllib3: Any, original: Any) -> Any:
    signature = _signature(original)

    def urlopen(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _inside.get():
            return original(self, *args, **kwargs)
        named = _arguments(signature, self, *args, **kwargs)
        method, path = str(named["method"]).upper(), str(named["url"])
        url = _url(self, path)
        data, used_up = _body(named.get("body"))
        if used_up:  # send the bytes read in place of the file or iterable
            named.update(body=data, body_pos=None)
        sent = sent_request(_CLIENT, method, url, _headers(self, named.get("headers")), data)
        decision = route(sent)
        if decision is None:
            with origins.quiet(), _within():
                return original(self, **named)
        if isinstance(decision, WireAnswer):
            return _response(urllib3, method, url, decision, named)
        try:
            with origins.quiet(), _within():
                # the connection stays with the response until its body is read
                live = original(self, **{**named, "preload_content": False, "release_conn": False})
                try:
                    body = live.read(decode_content=True)
                finally:
                    live.release_conn()
        except BaseException:
            decision(None)
            raise
        answer = WireAnswer(live.status, live.headers.get("Content-Type"), body)
        decision(answer)
        return _response(urllib3, method, url, answer, named)

    return urlopen


def install() -> None:
    """Patch ``HTTPConnectionPool.urlopen`` when urllib3 is installed (an SDK that sends
    through it, e.g. botocore, is seen through it; what its API needs of the SDK itself
    is ``sdk_patches``')."""
    urllib3 = find_library("urllib3", _found, _absent, "connectionpool")
    if urllib3 is not None:
        pool = urllib3.connectionpool.HTTPConnectionPool
        _patches.patch(pool, "urlopen", lambda original: _wrap(urllib3, original))


def uninstall() -> None:
    """Restore ``HTTPConnectionPool.urlopen``."""
    _patches.restore()


def patched_classes() -> list[type[Any]]:
    """The classes whose ``urlopen`` is patched right now (for tests and diagnostics)."""
    return _patches.classes()
