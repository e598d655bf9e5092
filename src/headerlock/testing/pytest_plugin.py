"""The headerlock pytest plugin (entry point ``pytest11: headerlock``).

Collects ``fixtures/*.yaml`` as scenario items that replay their recording
(``pytest --snapshot-update`` records), plus one ``headerlock-guards`` item per
fixtures directory. Python tests that drive an ``AgentApp`` themselves use the
``headerlock_recorder`` fixture and the ``headerlock_pin`` marker; tests of any
other agent (the official SDKs, frameworks) use the ``headerlock_wire`` fixture
and marker (``headerlock.testing.wire.pytest_fixture``).

headerlock keeps its recordings' books itself (``headerlock.testing.updates``):
a recording is written only when its own item passed, and unused recordings are
removed only at the end of a whole, green session (the xdist controller decides
once for all workers). syrupy's snapshots in the same run are left to syrupy;
its ``--snapshot-update`` flag is the update flag.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest

from headerlock.errors import HeaderlockError

if TYPE_CHECKING:
    from headerlock.testing.project import Project
    from headerlock.testing.pytest_items import Recorder
    from headerlock.testing.wire.lock import WireRun

PATHS_KEY = pytest.StashKey[tuple[Path, Path]]()
PROJECT_KEY = pytest.StashKey["Project"]()
GUARDS_NAME = "headerlock-guards"


def relative_to_cwd(path: Path) -> Path:
    """``path`` relative to the working directory when it lies below it (for messages)."""
    absolute = path.resolve()
    try:
        return absolute.relative_to(Path.cwd().resolve())
    except ValueError:
        return absolute


def project_of(config: pytest.Config) -> Project:
    """The session's ``Project``, built on first use (it imports the fixture machinery)."""
    if PROJECT_KEY not in config.stash:
        from headerlock.testing.project import Project

        config.stash[PROJECT_KEY] = Project(*config.stash[PATHS_KEY])
    return config.stash[PROJECT_KEY]


def recording_path(item: pytest.Item, *, fixture: str = "headerlock_wire") -> Path:
    """Where the Python test ``item`` keeps its recording, claimed for ``fixture``:
    ``recordings/<test file without .py>/<test name>.yaml`` (names encoded
    reversibly, see ``headerlock.testing.names``). Two tests on one file raise
    ``RecordingClashError``."""
    from headerlock.testing.updates import recording_path as claim_path

    return claim_path(item, fixture=fixture)


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
    parser.addini("headerlock_fixtures", "directory of scenario fixtures", default="fixtures")
    parser.addini("headerlock_recordings", "directory of recordings", default="recordings")
    parser.addini("headerlock_redact_env", "env vars whose values are secrets", type="args")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "headerlock_pin: the recording of this test keeps its full request header"
    )
    config.addinivalue_line(
        "markers", "headerlock_name(name): the recording name of this test (default: test name)"
    )
    config.addinivalue_line(
        "markers",
        "headerlock_wire(script=[...], redact_env=[...]): the headerlock_wire fixture's scripted"
        " model replies and extra secret environment variables",
    )
    _check_ini(config)
    root = config.rootpath
    from headerlock.formats.secrets import redact_env  # both light: no heavy dependency
    from headerlock.runtime.plugins import add_import_root

    config.add_cleanup(add_import_root(root))  # fixtures' plugins: import from the rootdir
    try:
        names = config.getini("headerlock_redact_env")
        config.add_cleanup(redact_env(names, source="headerlock_redact_env"))
    except HeaderlockError as error:
        raise pytest.UsageError(f"headerlock: {error}") from None
    fixtures = relative_to_cwd(root / str(config.getini("headerlock_fixtures")))
    recordings = relative_to_cwd(root / str(config.getini("headerlock_recordings")))
    config.stash[PATHS_KEY] = (fixtures, recordings)
    from headerlock.testing.updates import UPDATES_KEY, Updates

    updates = Updates(config, recordings=recordings, fixtures=fixtures, update=updating(config))
    config.stash[UPDATES_KEY] = updates
    config.pluginmanager.register(updates, "headerlock-updates")


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


def updating(config: pytest.Config) -> bool:
    """Whether this session records (``--snapshot-update``)."""
    return bool(getattr(config.option, "update_snapshots", False))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Project-wide guards run after the scenarios (whatever order other plugins chose)."""
    items.sort(key=lambda item: isinstance(item, GuardsItem))


def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    fixtures = parent.config.stash[PATHS_KEY][0]
    if path.resolve() == fixtures.resolve():
        return FixturesDir.from_parent(parent, path=path)
    return None


class FixturesDir(pytest.Directory):
    """The fixtures directory: one file node per scenario, then the guards item."""

    def collect(self) -> Iterable[pytest.Item | pytest.Collector]:
        for path in sorted(self.path.glob("*.yaml")):
            if path.is_file() and not self.ihook.pytest_ignore_collect(
                collection_path=path, config=self.config
            ):
                yield ScenarioFile.from_parent(self, path=path)
        yield GuardsItem.from_parent(self, name=GUARDS_NAME)


class ScenarioFile(pytest.Module):
    """A ``fixtures/<name>.yaml`` file: one replay item.

    A ``Module`` (with an empty module object, nothing is imported) so that
    module-scoped fixtures of other plugins (pytest-recording, pytest-asyncio)
    find the node they expect above the item.
    """

    def _getobj(self) -> ModuleType:
        module = ModuleType(f"headerlock_fixture:{self.path.stem}")
        module.__file__ = str(self.path)
        return module

    def collect(self) -> Iterable[pytest.Item]:
        item = ScenarioItem.from_parent(self, name="replay", callobj=_run_scenario_item)
        item.recording_name = self.path.stem
        yield item


class ScenarioItem(pytest.Function):
    """Replays one scenario (records it under ``--snapshot-update``)."""

    recording_name: str

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"scenario {self.path.stem}"

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, HeaderlockError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))


def _run_scenario_item(request: pytest.FixtureRequest) -> None:
    from headerlock.testing.pytest_items import run_scenario_item

    run_scenario_item(request)


class GuardsItem(pytest.Item):
    """Project-wide guards: one pin per header class, normalized recordings, fresh pins."""

    def runtest(self) -> None:
        from headerlock.testing.pytest_items import run_guards

        run_guards(self.config)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, "headerlock guards"

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, HeaderlockError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))


@pytest.fixture
def headerlock_recorder(request: pytest.FixtureRequest) -> Recorder:
    """Compare an ``AgentApp``'s session log with its recording,
    ``recordings/<test file without .py>/<test name>.yaml``."""
    from headerlock.testing.pytest_items import Recorder

    return Recorder(request)


@pytest.fixture
def headerlock_wire(request: pytest.FixtureRequest) -> Iterator[WireRun]:
    """Record or replay the model requests this test sends over HTTP (a wire ``lock()``) on
    ``recordings/<test file without .py>/<test name>.yaml``; yields the ``WireRun``."""
    from headerlock.testing.wire.pytest_fixture import open_wire

    yield from open_wire(request)
