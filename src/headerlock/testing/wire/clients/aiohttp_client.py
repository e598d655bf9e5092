"""Requests through ``aiohttp``: ``ClientSession._request``.

Every ``ClientSession`` request (``session.post``, ``session.request``, the httpx
transports that sit on aiohttp: litellm's async path, the OpenAI SDK's
``DefaultAioHttpClient``) goes through ``_request``. The patch describes the request
as aiohttp would send it (it builds the session's own ``ClientRequest``: default and
request headers, auth, cookies, the body payload with its content type, the query
merged) and hands it to the lock. An answer becomes a real ``ClientResponse`` whose
body waits in its ``content`` stream; a forward is read to the end (decompressed),
reported, and handed back the same way.

Not seen: websocket handshakes (``ws_connect``: passed through untouched), what
client middlewares add to a request, and netrc credentials.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Final

from headerlock.testing.wire import origins
from headerlock.testing.wire.clients.core import SentRequest, WireAnswer, route, sent_request
from headerlock.testing.wire.clients.libraries import Patches, find_library

LIBRARIES: Final = ("aiohttp",)
_CLIENT: Final = "aiohttp"
_patches = Patches()
_found: dict[str, Any] = {}
"""The library imported by an earlier lock (while it stays imported)."""
_absent: dict[str, tuple[str, ...]] = {}
"""The library found missing, with the ``sys.path`` it was looked for on."""


@dataclass(frozen=True, slots=True)
class _Described:
    """A request as aiohttp would send it, and the ``_request`` keywords that send it."""

    request: Any
    """The ``ClientRequest`` aiohttp builds (headers, url, body payload)."""
    sent: SentRequest
    kwargs: dict[str, Any]


class _Sent:
    """The ``stream_writer`` of a response whose request is already sent."""

    output_size = 0


def _auth(session: Any, url: Any, auth: Any, url_auth: Any) -> Any:
    """The basic auth ``_request`` would use: given, else the url's, else the session's."""
    if auth is not None or url_auth is not None:
        return auth or url_auth
    default = getattr(session, "_default_auth", None)
    base = getattr(session, "_base_url", None)
    if default is not None and (base is None or base.origin() == url.origin()):
        return default
    return None


def _cookies(session: Any, url: Any, cookies: Any) -> Any:
    """The session jar's cookies for ``url``, with the request's own on top."""
    jar = session.cookie_jar.filter_cookies(url)
    if cookies:
        items = cookies.items() if isinstance(cookies, Mapping) else cookies
        for name, value in items:
            jar[name] = getattr(value, "value", value)
    return jar


async def _payload_bytes(payload: Any) -> bytes:
    """The bytes of a body payload (cached by aiohttp, so it can still be sent)."""
    if not payload:
        return b""
    as_bytes = getattr(payload, "as_bytes", None)
    if as_bytes is not None:
        with origins.quiet():  # a file payload is read in an executor
            return bytes(await as_bytes())
    value = getattr(payload, "_value", b"")  # aiohttp < 3.12: bytes payloads only
    return bytes(value) if isinstance(value, bytes | bytearray) else b""


async def _describe(
    session: Any, method: str, str_or_url: Any, headers: Any, kwargs: dict[str, Any]
) -> _Described:
    """The request ``_request`` would send, from the session's merged ``headers``."""
    from aiohttp import InvalidUrlClientError, payload
    from aiohttp.helpers import strip_auth_from_url

    data, json_value = kwargs.get("data"), kwargs.get("json")
    if data is not None and json_value is not None:
        raise ValueError("data and json parameters can not be used at the same time")
    if json_value is not None:
        dumps_bytes = getattr(session, "_json_serialize_bytes", None)
        data = (
            payload.JsonBytesPayload(json_value, dumps=dumps_bytes)
            if dumps_bytes is not None
            else payload.JsonPayload(json_value, dumps=session._json_serialize)
        )
    try:
        url, url_auth = strip_auth_from_url(session._build_url(str_or_url))
    except ValueError as error:
        raise InvalidUrlClientError(str_or_url) from error
    skip = set(session._skip_auto_headers) | set(kwargs.get("skip_auto_headers") or ())
    request = session._request_class(
        method.upper(),
        url,
        params=kwargs.get("params"),
        headers=headers,
        skip_auto_headers=skip or None,
        data=data,
        cookies=_cookies(session, url, kwargs.get("cookies")),
        auth=_auth(session, url, kwargs.get("auth"), url_auth),
        version=session._version,
        compress=kwargs.get("compress"),
        chunked=kwargs.get("chunked"),
        expect100=kwargs.get("expect100", False),
        loop=session._loop,
        response_class=session._response_class,
        session=session,
    )
    body = None if isinstance(request.body, bytes) else request.body  # b"": no body
    sent_headers = [(str(k), str(v)) for k, v in request.headers.items()]
    if _default_content_type(request, skip):
        sent_headers.append(("Content-Type", "application/octet-stream"))  # added at send time
    data = await _payload_bytes(body)
    sent = sent_request(_CLIENT, request.method, str(request.url), iter(sent_headers), data)
    # the payload goes on in place of data/json: a one-shot body (a stream, a
    # generator, form data) has been read, and the payload keeps its bytes
    send = {**kwargs, "json": None, "data": body}
    return _Described(request, sent, send)


def _default_content_type(request: Any, skip: set[str]) -> bool:
    """Whether ``ClientRequest.send`` adds its default content type to this request."""
    return (
        request.method in getattr(request, "POST_METHODS", ())
        and "content-type" not in {name.lower() for name in skip}
        and "Content-Type" not in request.headers
    )


def _response(session: Any, described: _Described, answer: WireAnswer, url: Any = None) -> Any:
    """A ``ClientResponse`` for ``answer``: the body waits in its ``content`` stream."""
    from aiohttp import HttpVersion11, StreamReader
    from aiohttp.helpers import TimerNoop
    from multidict import CIMultiDict, CIMultiDictProxy

    request = described.request
    loop = asyncio.get_running_loop()
    cls = session._response_class
    extra = {"stream_writer": _Sent()} if _takes_stream_writer(cls) else {}
    response = cls(
        request.method,
        request.url if url is None else url,
        writer=None,
        continue100=None,
        timer=TimerNoop(),
        request_info=request.request_info,
        traces=[],
        loop=loop,
        session=session,
        **extra,
    )
    headers = _headers(answer)
    response.version = HttpVersion11
    response.status = answer.status
    response.reason = _reason(answer.status)
    response._headers = CIMultiDictProxy(CIMultiDict(headers))
    response._raw_headers = tuple((k.encode("latin-1"), v.encode("latin-1")) for k, v in headers)
    limit: int = described.kwargs.get("read_bufsize", None) or session._read_bufsize
    content = StreamReader(_Drained.new(loop), limit, loop=loop)
    content.feed_data(answer.body)
    content.feed_eof()
    response.content = content
    return response


def _headers(answer: WireAnswer) -> list[tuple[str, str]]:
    headers = [] if answer.content_type is None else [("Content-Type", answer.content_type)]
    return [*headers, ("Content-Length", str(len(answer.body)))]


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


_takes: dict[type[Any], bool] = {}


def _takes_stream_writer(cls: type[Any]) -> bool:
    """Whether ``ClientResponse`` wants a ``stream_writer`` (aiohttp 3.14 and later)."""
    if cls not in _takes:
        _takes[cls] = "stream_writer" in inspect.signature(cls.__init__).parameters
    return _takes[cls]


class _Drained:
    """The protocol of a stream fed whole: nothing to pause or resume."""

    _cls: type[Any] | None = None

    @classmethod
    def new(cls, loop: asyncio.AbstractEventLoop) -> Any:
        if cls._cls is None:
            from aiohttp.base_protocol import BaseProtocol

            class Drained(BaseProtocol):
                def pause_reading(self) -> None:
                    pass

                def resume_reading(self, resume_parser: bool = True) -> None:
                    pass

            cls._cls = Drained
        return cls._cls(loop)


async def _check_status(session: Any, kwargs: dict[str, Any], response: Any) -> None:
    """``raise_for_status`` as ``_request`` applies it (the request's, else the session's)."""
    check = kwargs.get("raise_for_status")
    if check is None:
        check = getattr(session, "_raise_for_status", None)
    if callable(check):
        await check(response)
    elif check:
        response.raise_for_status()


def _wrap(original: Any) -> Any:
    from aiohttp import hdrs

    async def _request(self: Any, method: str, str_or_url: Any, **kwargs: Any) -> Any:
        headers = self._prepare_headers(kwargs.get("headers"))
        if self.closed or hdrs.UPGRADE in headers:
            # aiohttp's own error; a websocket handshake is no request/answer
            return await original(self, method, str_or_url, **kwargs)
        described = await _describe(self, method, str_or_url, headers, kwargs)
        decision = route(described.sent)
        if decision is None:
            with origins.quiet():  # its DNS lookups, proxy and netrc reads start no origins
                return await original(self, method, str_or_url, **described.kwargs)
        if isinstance(decision, WireAnswer):
            if described.request.body:
                await described.request.body.close()
            response = _response(self, described, decision)
            await _check_status(self, kwargs, response)
            return response
        forward = {**described.kwargs, "auto_decompress": True, "raise_for_status": False}
        try:
            with origins.quiet():
                live = await original(self, method, str_or_url, **forward)
                try:
                    body = await live.read()
                finally:
                    live.release()
        except BaseException:
            decision(None)
            raise
        answer = WireAnswer(live.status, live.headers.get("Content-Type"), body)
        decision(answer)
        response = _response(self, described, answer, live.url)
        await _check_status(self, kwargs, response)
        return response

    return _request


def install() -> None:
    """Patch ``ClientSession._request`` when aiohttp is installed."""
    aiohttp = find_library(LIBRARIES[0], _found, _absent, "client_reqrep")
    if aiohttp is not None:
        _patches.patch(aiohttp.ClientSession, "_request", _wrap)


def uninstall() -> None:
    """Restore ``ClientSession._request``."""
    _patches.restore()


def patched_classes() -> list[type[Any]]:
    """The classes patched right now (for tests and diagnostics)."""
    return _patches.classes()
