"""The interception core every client module hands its requests to.

A client module turns a request its library is about to send into a ``SentRequest`` and
calls ``route``; the lock that owns the running code decides: answer it (a
``WireAnswer``), forward it and be told the answer (a ``Pending``), let it through
untouched (``None``), or refuse it (it raises). Which lock owns the code is
``origins.owner()``: the lock whose block (or a task, thread or job started in it) runs
it. Code no open lock owns belongs to the only open lock; with several open, it is a
``WireOwnershipError``, never a guess.
"""

from __future__ import annotations

import gzip
import importlib
import threading
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

from headerlock.errors import WireOwnershipError
from headerlock.formats.secrets import header_secrets, secret_values, url_secrets
from headerlock.formats.wire_scrub import Scrubber
from headerlock.testing.wire import origins
from headerlock.testing.wire.apis import ModelApi, find_api


@dataclass(frozen=True, slots=True)
class SentRequest:
    """A request as a client is about to send it. ``api`` is the model API it calls
    (``None``: other traffic); ``client`` the library that sends it. ``body`` is decoded
    from its ``content-encoding`` (``encoding``, as sent) when headerlock can decode it;
    ``undecoded`` names an encoding it could not (the body is then as sent)."""

    client: str
    method: str
    url: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    api: ModelApi | None
    encoding: str = ""
    undecoded: str = ""

    @property
    def path(self) -> str:
        return urlsplit(self.url).path or "/"

    @property
    def query(self) -> str:
        return urlsplit(self.url).query

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    @property
    def origin(self) -> str:
        """``scheme://host:port`` (never the userinfo)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        scheme = self.url.split(":", 1)[0].lower()
        return f"{scheme}://{host}" + (f":{self.port}" if self.port is not None else "")

    @property
    def port(self) -> int | None:
        parts = urlsplit(self.url)
        return parts.port or {"http": 80, "https": 443}.get(parts.scheme)


def sent_request(
    client: str, method: str, url: str, headers: Iterable[tuple[str, str]], body: bytes
) -> SentRequest:
    """A ``SentRequest``, its body decoded from its content encoding (``decode_body``),
    its model API detected from the method, path and decoded body."""
    method = method.upper()
    kept = tuple(headers)
    encoding = ", ".join(v.strip() for k, v in kept if k.lower() == "content-encoding").lower()
    decoded, undecoded = decode_body(body, encoding)
    api = find_api(method, urlsplit(url).path, decoded)
    return SentRequest(client, method, url, kept, decoded, api, encoding, undecoded)


def decode_body(body: bytes, encoding: str) -> tuple[bytes, str]:
    """``body`` decoded from ``encoding`` (a ``content-encoding`` value: ``gzip``,
    ``deflate``, ``br`` when the ``brotli`` module is importable, ``identity``, applied
    in the order listed), and ``""``; or ``body`` as it is and the encoding that could
    not be decoded."""
    for name in reversed([n.strip() for n in encoding.split(",") if n.strip()]):
        try:
            if name in ("gzip", "x-gzip"):
                body = gzip.decompress(body)
            elif name == "deflate":
                try:
                    body = zlib.decompress(body)
                except zlib.error:
                    body = zlib.decompress(body, -zlib.MAX_WBITS)  # raw deflate
            elif name == "br":
                body = importlib.import_module("brotli").decompress(body)
            elif name != "identity":
                return body, name
        except Exception:  # any failure: kept as sent, and said so
            return body, name
    return body, ""


@dataclass(frozen=True, slots=True)
class WireAnswer:
    """An HTTP answer: status, content type (the one header kept) and the decoded body."""

    status: int
    content_type: str | None
    body: bytes


Pending = Callable[[WireAnswer | None], None]
"""Told the forwarded answer, or ``None`` when forwarding raised."""


class Interceptor(Protocol):
    """What a lock does with the requests of the code it owns."""

    is_open: bool

    def request(self, sent: SentRequest) -> WireAnswer | Pending | None:
        """Answer, forward (``Pending``), pass (``None``) or raise."""

    def refused(self, error: Exception) -> None:
        """Keep an error raised for a request it could not own (raised again at exit)."""


registry_lock = threading.RLock()
"""Held while the open interceptors change (and while ``install`` patches clients)."""
active: list[Interceptor] = []
"""The open interceptors, oldest first (``install.intercept`` adds and removes them)."""


def route(sent: SentRequest) -> WireAnswer | Pending | None:
    """The decision of the lock that owns the running code (``None`` when no lock is open)."""
    owner = origins.owner()
    with registry_lock:
        open_now = list(active)
    for lock in open_now:
        if lock is owner:
            return lock.request(sent)
    if not open_now:
        return None
    if len(open_now) == 1:
        return open_now[0].request(sent)
    shown = Scrubber.of(
        [*secret_values(), *header_secrets(sent.headers), *url_secrets(sent.url)]
    ).text(sent.path)
    error = WireOwnershipError(
        f"{sent.method} {shown} was sent by code that no open wire lock owns"
        f" (a thread or task started outside them) while {len(open_now)} locks are open;"
        " start it inside the lock it belongs to",
        key="lock",
    )
    for lock in open_now:
        lock.refused(error)
    raise error
