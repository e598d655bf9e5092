"""The headerlock pytest plugin (entry point ``pytest11: headerlock``): every hook.

Collects ``fixtures/*.yaml`` as scenario items that replay their recording
(``pytest --snapshot-update`` records), plus one ``headerlock-guards`` item per
fixtures directory. Python tests that drive an ``AgentApp`` themselves use the
``headerlock_recorder`` fixture and the ``headerlock_pin`` marker; tests of any
other agent (the official SDKs, frameworks) use the ``headerlock_wire`` fixture
and marker (``headerlock.testing.plugin.wire_fixture``).

The state lives in one object, the ``HeaderlockSession`` (``session``) made in
``pytest_configure``: each hook here is a short call into it. headerlock keeps its
recordings' books itself: a recording is written only when its own item passed, and
unused recordings are removed only at the end of a whole, green session (the xdist
controller decides once for all workers). syrupy's snapshots in the same run are left
to syrupy; its ``--snapshot-update`` flag is an alias of ``--headerlock-record=all``.

This module stays light (pytest imports it at start-up): what a hook needs beyond the
stash is imported inside the hook.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from headerlock.testing.plugin.options import add_options
from headerlock.testing.plugin.state import (
    PATHS_KEY,
    SESSION_KEY,
    SESSION_NAME,
    record_mode,
    relative_to_cwd,
    session_of,
)

if TYPE_CHECKING:
    from headerlock.testing.plugin.items import Recorder
    from headerlock.testing.plugin.session import HeaderlockSession
    from headerlock.testing.wire.run import WireRun


_running: list[HeaderlockSession] = []
"""The sessions configured in this process, innermost last (``pytest_runtest_logreport``
is handed no config; a pytester run in the process nests one session in another)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "headerlock_pin: the recording of this test keeps its full request header"
    )
    config.addinivalue_line(
        "markers", "headerlock_name(name): the recording name of this test (default: test name)"
    )
    config.addinivalue_line(
        "markers",
        "headerlock_wire(mode=none|new|all, script=[...], redact_env=[...], redact=callable,"
        " ignore=[...], allow_hosts=[...], record_errors=bool, http_headers=[...],"
        " header_class=NAME): the headerlock_wire fixture's lock() keywords (checked by"
        " lock()) and its header class (default: one per test module)",
    )
    _check_ini(config)
    from headerlock.testing.wire.seal import watch  # before any test opens a connection

    watch()
    record_mode(config)  # a bad headerlock_record value is a usage error now
    _check_ignore(config)
    root = config.rootpath
    from headerlock.errors import HeaderlockError  # all light: no heavy dependency
    from headerlock.formats.secrets import redact_env
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
    from headerlock.testing.plugin.session import HeaderlockSession

    session = HeaderlockSession(config)  # the books, classes, call phase, cache, manifest
    config.stash[SESSION_KEY] = session
    config.pluginmanager.register(session, SESSION_NAME)
    _running.append(session)


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(SESSION_KEY, None)
    if session in _running:
        _running.remove(session)


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
    """headerlock's failure text with control and bidi characters escaped; then the
    session notes the report."""
    from headerlock.testing.plugin.display import escape_report

    escape_report(report)
    if _running:
        _running[-1].logged(report)


def _check_ignore(config: pytest.Config) -> None:
    """A ``headerlock_ignore`` rule the request's shape rules out (``config`` alone, a
    misshapen path) is a usage error before any test runs, not an error in every test."""
    from headerlock.errors import HeaderlockError
    from headerlock.formats.wire_ignore import parse_ignores

    try:
        parse_ignores(config.getini("headerlock_ignore") or (), where="headerlock_ignore")
    except HeaderlockError as error:
        raise pytest.UsageError(f"headerlock: {error}") from None


@pytest.hookimpl(wrapper=True, trylast=True)  # innermost: the result before --lf filters it
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    report = yield
    session_of(collector.config).collected(collector, report)
    return report


@pytest.hookimpl(trylast=True)  # after other plugins chose their order
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Pins first under an update, project-wide guards after the scenarios; under
    ``headerlock flakes`` only the ``headerlock_wire`` tests run."""
    session_of(config).sort(items)


def pytest_collection_finish(session: pytest.Session) -> None:
    session_of(session.config).collection_finished(session)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    __tracebackhide__ = True
    return (yield from session_of(item.config).call(item))


@pytest.hookimpl(wrapper=True, tryfirst=True)  # outermost: after xfail had its say
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    session_of(item.config).made_report(item, call, report)
    return report


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    session_of(node.config).node_down(node, error)


@pytest.hookimpl(trylast=True)  # the manifest sees the final exit status
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    session_of(session.config).finish(session, exitstatus)


@pytest.hookimpl(tryfirst=True)  # before other plugins' sections (syrupy's report)
def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """One ``headerlock`` section (none when there is nothing to say)."""
    from headerlock.testing.plugin.display import summary_line

    lines = session_of(config).summary()
    if lines:
        terminalreporter.section("headerlock")
    for line in lines:
        summary_line(terminalreporter, line)


def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    fixtures = parent.config.stash[PATHS_KEY][0]
    if path.resolve() != fixtures.resolve():
        return None
    from headerlock.testing.plugin.nodes import FixturesDir

    return FixturesDir.from_parent(parent, path=path)


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
