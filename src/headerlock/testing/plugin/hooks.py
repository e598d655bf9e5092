"""The headerlock pytest plugin (entry point ``pytest11: headerlock``).

Collects ``fixtures/*.yaml`` as scenario items that replay their recording
(``pytest --snapshot-update`` records), plus one ``headerlock-guards`` item per
fixtures directory. Python tests that drive an ``AgentApp`` themselves use the
``headerlock_recorder`` fixture and the ``headerlock_pin`` marker; tests of any
other agent (the official SDKs, frameworks) use the ``headerlock_wire`` fixture
and marker (``headerlock.testing.plugin.wire_fixture``).

headerlock keeps its recordings' books itself (``headerlock.testing.plugin.updates``):
a recording is written only when its own item passed, and unused recordings are
removed only at the end of a whole, green session (the xdist controller decides
once for all workers). syrupy's snapshots in the same run are left to syrupy;
its ``--snapshot-update`` flag is the update flag.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from headerlock.errors import HeaderlockError
from headerlock.testing.plugin.nodes import FixturesDir, GuardsItem
from headerlock.testing.plugin.state import PATHS_KEY, record_mode, relative_to_cwd, updating

if TYPE_CHECKING:
    from headerlock.testing.plugin.items import Recorder
    from headerlock.testing.wire.run import WireRun


def _non_negative(text: str) -> int:
    """An option value that is a whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("headerlock", "headerlock: record and replay agent request headers")
    group.addoption(
        "--headerlock-live",
        action="store_true",
        default=False,
        help="take model output from the live OpenAI-compatible endpoint (HEADERLOCK_BASE_URL);"
        " with --snapshot-update, re-record against it",
    )
    group.addoption(
        "--headerlock-permutations",
        type=_non_negative,
        default=0,
        metavar="N",
        help="also run every scenario under N plugin registration orders and load schedules;"
        " any change in the recorded bytes fails the scenario",
    )
    group.addoption(
        "--headerlock-record",
        choices=("none", "new", "all"),
        default=None,
        help="none (default): replay, a missing recording is an error; new: record only the"
        " tests that have no recording, replay the rest; all: re-record every test (the same"
        " as --snapshot-update). Default: the headerlock_record ini option",
    )
    group.addoption(
        "--headerlock-no-pending",
        action="store_true",
        default=False,
        help="a replay that mismatches writes no <name>.yaml.new pending file (and answers the"
        " mismatching request with an HTTP 400 instead of the recorded response)",
    )
    group.addoption(
        "--headerlock-manifest",
        default=None,
        metavar="PATH",
        help="write this run's usage manifest (JSON: tests run, recordings used, written,"
        " pending) to PATH at the end; merge CI jobs' with: headerlock unused MANIFEST...",
    )
    parser.addini(
        "headerlock_manifest", "write the run's usage manifest to this path (rootdir-relative)"
    )
    parser.addini("headerlock_record", "record mode: none, new or all", default="none")
    parser.addini(
        "headerlock_ignore",
        "request paths never compared in any headerlock_wire test (config.seed,"
        " messages[*].content); one reaching no request of the session is reported",
        type="args",
    )
    group.addoption(
        "--headerlock-cache",
        nargs="?",
        const="report",
        default=None,
        choices=("report", "fail"),
        help="report every headerlock_wire test's prompt-cache breaks in the summary;"
        " =fail also fails the tests whose session has one (write it as --headerlock-cache=fail)",
    )
    group.addoption(
        "--headerlock-flakes-dump",
        dest="headerlock_flakes_dump",
        metavar="DIR",
        default=None,
        help="(what `headerlock flakes` runs) run only the headerlock_wire tests, sealed and"
        " recording nothing, and write each one's request headers to DIR",
    )
    parser.addini("headerlock_fixtures", "directory of scenario fixtures", default="fixtures")
    parser.addini("headerlock_recordings", "directory of recordings", default="recordings")
    parser.addini("headerlock_redact_env", "env vars whose values are secrets", type="args")
    parser.addini(
        "headerlock_allow_hosts",
        "hosts a sealed headerlock_wire test may open raw connections to (never model requests)",
        type="args",
    )
    parser.addini(
        "headerlock_cache",
        "report (or fail on) every headerlock_wire test's prompt-cache breaks: report, fail, off",
        default="",
    )
    parser.addini(
        "headerlock_require_pin",
        "fail the headerlock_wire tests of a header class that has no pinned test",
        type="bool",
        default=False,
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "headerlock_pin: the recording of this test keeps its full request header"
    )
    config.addinivalue_line(
        "markers", "headerlock_name(name): the recording name of this test (default: test name)"
    )
    config.addinivalue_line(
        "markers",
        "headerlock_wire(script=[...], redact_env=[...], redact=callable, ignore=[...],"
        " allow_hosts=[...], header_class=NAME): the headerlock_wire fixture's scripted model"
        " replies, extra secrets, request paths never compared, hosts let through and header"
        " class (default: one per test module)",
    )
    _check_ini(config)
    from headerlock.testing.wire.seal import watch  # before any test opens a connection

    watch()
    record_mode(config)  # a bad headerlock_record value is a usage error now
    _check_ignore(config)
    root = config.rootpath
    from headerlock.formats.secrets import redact_env  # both light: no heavy dependency
    from headerlock.runtime.plugins import add_import_root

    config.add_cleanup(add_import_root(root))  # fixtures' plugins: import from the rootdir
    from headerlock.formats.atomic import defer_directory_syncs

    config.add_cleanup(defer_directory_syncs())  # a directory fsync per session, not per file
    try:
        names = config.getini("headerlock_redact_env")
        config.add_cleanup(redact_env(names, source="headerlock_redact_env"))
    except HeaderlockError as error:
        raise pytest.UsageError(f"headerlock: {error}") from None
    fixtures = relative_to_cwd(root / str(config.getini("headerlock_fixtures")))
    recordings = relative_to_cwd(root / str(config.getini("headerlock_recordings")))
    config.stash[PATHS_KEY] = (fixtures, recordings)
    from headerlock.testing.plugin.updates import UPDATES_KEY, Updates

    updates = Updates(config, recordings=recordings, fixtures=fixtures, update=updating(config))
    config.stash[UPDATES_KEY] = updates
    config.pluginmanager.register(updates, "headerlock-updates")
    from headerlock.testing.plugin.manifest import install as install_manifest

    install_manifest(config, updates)  # --headerlock-manifest / headerlock_manifest
    from headerlock.testing.plugin.wire_classes import CLASSES_KEY, WireClasses

    classes = WireClasses(config, update=updating(config))
    config.stash[CLASSES_KEY] = classes
    config.pluginmanager.register(classes, "headerlock-wire-classes")
    from headerlock.testing.plugin.wire_cache import install

    install(config)  # --headerlock-cache / headerlock_cache: the cache report of wire tests


def _check_ini(config: pytest.Config) -> None:
    """Refuse directory settings that would silently collect nothing: an inline comment
    (ini values cannot carry one) or a fixtures directory that does not exist."""
    for name in ("headerlock_fixtures", "headerlock_recordings"):
        value = str(config.getini(name))
        if re.search(r"\s#", value):
            raise pytest.UsageError(
                f"headerlock: {name} = {value!r}: ini values cannot carry inline comments;"
                " put the comment on a line of its own"
            )
    value = str(config.getini("headerlock_fixtures"))
    fixtures = config.rootpath / value
    if value != "fixtures" and not fixtures.is_dir():  # set to a directory that is not there
        raise pytest.UsageError(
            f"headerlock: headerlock_fixtures = {value!r}: no such directory ({fixtures})"
        )


@pytest.hookimpl(tryfirst=True)  # before the terminal and --junitxml take the text
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """headerlock's failure text with control and bidi characters escaped."""
    from headerlock.testing.plugin.display import escape_report

    escape_report(report)


def _check_ignore(config: pytest.Config) -> None:
    """A ``headerlock_ignore`` rule the request's shape rules out (``config`` alone, a
    misshapen path) is a usage error before any test runs, not an error in every test."""
    from headerlock.formats.wire_ignore import parse_ignores

    try:
        parse_ignores(config.getini("headerlock_ignore") or (), where="headerlock_ignore")
    except HeaderlockError as error:
        raise pytest.UsageError(f"headerlock: {error}") from None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Project-wide guards run after the scenarios (whatever order other plugins chose);
    under ``headerlock flakes`` only the ``headerlock_wire`` tests run."""
    from headerlock.testing.plugin.flake_probe import deselect_unwired

    items.sort(key=lambda item: isinstance(item, GuardsItem))
    deselect_unwired(config, items)


def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    fixtures = parent.config.stash[PATHS_KEY][0]
    if path.resolve() == fixtures.resolve():
        return FixturesDir.from_parent(parent, path=path)
    return None


@pytest.fixture
def headerlock_recorder(request: pytest.FixtureRequest) -> Recorder:
    """Compare an ``AgentApp``'s session log with its recording,
    ``recordings/<test file without .py>/<test name>.yaml``."""
    from headerlock.testing.plugin.items import Recorder

    return Recorder(request)


@pytest.fixture
def headerlock_wire(request: pytest.FixtureRequest) -> Iterator[WireRun]:
    """Record or replay the model requests this test sends over HTTP (a wire ``lock()``) on
    ``recordings/<test file without .py>/<test name>.yaml``; yields the ``WireRun``."""
    from headerlock.testing.plugin.wire_fixture import open_wire

    yield from open_wire(request)
