"""Tool schemas and the tool registry (a member store in registration order)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from headerlock.errors import ToolRegistrationError
from headerlock.runtime.frozen import FrozenDict, deep_freeze, thaw

Dispose = Callable[[], None]
"""Undoes one registration."""


class Owner(Protocol):
    """What owns registrations (a plugin's ``Context``): it disposes them on unload."""

    def collect(self, dispose: Dispose) -> Dispose:
        """Take ``dispose`` to run when the owner is unloaded."""
        ...


ToolHandler = Callable[[Mapping[str, Any]], Any | Awaitable[Any]]
"""A tool handler receives the call's arguments and returns a result (or an awaitable)."""


@dataclass(frozen=True, slots=True)
class ToolSchema:
    """What the model sees of a tool: name, description and JSON-schema parameters."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=FrozenDict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ToolRegistrationError(
                f"tool name must be a non-empty string, got {self.name!r}", name=str(self.name)
            )
        if not isinstance(self.description, str):
            raise ToolRegistrationError(
                f"tool {self.name!r}: description must be a string", name=self.name
            )
        if not isinstance(self.parameters, Mapping):
            raise ToolRegistrationError(
                f"tool {self.name!r}: parameters must be a mapping", name=self.name
            )
        object.__setattr__(self, "parameters", deep_freeze(self.parameters))

    def to_data(self) -> dict[str, Any]:
        """Plain data (dicts and lists), as recorded in headers."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": thaw(self.parameters),
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> ToolSchema:
        """Inverse of :meth:`to_data`."""
        return cls(
            name=data["name"],
            description=data.get("description", ""),
            parameters=data.get("parameters", {}),
        )


@dataclass(frozen=True, slots=True)
class RegisteredTool:
    """A registry entry: the schema, its handler, and whether the model sees it."""

    schema: ToolSchema
    handler: ToolHandler | None = None
    hidden: bool = False


class _Store:
    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: dict[str, RegisteredTool] = {}


class ToolRegistry:
    """Registered tools, kept in registration order; it never sorts.

    Registered on a context as the ``tools`` service. Seen through a plugin's
    context, registrations are disposed with that plugin.
    """

    def __init__(self, *, _store: _Store | None = None, _owner: Owner | None = None) -> None:
        self._store = _store if _store is not None else _Store()
        self._owner = _owner

    def bind(self, ctx: Owner) -> ToolRegistry:
        """A view of the same registry whose registrations belong to ``ctx``."""
        return ToolRegistry(_store=self._store, _owner=ctx)

    def register(
        self, schema: ToolSchema, handler: ToolHandler | None = None, *, hidden: bool = False
    ) -> Dispose:
        """Add a tool; a name already registered raises ``ToolRegistrationError``.

        ``hidden`` tools are known (``known_names``) but not offered to the model.
        """
        if not isinstance(schema, ToolSchema):
            raise ToolRegistrationError(
                f"register() takes a ToolSchema, got {type(schema).__name__}",
                name=str(getattr(schema, "name", schema)),
            )
        entries = self._store.entries
        if schema.name in entries:
            raise ToolRegistrationError(
                f'tool "{schema.name}" is already registered', name=schema.name
            )
        entry = RegisteredTool(schema, handler, hidden)
        entries[schema.name] = entry

        def dispose() -> None:
            if entries.get(schema.name) is entry:
                del entries[schema.name]

        if self._owner is not None:
            self._owner.collect(dispose)
        return dispose

    def schemas(self) -> tuple[ToolSchema, ...]:
        """Schemas offered to the model, in registration order."""
        return tuple(e.schema for e in self._store.entries.values() if not e.hidden)

    def known_names(self) -> tuple[str, ...]:
        """Every registered name, hidden ones included, in registration order."""
        return tuple(self._store.entries)

    def get(self, name: str) -> RegisteredTool | None:
        """The entry registered under ``name``, if any."""
        return self._store.entries.get(name)
