"""Header classes of ``headerlock_wire`` tests: which tests share a header, and its pin.

A test using the ``headerlock_wire`` fixture belongs to the class its marker names,
``@pytest.mark.headerlock_wire(header_class="NAME")``, by default to the class of its
module (named by the module's node id, ``tests/test_agent.py``). The class's pin is
its one test marked ``@pytest.mark.headerlock_pin``; after every other test of the
class ran, the guard (``wire_guard``) checks its requests against the headers the pin
recorded. A class with no pin is unchecked: the terminal summary names it with its
tests, and the ini option ``headerlock_require_pin = true`` fails them.

The classes come from collection (every test the run collected, selected or not), so
each xdist worker knows them alike; what the summary needs travels from the workers to
the controller. Under ``--snapshot-update`` a class's pin runs before its other tests,
so that they are checked against what it records in the same run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import pytest

from headerlock.testing.plugin.state import session_of

FIXTURE: Final = "headerlock_wire"
MARKER: Final = "headerlock_wire"
PIN_MARKER: Final = "headerlock_pin"
REQUIRE_PIN_INI: Final = "headerlock_require_pin"
WORKER_OUTPUT: Final = "headerlock_wire_classes"
MAX_NAMED: Final = 10


@dataclass(frozen=True, slots=True)
class HeaderClass:
    """One header class: its name, its collected tests and those marked as its pin."""

    name: str
    members: tuple[pytest.Item, ...]
    pins: tuple[pytest.Item, ...]

    @property
    def pin(self) -> pytest.Item | None:
        """The class's pin when it has exactly one."""
        return self.pins[0] if len(self.pins) == 1 else None

    def member_ids(self) -> list[str]:
        """Its tests' node ids, in collection order."""
        return [item.nodeid for item in self.members]


def is_pinned(item: pytest.Item) -> bool:
    """Whether ``item`` is marked ``@pytest.mark.headerlock_pin``."""
    return item.get_closest_marker(PIN_MARKER) is not None


def uses_wire(node: object) -> bool:
    """Whether ``node`` is a test that uses the ``headerlock_wire`` fixture."""
    return isinstance(node, pytest.Item) and FIXTURE in getattr(node, "fixturenames", ())


def default_class(item: pytest.Item) -> str:
    """The class of a test whose marker names none: its module's node id."""
    module = item.getparent(pytest.Module)
    return module.nodeid if module is not None else item.nodeid.split("::")[0]


def class_name(item: pytest.Item) -> str:
    """The header class ``item``'s marker names, else its module's. A malformed
    ``header_class`` falls back to the default here; the fixture reports it."""
    marker = item.get_closest_marker(MARKER)
    name = None if marker is None else marker.kwargs.get("header_class")
    return name if isinstance(name, str) and name.strip() else default_class(item)


def _named(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:MAX_NAMED])
    return shown if len(ids) <= MAX_NAMED else f"{shown}, ... and {len(ids) - MAX_NAMED} more"


def unchecked_message(name: str, tests: Sequence[str]) -> str:
    """Why a class with no pin is unchecked, and how to pin one of ``tests``."""
    return (
        f"header class {name!r} has no pinned test, so nothing checks the system prompt and"
        " tools its tests send; mark exactly one of them @pytest.mark.headerlock_pin (then"
        f" record it with pytest --snapshot-update): {_named(tests)}"
    )


def pins_message(header_class: HeaderClass) -> str:
    """The usage error of a class with more than one pin, naming them."""
    pins = [item.nodeid for item in header_class.pins]
    return (
        f"header class {header_class.name!r} has {len(pins)} pinned tests ({_named(pins)});"
        " keep exactly one @pytest.mark.headerlock_pin, or give the others another"
        ' @pytest.mark.headerlock_wire(header_class="...") (a parametrized pin is one pin'
        " per parameter: pin one with pytest.param(..., marks=pytest.mark.headerlock_pin))"
    )


def build_classes(items: Iterable[pytest.Item]) -> dict[str, HeaderClass]:
    """The header classes of the wire tests among ``items``, by name."""
    members: dict[str, list[pytest.Item]] = {}
    for item in items:
        if uses_wire(item):
            members.setdefault(class_name(item), []).append(item)
    return {
        name: HeaderClass(name, tuple(tests), tuple(t for t in tests if is_pinned(t)))
        for name, tests in members.items()
    }


def pins_first(items: Sequence[pytest.Item], classes: Mapping[str, HeaderClass]) -> list[str]:
    """``items`` reordered so that each class's pin runs right before the first other
    selected test of its class (every other test keeps its place); node ids returned."""
    position = {item.nodeid: n for n, item in enumerate(items)}
    moved: dict[str, str] = {}  # the member a pin moves before -> the pin
    for header_class in classes.values():
        pin = header_class.pin
        if pin is None or pin.nodeid not in position:
            continue
        first = min(position.get(m.nodeid, len(items)) for m in header_class.members)
        if first < position[pin.nodeid]:
            moved[items[first].nodeid] = pin.nodeid
    pins = set(moved.values())
    order: list[str] = []
    for item in items:
        if item.nodeid in moved:
            order.append(moved[item.nodeid])
        if item.nodeid not in pins:
            order.append(item.nodeid)
    return order


@dataclass(slots=True)
class ClassBook:
    """What the summary says about classes, mergeable across xdist workers: the
    unchecked classes with their tests, and the tests a guard could not check."""

    unchecked: dict[str, list[str]] = field(default_factory=dict)
    unguarded: dict[str, dict[str, str]] = field(default_factory=dict)
    """class -> test -> why its guard could not check"""

    def to_data(self) -> dict[str, Any]:
        """Plain data (what a worker sends)."""
        return {"unchecked": self.unchecked, "unguarded": self.unguarded}

    def merge(self, data: Mapping[str, Any]) -> None:
        """Add a worker's book."""
        for name, tests in data.get("unchecked", {}).items():
            self.unchecked.setdefault(name, list(tests))
        for name, notes in data.get("unguarded", {}).items():
            self.unguarded.setdefault(name, {}).update(notes)

    def lines(self) -> list[str]:
        """The summary lines (each shown after ``headerlock:``)."""
        out = [f"unchecked: {unchecked_message(n, t)}" for n, t in sorted(self.unchecked.items())]
        for name, notes in sorted(self.unguarded.items()):
            for why in sorted(set(notes.values())):
                tests = sorted(test for test, reason in notes.items() if reason == why)
                out.append(
                    f"header class {name!r}: the guard could not check {_named(tests)}: {why}"
                )
        return out


class WireClasses:
    """The session's header classes and their summary (a part of the session)."""

    def __init__(self, config: pytest.Config, *, update: bool) -> None:
        self.config = config
        self.update = update
        self.require_pin = bool(config.getini(REQUIRE_PIN_INI))
        self.is_worker = hasattr(config, "workerinput")
        self.classes: dict[str, HeaderClass] = {}
        self.book = ClassBook()
        self._seen: dict[str, pytest.Item] = {}
        self._of: dict[str, str] = {}

    def collected(self, report: pytest.CollectReport) -> None:
        """Note the wire tests a collector collected (before ``--lf`` narrows a module)."""
        if report.passed:
            for node in report.result:
                if uses_wire(node):
                    assert isinstance(node, pytest.Item)
                    self._seen.setdefault(node.nodeid, node)

    def sort(self, items: list[pytest.Item]) -> None:
        """Build the classes from everything collected; under ``--snapshot-update`` each
        class's pin moves before its class's other tests."""
        for item in items:
            if uses_wire(item):
                self._seen.setdefault(item.nodeid, item)
        self.classes = build_classes(self._seen.values())
        self._of = {m.nodeid: c.name for c in self.classes.values() for m in c.members}
        if self.update:
            by_id = {item.nodeid: item for item in items}
            items[:] = [by_id[nodeid] for nodeid in pins_first(items, self.classes)]

    def class_of(self, item: pytest.Item) -> HeaderClass:
        """``item``'s header class (a class of its own when collection did not see it)."""
        name = self._of.get(item.nodeid)
        if name is None:
            name = class_name(item)
            found = self.classes.get(name)
            members = (*(found.members if found else ()), item)
            pins = tuple(m for m in members if is_pinned(m))
            self.classes[name] = HeaderClass(name, members, pins)
            self._of[item.nodeid] = name
        return self.classes[name]

    def note_ran(self, header_class: HeaderClass) -> None:
        """A test of ``header_class`` runs: an unchecked class goes into the summary."""
        if not header_class.pins and header_class.name not in self.book.unchecked:
            self.book.unchecked[header_class.name] = header_class.member_ids()

    def note_unguarded(self, header_class: HeaderClass, item: pytest.Item, why: str) -> None:
        """The guard could not check ``item`` (its pin has no recording yet)."""
        self.book.unguarded.setdefault(header_class.name, {})[item.nodeid] = why

    def node_down(self, node: Any) -> None:
        """An xdist worker ended: merge its book."""
        data = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT)
        if data is not None:
            self.book.merge(data)

    def finish(self) -> None:
        """A worker hands its book to the controller."""
        if self.is_worker:
            self.config.workeroutput[WORKER_OUTPUT] = self.book.to_data()  # type: ignore[attr-defined]


def classes_of(config: pytest.Config) -> WireClasses:
    """The session's header classes (``HeaderlockSession.classes``)."""
    return session_of(config).classes
