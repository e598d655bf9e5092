"""The network seal: while a lock replays, or records from a script, nothing connects out.

Requests through a seen client are answered by the lock itself (``clients``); this is
the floor beneath them: ``socket.socket.connect``/``connect_ex`` are patched while a
sealed lock is open, and an internet connection (``AF_INET``/``AF_INET6``) from code the
sealed lock owns, or from code no lock owns, is refused with ``NetworkSealedError``
(a ``ConnectionRefusedError``) unless its host is allowed (``allow_hosts=``, the
marker's ``allow_hosts``, the ``headerlock_allow_hosts`` ini option). A connection sees
only an address, so ``socket.getaddrinfo`` is wrapped too, to remember which names
resolved to it (an allowed name allows its addresses). Each refusal is also kept by the
lock, which raises at exit, so an agent that swallows the error still fails. Code owned
by a lock that records live is never refused.

Not covered: the DNS lookup itself (it runs before the connection is refused), sockets
that C extensions open without ``socket.socket`` (uvloop, pycurl, grpc's C core),
``sendto`` on unconnected UDP sockets, and child processes.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Iterable
from typing import Any, Protocol

from headerlock.errors import NetworkSealedError
from headerlock.testing.wire import origins

HOW_TO_ALLOW = (
    "allow the host with lock(..., allow_hosts=[...]), @pytest.mark.headerlock_wire"
    "(allow_hosts=[...]) or the headerlock_allow_hosts ini option"
)


class Sealed(Protocol):
    """A lock that is sealed: the hosts it allows, and where it keeps refusals."""

    allow_hosts: frozenset[str]

    def refused(self, error: NetworkSealedError) -> None: ...


_guard = threading.RLock()
_sealed: list[Sealed] = []
_originals: dict[str, Any] = {}
_original_getaddrinfo: list[Any] = []
_resolved: dict[str, set[str]] = {}
"""The names ``socket.getaddrinfo`` resolved to each address while a lock was sealed: a
connection sees only the address, and ``allow_hosts`` may name the host."""


def allowed_hosts(hosts: Iterable[str]) -> frozenset[str]:
    """``hosts`` as the seal compares them: lower case, IP addresses normalized, and
    ``localhost`` standing for the loopback addresses too."""
    found: set[str] = set()
    for host in hosts:
        name = normal_host(str(host).strip())
        found.add(name)
        if name == "localhost":
            found.update(("127.0.0.1", "::1"))
    return frozenset(found)


def normal_host(host: str) -> str:
    """``host`` as the seal compares it: lower case, IP addresses normalized."""
    name = host.lower().strip("[]").split("%", 1)[0]
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return name
    mapped = getattr(address, "ipv4_mapped", None)
    return str(mapped or address)


def _deciding() -> list[Sealed]:
    """The sealed locks that decide for the running code: its owner when that is sealed;
    every sealed lock when the code belongs to no open lock; none when its owner records
    live."""
    owner = origins.owner()
    with _guard:
        sealed = list(_sealed)
    if owner is not None and owner in sealed:
        return [lock for lock in sealed if lock is owner]
    if owner is not None and getattr(owner, "is_open", False):
        return []
    return sealed


def check(host: str, port: object, *, what: str) -> None:
    """Raise ``NetworkSealedError`` when a sealed lock refuses ``what`` to ``host``."""
    deciding = _deciding()
    if not deciding:
        return
    name = normal_host(host)
    with _guard:
        names = {name} | _resolved.get(name, set())
    if all(names & lock.allow_hosts for lock in deciding):
        return
    aliases = sorted(names - {name})
    shown = f"{host}:{port}" + (f" ({', '.join(aliases)})" if aliases else "")
    error = NetworkSealedError(
        f"headerlock: {what} to {shown} refused: the wire lock is sealed (replay, or a"
        f" scripted record) and nothing leaves the process; {HOW_TO_ALLOW}",
        host=host,
    )
    for lock in deciding:
        lock.refused(error)
    raise error


def _guarded(original: Any, name: str) -> Any:
    def connect(self: socket.socket, address: Any, *args: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
            check(str(address[0]), address[1], what="a connection")
        return original(self, address, *args)

    connect.__name__ = name
    return connect


def _resolving(original: Any) -> Any:
    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        found = original(host, port, *args, **kwargs)
        if isinstance(host, bytes):
            host = host.decode("idna", errors="replace")
        if isinstance(host, str) and host:
            name = normal_host(host)
            with _guard:
                for *_, address in found:
                    if isinstance(address, tuple) and address:
                        _resolved.setdefault(normal_host(str(address[0])), set()).add(name)
        return found

    getaddrinfo.__wrapped__ = original  # type: ignore[attr-defined]
    return getaddrinfo


def seal(lock: Sealed) -> None:
    """Refuse connections for ``lock`` until ``unseal(lock)``."""
    with _guard:
        if not _sealed:
            for name in ("connect", "connect_ex"):
                _originals[name] = socket.socket.__dict__.get(name)  # None: inherited
                setattr(socket.socket, name, _guarded(getattr(socket.socket, name), name))
            _original_getaddrinfo.append(socket.getaddrinfo)
            socket.getaddrinfo = _resolving(socket.getaddrinfo)
        _sealed.append(lock)


def unseal(lock: Sealed) -> None:
    """Stop refusing for ``lock``; the last one restores the socket methods."""
    with _guard:
        if lock in _sealed:
            _sealed.remove(lock)
        if _sealed or not _originals:
            return
        for name, original in _originals.items():
            if original is None:
                delattr(socket.socket, name)
            else:
                setattr(socket.socket, name, original)
        _originals.clear()
        while _original_getaddrinfo:
            socket.getaddrinfo = _original_getaddrinfo.pop()
        _resolved.clear()
