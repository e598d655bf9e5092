"""The driver registry: a fixture's ``app:`` names the driver that runs it.

``spine`` is built in; every other driver is an entry point in the
``headerlock.drivers`` group (``name = "package.module:driver_object"``),
loaded only when a fixture names it. ``register_driver`` adds one in process
(tests, notebooks). Drivers implement ``headerlock.runtime.driver.Driver``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import cast

from headerlock.errors import ConfigError, PluginError
from headerlock.runtime.config import Schema
from headerlock.runtime.driver import Driver, SpineDriver

__all__ = [
    "DriverSchemas",
    "available_drivers",
    "get_driver",
    "register_driver",
]

GROUP = "headerlock.drivers"

_registered: dict[str, Driver] = {"spine": SpineDriver()}
_loaded: dict[str, Driver] = {}


@functools.cache
def _entry_points() -> dict[str, EntryPoint]:
    found: dict[str, EntryPoint] = {}
    for point in sorted(entry_points(group=GROUP), key=lambda p: (p.name, p.value)):
        found.setdefault(point.name, point)
    return found


def available_drivers() -> tuple[str, ...]:
    """Every driver name that a fixture's ``app:`` may use, sorted."""
    return tuple(sorted({*_registered, *_entry_points()}))


def register_driver(driver: Driver) -> None:
    """Make ``driver`` available under ``driver.name`` in this process (it wins over
    an entry point of the same name)."""
    _registered[driver.name] = driver


def get_driver(name: str) -> Driver:
    """The driver called ``name``; an unknown name is a ``ConfigError`` listing the known ones."""
    if name in _registered:
        return _registered[name]
    if name in _loaded:
        return _loaded[name]
    point = _entry_points().get(name)
    if point is None:
        known = ", ".join(available_drivers())
        raise ConfigError(f"unknown app {name!r}; drivers: {known}", key="app")
    try:
        driver = point.load()
    except Exception as error:
        raise PluginError(
            f"driver {name!r} ({point.value}) failed to load: {type(error).__name__}: {error}",
            plugin=point.value,
        ) from None
    if not (hasattr(driver, "run") and isinstance(getattr(driver, "config_schema", None), type)):
        raise PluginError(
            f"driver {name!r} ({point.value}) is not a driver (needs run() and config_schema)",
            plugin=point.value,
        )
    _loaded[name] = cast("Driver", driver)
    return _loaded[name]


class DriverSchemas(Mapping[str, type[Schema]]):
    """``app:`` name → config schema, loading a driver only when its schema is asked for."""

    def __getitem__(self, name: str) -> type[Schema]:
        if name not in self:
            raise KeyError(name)
        return get_driver(name).config_schema

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in available_drivers()

    def __iter__(self) -> Iterator[str]:
        return iter(available_drivers())

    def __len__(self) -> int:
        return len(available_drivers())
