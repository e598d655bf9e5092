"""What every client module needs to patch its library: find it, patch, restore.

``find_library`` imports an installed library (and the submodules the patch needs) once,
and remembers a missing one with the ``sys.path`` it was looked for on, so a lock on a
machine without it costs no stat per lock. ``Patches`` keeps what was patched, so each
class is patched once however many modules alias it, and restores it all.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

Found = dict[str, Any]
Absent = dict[str, tuple[str, ...]]


DEFERRED: set[str] = set()
"""Libraries ``find_library`` left unimported while ``imported_only`` (``late`` patches
them when they are imported)."""
_imported_only: list[bool] = [False]
_ready: list[str | None] = [None]


@contextmanager
def imported_only(ready: str | None = None) -> Iterator[None]:
    """In the block, ``find_library`` finds only libraries imported already (the others
    are added to ``DEFERRED``, not imported: a lock does not pay for importing a client
    its code never uses); ``ready`` is one whose own code just ran (``late``)."""
    _imported_only[0], _ready[0] = True, ready
    try:
        yield
    finally:
        _imported_only[0], _ready[0] = False, None


def find_library(name: str, found: Found, absent: Absent, *submodules: str) -> Any | None:
    """The library ``name`` (its ``submodules`` imported too), or ``None`` when it is not
    installed (or, under ``imported_only``, not imported yet); ``found`` and ``absent``
    are the caller's caches."""
    module = found.get(name)
    if module is not None and sys.modules.get(name) is module:
        return module
    if _imported_only[0] and not _imported(name):
        DEFERRED.add(name)
        return None
    if absent.get(name) == tuple(sys.path):
        return None  # not installed: searching sys.path again on every lock costs a stat each
    if importlib.util.find_spec(name) is None:
        absent[name] = tuple(sys.path)
        return None
    with suppress(ImportError):
        module = importlib.import_module(name)
        for submodule in submodules:
            importlib.import_module(f"{name}.{submodule}")
        found[name] = module
        return module
    return None


def _imported(name: str) -> bool:
    """Whether ``name`` is imported (not still running its code, in another thread:
    waiting for it could deadlock; ``late`` patches it when it is done)."""
    module = sys.modules.get(name)
    spec = getattr(module, "__spec__", None)
    ready = name == _ready[0]
    return module is not None and (ready or not getattr(spec, "_initializing", False))


class Patches:
    """The methods a client module patched, to restore them."""

    def __init__(self) -> None:
        self._done: list[tuple[type[Any], str, Any]] = []

    def patch(self, cls: type[Any], method: str, wrap: Any) -> None:
        """Replace ``cls.method`` by ``wrap(original)``, unless ``cls`` is patched already
        (an alias of a class patched under another name)."""
        if any(done is cls for done, _, _ in self._done):
            return
        original = cls.__dict__[method]
        setattr(cls, method, wrap(original))
        self._done.append((cls, method, original))

    def restore(self) -> None:
        """Put back every patched method, newest first."""
        while self._done:
            cls, method, original = self._done.pop()
            setattr(cls, method, original)

    def classes(self) -> list[type[Any]]:
        """The classes patched right now (for tests and diagnostics)."""
        return [cls for cls, _, _ in self._done]
