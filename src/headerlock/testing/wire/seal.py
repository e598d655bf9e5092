"""The network seal: while a lock replays, or records from a script, nothing connects out.

Requests through a seen client are answered by the lock itself (``clients``); this is
the floor beneath them. An audit hook (``sys.addaudithook``, installed once by
``watch``) sees every ``socket.connect`` and ``connect_ex`` whatever made it (a
``socket.socket``, the C-level ``_socket.socket``, a method reference saved before the
lock) and every ``sendto``/``sendmsg`` with an address on a TCP socket (TCP Fast Open).
While a lock is sealed, such a connection to the internet (``AF_INET``/``AF_INET6``)
from code the sealed lock owns, or from code no lock owns, is refused with
``NetworkSealedError`` (a ``ConnectionRefusedError``) unless its host is allowed
(``allow_hosts=``, the marker's ``allow_hosts``, the ``headerlock_allow_hosts`` ini
option). A connection opened before the lock (a socket, a keep-alive
``http.client`` connection) is refused when it sends inside it: ``send``/``sendall``
of ``socket.socket`` and ``ssl.SSLSocket`` are wrapped while a lock is sealed. A
connection sees only an address, so ``socket.getaddrinfo`` is wrapped too, to remember
which names resolved to it (an allowed name allows its addresses). Each refusal is also
kept by the lock, which raises at exit, so an agent that swallows the error still
fails. Code owned by a lock that records live is never refused.

Not covered (the README lists them): the DNS lookup itself (it runs before the
connection is refused), UDP (``sendto`` on a datagram socket), child processes,
sockets that C extensions open without Python's ``socket`` module (uvloop, pycurl,
grpc's C core), and a connection opened before ``watch`` ran (the plugin runs it when
pytest starts; ``lock()`` when its module is imported) that sends inside a lock.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
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
_originals: dict[tuple[type, str], Any] = {}
_SENDS = ("send", "sendall")
_watching: list[bool] = []
_HOOK = "_headerlock_seal_audit"
"""Where ``sys`` keeps the audit function of the newest import of this module: one audit
hook per process forwards to it (hooks cannot be removed, and a test runner that imports
this module again must not pile them up)."""
_outside: dict[int, int] = {}
"""The file descriptor of each internet connection opened since ``watch``, and the port
it connected to (a descriptor closed and reused by another connection is told apart by
its peer's port): each send over one is checked again while a lock is sealed, so a
connection opened before the lock (or allowed by an earlier one) sends nothing out."""
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
        f"{what} to {shown} refused: the wire lock is sealed (replay, or a"
        f" scripted record) and nothing leaves the process; {HOW_TO_ALLOW}",
        host=host,
    )
    for lock in deciding:
        lock.refused(error)
    raise error


def _internet(sock: Any) -> bool:
    return getattr(sock, "family", None) in (socket.AF_INET, socket.AF_INET6)


def _is_tcp(sock: Any) -> bool:
    return int(getattr(sock, "type", -1)) & 0xF == socket.SOCK_STREAM


def watch() -> None:
    """Install the audit hook that seals connections (once per process; it does nothing
    while no lock is sealed but remember the connections opened outside one)."""
    with _guard:
        if _watching:
            return
        _watching.append(True)
        if getattr(sys, _HOOK, None) is None:
            sys.addaudithook(_forward)
        setattr(sys, _HOOK, _audit)


def _forward(event: str, args: tuple[Any, ...]) -> None:
    if event.startswith("socket."):  # every audited event comes here: opens, imports, ...
        getattr(sys, _HOOK)(event, args)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.connect":
        _connecting(*args)
    elif _sealed and (event == "socket.sendto" or event == "socket.sendmsg"):
        sock, address = args
        if _internet(sock) and _is_tcp(sock) and isinstance(address, tuple) and address:
            check(str(address[0]), address[1], what="a TCP Fast Open connection (sendto)")


def _connecting(sock: Any, address: Any) -> None:
    if not _internet(sock) or not isinstance(address, tuple) or len(address) < 2:
        return
    try:
        fd = sock.fileno()
    except OSError:
        return
    _outside.pop(fd, None)
    if _sealed:
        check(str(address[0]), address[1], what="a connection")
    _outside[fd] = address[1]


def _check_sending(sock: Any) -> None:
    """Refuse data sent over a connection the deciding locks would have refused to open
    (one opened before the lock: those it opened were checked already)."""
    try:
        port = _outside.get(sock.fileno())
        if port is None or not _is_tcp(sock):
            return
        peer = sock.getpeername()
    except OSError:
        return  # closed, or not connected: the send raises its own error
    if not isinstance(peer, tuple) or peer[1] != port:
        _outside.pop(sock.fileno(), None)  # the descriptor now holds another connection
        return
    check(str(peer[0]), peer[1], what="sending over a connection opened before the lock")


def _guarded(original: Any, name: str) -> Any:
    def send(self: socket.socket, *args: Any, **kwargs: Any) -> Any:
        if _sealed and _outside:
            _check_sending(self)
        return original(self, *args, **kwargs)

    send.__name__ = name
    return send


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


def _senders() -> list[type]:
    """The socket classes whose sends are wrapped (``ssl.SSLSocket`` once ``ssl`` is
    imported: it sends through its own methods)."""
    ssl = sys.modules.get("ssl")
    return [socket.socket, *([ssl.SSLSocket] if ssl is not None else [])]


def seal(lock: Sealed) -> None:
    """Refuse connections for ``lock`` until ``unseal(lock)``."""
    watch()
    with _guard:
        if not _sealed:
            for cls in _senders():
                for name in _SENDS:
                    _originals[cls, name] = cls.__dict__.get(name)  # None: inherited
                    setattr(cls, name, _guarded(getattr(cls, name), name))
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
        for (cls, name), original in _originals.items():
            if original is None:
                delattr(cls, name)
            else:
                setattr(cls, name, original)
        _originals.clear()
        while _original_getaddrinfo:
            socket.getaddrinfo = _original_getaddrinfo.pop()
        _resolved.clear()


watch()
