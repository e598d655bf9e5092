"""Loading fixtures (the YAML files authors write) as ``Scenario`` objects, with the
registered drivers' config schemas."""

from __future__ import annotations

from pathlib import Path

from headerlock.errors import ScenarioError
from headerlock.formats.fixture import Scenario, load_fixture, parse_fixture
from headerlock.formats.strict_yaml import locate, read_text
from headerlock.runtime.adapters.scripted import MATCH_ONLY_WIRE
from headerlock.testing.scenario.drivers import DriverSchemas, get_driver


def load_scenario(path: Path) -> Scenario:
    """Read and validate the fixture at ``path``; its ``app:`` must name a known driver."""
    return _match_checked(load_fixture(Path(path), DriverSchemas()), None)


def parse_scenario(text: str, path: Path) -> Scenario:
    """Validate fixture ``text`` as if read from ``path``."""
    return _match_checked(parse_fixture(text, Path(path), DriverSchemas()), text)


def _match_checked(scenario: Scenario, text: str | None) -> Scenario:
    """``scenario``, unless a ``model:`` reply has a ``match:`` its driver does not read
    (only drivers with ``accepts_match``, i.e. ``app: wire``, hand replies out by it)."""
    replies = scenario.model or ()
    found = next((i for i, reply in enumerate(replies) if reply.match is not None), None)
    if found is None or getattr(get_driver(scenario.app), "accepts_match", False):
        return scenario
    keys: list[str | int] = ["model", found, "match"]
    source = text if text is not None else read_text(scenario.path)
    raise ScenarioError(
        f"model[{found}].match: {MATCH_ONLY_WIRE}; app {scenario.app!r} answers its"
        " requests in order",
        path=str(scenario.path),
        line=locate(source, keys),
    )
