"""Installing the client modules while a lock is open: ``intercept``.

The first open lock installs every client module (each patches its library, if that
library is imported already); the last one to close uninstalls them. A client library
imported while a lock is open is patched right after its own code ran (``late``).
This module imports the client modules; they import only ``core`` (and
``sdk_patches`` the API registry), so nothing here imports back.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Final

from headerlock.testing.wire.clients import (
    aiohttp_client,
    core,
    httpx_client,
    sdk_patches,
    urllib3_client,
)
from headerlock.testing.wire.clients.late import LateImports
from headerlock.testing.wire.clients.libraries import DEFERRED, imported_only

CLIENTS: Final[tuple[ModuleType, ...]] = (
    httpx_client,
    aiohttp_client,
    urllib3_client,
    sdk_patches,
)
"""The client modules, in the order they are installed."""
_installed: list[ModuleType] = []
_late: list[LateImports] = []


def seen_clients() -> list[str]:
    """The libraries a lock sees requests of (installed here or not)."""
    return [name for module in CLIENTS for name in module.LIBRARIES]


@contextmanager
def intercept(interceptor: core.Interceptor) -> Iterator[None]:
    """Route the requests of the code ``interceptor`` owns to it for the block (every
    client module installed on the first, uninstalled after the last)."""
    with core.registry_lock:
        if not core.active:
            try:
                with imported_only():
                    for module in CLIENTS:
                        module.install()
                        _installed.append(module)
                _late.append(LateImports(DEFERRED, _install_late))
                _late[-1].enter()
            except BaseException:
                _uninstall_all()
                raise
        core.active.append(interceptor)
    try:
        yield
    finally:
        with core.registry_lock:
            core.active.remove(interceptor)
            if not core.active:
                _uninstall_all()


def _install_late(name: str) -> None:
    """The deferred library ``name`` was imported: install the client modules again
    (patching it) while a lock is open."""
    with core.registry_lock:
        if core.active:
            with imported_only(ready=name):
                for module in _installed:
                    module.install()


def _uninstall_all() -> None:
    while _late:
        _late.pop().leave()
    while _installed:
        _installed.pop().uninstall()
