"""Patching a client library imported while a lock is open, not before.

A lock patches the client libraries imported already (``libraries.imported_only``);
importing the others (aiohttp, legacy httpx, urllib3) only to patch them would cost
every lock's first entry their import time, used or not. ``LateImports`` watches those
names on ``sys.meta_path``: when one of them is imported while a lock is open, the
import runs as it would, and right after the library's own code the lock's client
modules are installed again, which patches it (installing is idempotent). The loader
is the library's own again once it ran.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import threading
from collections.abc import Callable, Collection, Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any


class _Loader(importlib.abc.Loader):
    """The library's loader, calling ``done(name)`` after the library's code ran."""

    def __init__(self, loader: Any, done: Callable[[str], None]) -> None:
        self._loader = loader
        self._done = done

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        module: ModuleType | None = self._loader.create_module(spec)
        return module

    def exec_module(self, module: ModuleType) -> None:
        try:
            self._loader.exec_module(module)
        finally:
            module.__loader__ = self._loader
            if module.__spec__ is not None:
                module.__spec__.loader = self._loader
        self._done(module.__name__)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


class LateImports(importlib.abc.MetaPathFinder):
    """Calls ``done(name)`` after any of ``names`` is imported (while it is on
    ``sys.meta_path``)."""

    def __init__(self, names: Collection[str], done: Callable[[str], None]) -> None:
        self.names = frozenset(names)
        self._done = done
        self._local = threading.local()

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname not in self.names or getattr(self._local, "busy", False):
            return None
        self._local.busy = True  # the real spec, from the finders after this one
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._local.busy = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        spec.loader = _Loader(spec.loader, self._done)
        return spec

    def enter(self) -> None:
        """Watch the imports (first on ``sys.meta_path``)."""
        if self not in sys.meta_path:
            sys.meta_path.insert(0, self)

    def leave(self) -> None:
        """Stop watching."""
        while self in sys.meta_path:
            sys.meta_path.remove(self)
