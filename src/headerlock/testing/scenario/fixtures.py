"""Loading fixtures (the YAML files authors write) as ``Scenario`` objects, with the
registered drivers' config schemas."""

from __future__ import annotations

from pathlib import Path

from headerlock.formats.fixture import Scenario, load_fixture, parse_fixture
from headerlock.testing.scenario.drivers import DriverSchemas


def load_scenario(path: Path) -> Scenario:
    """Read and validate the fixture at ``path``; its ``app:`` must name a known driver."""
    return load_fixture(Path(path), DriverSchemas())


def parse_scenario(text: str, path: Path) -> Scenario:
    """Validate fixture ``text`` as if read from ``path``."""
    return parse_fixture(text, Path(path), DriverSchemas())
