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
from contextlib import suppress
from typing import Any

Found = dict[str, Any]
Absent = dict[str, tuple[str, ...]]


def find_library(name: str, found: Found, absent: Absent, *submodules: str) -> Any | None:
    """The library ``name`` (its ``submodules`` imported too), or ``None`` when it is not
    installed; ``found`` and ``absent`` are the caller's caches."""
    module = found.get(name)
    if module is not None and sys.modules.get(name) is module:
        return module
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
