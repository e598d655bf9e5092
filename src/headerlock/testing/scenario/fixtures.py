"""Loading fixtures with the registered drivers' config schemas."""

from __future__ import annotations

from pathlib import Path

from headerlock.formats.fixture import Scenario, discover, parse_scenario
from headerlock.formats.fixture import load_scenario as _load
from headerlock.testing.scenario.drivers import DriverSchemas

__all__ = ["Scenario", "discover", "load_scenario", "parse_fixture"]


def load_scenario(path: Path) -> Scenario:
    """Read and validate the fixture at ``path``; its ``app:`` must name a known driver."""
    return _load(Path(path), DriverSchemas())


def parse_fixture(text: str, path: Path) -> Scenario:
    """Validate fixture ``text`` as if read from ``path``."""
    return parse_scenario(text, Path(path), DriverSchemas())
