"""The exception tree: one base, subclasses that carry structured fields."""

from __future__ import annotations

from collections.abc import Sequence


class HeaderlockError(Exception):
    """Base of every error headerlock raises on purpose."""


class ConfigError(HeaderlockError, ValueError):
    """A configuration value is invalid; ``key`` names it when known."""

    def __init__(self, message: str, *, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class ToolOrderError(ConfigError):
    """A ``tool_order`` policy is malformed or cannot be satisfied.

    ``kind`` is one of ``type``, ``duplicate``, ``missing-rest``,
    ``unregistered`` or ``reserved``; ``names`` are the offending names.
    """

    def __init__(self, message: str, *, kind: str, names: Sequence[str] = ()) -> None:
        super().__init__(message, key="tool_order")
        self.kind = kind
        self.names = tuple(names)


class ToolRegistrationError(HeaderlockError):
    """A tool could not be registered (for instance, its name is taken)."""

    def __init__(self, message: str, *, name: str) -> None:
        super().__init__(message)
        self.name = name


class ServiceNotFoundError(HeaderlockError, LookupError):
    """A service was requested from a context that does not provide it."""

    def __init__(self, name: str, available: Sequence[str]) -> None:
        known = ", ".join(sorted(available)) or "(none)"
        super().__init__(f"no service named {name!r} is provided; provided services: {known}")
        self.name = name


class PluginError(HeaderlockError):
    """A plugin could not be resolved, called or loaded."""

    def __init__(self, message: str, *, plugin: str) -> None:
        super().__init__(message)
        self.plugin = plugin
