"""One helper for the lazy public modules (``headerlock``, ``headerlock.wire``,
``headerlock.strategies``).

Each facade declares one table, ``{defining module: (public names, ...)}``; from it
come its ``__all__`` (sorted), its module ``__getattr__`` (import on first use, then
cache on the module) and its ``__dir__``. A name appears once in a table, so a facade
can never hold two objects under one name. A facade may also list names that *moved*
to another public module: they still resolve, with a ``DeprecationWarning`` naming the
new home, and stay out of ``__all__`` and ``__dir__``.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any

Table = Mapping[str, Sequence[str]]


class Facade:
    """The lazy members of the public module ``name``, from its table."""

    def __init__(
        self,
        name: str,
        table: Table,
        namespace: MutableMapping[str, Any],
        moved: Mapping[str, str] | None = None,
    ) -> None:
        homes: dict[str, str] = {}
        for module, names in table.items():
            for public in names:
                if public in homes:
                    raise ValueError(f"{name}: {public!r} listed twice ({homes[public]}, {module})")
                homes[public] = module
        self.name = name
        self.homes: Mapping[str, str] = homes
        self._namespace = namespace
        self.all: list[str] = sorted(homes)
        self.moved: Mapping[str, str] = dict(moved or {})
        for public in self.moved:
            if public in homes:
                raise ValueError(f"{name}: {public!r} is both public and moved")

    def getattr(self, attribute: str) -> object:
        """Resolve ``attribute`` from its defining module and cache it."""
        module = self.homes.get(attribute)
        if module is None and attribute in self.moved:
            home = self.moved[attribute]
            warnings.warn(
                f"{self.name}.{attribute} moved: import it from {home} "
                f"(the old name goes away in the next release)",
                DeprecationWarning,
                stacklevel=2,
            )
            return getattr(importlib.import_module(home), attribute)
        if module is None:
            raise AttributeError(f"module {self.name!r} has no attribute {attribute!r}")
        value = getattr(importlib.import_module(module), attribute)
        self._namespace[attribute] = value
        return value

    def dir(self) -> list[str]:
        return sorted(set(self._namespace) | set(self.homes))


def facade(
    name: str,
    table: Table,
    namespace: MutableMapping[str, Any],
    moved: Mapping[str, str] | None = None,
) -> tuple[list[str], Callable[[str], object], Callable[[], list[str]]]:
    """``(__all__, __getattr__, __dir__)`` for the public module ``name``."""
    members = Facade(name, table, namespace, moved)
    namespace["__facade__"] = members
    return members.all, members.getattr, members.dir
