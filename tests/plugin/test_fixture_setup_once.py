"""The fixture's per-test set-up done once (issue 31): the plugin's markers found in one
walk of a test's markers are the ones ``get_closest_marker`` finds, and the session's
record mode, worked out once, is the one ``record_mode`` says."""

from __future__ import annotations

import pytest

from headerlock.testing.plugin import wire_fixture
from headerlock.testing.plugin.state import record_mode
from headerlock.testing.plugin.wire_classes import MARKER, PIN_MARKER

SOURCE = """
import pytest

pytestmark = [pytest.mark.headerlock_wire(mode="new"), pytest.mark.skip]

def test_module_level(): pass

@pytest.mark.headerlock_pin
@pytest.mark.headerlock_wire(redact_env=["A_TOKEN"])
def test_own(): pass

@pytest.mark.headerlock_wire(allow_hosts=["example.org"])
class TestClass:
    @pytest.mark.headerlock_pin
    def test_in_class(self): pass

    @pytest.mark.headerlock_wire(mode="all")
    @pytest.mark.headerlock_wire(mode="none")
    def test_twice(self): pass
"""


def test_one_walk_finds_the_closest_marker_of_each_name(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SOURCE)
    items, _ = pytester.inline_genitems()
    assert len(items) == 4
    for item in items:
        found = wire_fixture._closest(item)
        for name in (MARKER, PIN_MARKER):
            assert found.get(name) is item.get_closest_marker(name), (item.nodeid, name)
    assert {item.name: sorted(wire_fixture._closest(item)) for item in items} == {
        "test_module_level": [MARKER],
        "test_own": sorted([MARKER, PIN_MARKER]),
        "test_in_class": sorted([MARKER, PIN_MARKER]),
        "test_twice": [MARKER],
    }


@pytest.mark.parametrize("args", [(), ("--headerlock-record=new",), ("--snapshot-update",)])
def test_the_session_mode_is_record_modes(pytester: pytest.Pytester, args: tuple[str]) -> None:
    pytester.makeini("[pytest]\nheaderlock_record = new\n")
    config = pytester.parseconfigure(*args)
    expected = record_mode(config)
    assert wire_fixture._mode(config, None) == expected == wire_fixture._mode(config, None)
    assert wire_fixture._mode(config, "all") == record_mode(config, "all")
    assert wire_fixture._mode(config, "none") == record_mode(config, "none")
