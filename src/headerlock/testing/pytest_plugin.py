"""The headerlock pytest plugin (entry point ``pytest11: headerlock``).

Collects ``fixtures/*.yaml`` as scenario items that replay their recording
through a syrupy extension (``pytest --snapshot-update`` records), plus one
``headerlock-guards`` item per fixtures directory. Python tests that drive an
``AgentApp`` themselves use the ``headerlock_recorder`` fixture and the
``headerlock_pin`` marker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.data import SnapshotCollection
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation
from syrupy.types import SerializableData, SerializedData

from headerlock.errors import HeaderlockError
from headerlock.formats.atomic import atomic_write
from headerlock.formats.fixture import Scenario, check_name
from headerlock.formats.recording import Recording, load_recording
from headerlock.formats.scrub import scrub_events
from headerlock.runtime.app import AgentApp
from headerlock.testing.project import Project, relative_to_cwd
from headerlock.testing.replay import (
    compare,
    compare_recordings,
    record_command,
    record_scenario,
    recorded_replies,
    replay_scenario,
)
from headerlock.testing.run import ModelSource

PROJECT_KEY = pytest.StashKey[Project]()
EXTENSION_KEY = pytest.StashKey[type["RecordingExtension"]]()
GUARDS_NAME = "headerlock-guards"


@dataclass(frozen=True, slots=True)
class KeptRecording:
    """An existing recording's text, asserted as is to keep it through an update."""

    text: str


class RecordingExtension(SingleFileSnapshotExtension):
    """Syrupy extension: one canonical YAML recording per scenario, in ``recordings/``."""

    _write_mode = WriteMode.TEXT
    file_extension = "yaml"
    recordings_dir: ClassVar[Path] = Path("recordings")

    def serialize(self, data: SerializableData, **kwargs: Any) -> SerializedData:
        if isinstance(data, Recording):
            return data.to_text()
        if isinstance(data, KeptRecording):
            return data.text
        raise TypeError(f"headerlock snapshots are Recordings, got {type(data).__name__}")

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(cls.recordings_dir)

    @classmethod
    def get_snapshot_name(cls, *, test_location: PyTestLocation, index: Any = 0) -> str:
        item = test_location.item
        name = getattr(item, "recording_name", None)
        if name is None:
            marker = item.get_closest_marker("headerlock_name")
            name = marker.args[0] if marker else item.name
        return str(name)

    @classmethod
    def write_snapshot_collection(
        cls, *, snapshot_collection: SnapshotCollection, name_order: dict[str, int] | None = None
    ) -> None:
        data = next(iter(snapshot_collection)).data
        if not isinstance(data, str):
            raise TypeError(f"expected text to write, got {type(data).__name__}")
        atomic_write(Path(snapshot_collection.location), data)


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
        type=int,
        default=0,
        metavar="N",
        help="also run every scenario under N plugin registration orders and load schedules;"
        " any change in the recorded bytes fails the scenario",
    )
    parser.addini("headerlock_fixtures", "directory of scenario fixtures", default="fixtures")
    parser.addini("headerlock_recordings", "directory of recordings", default="recordings")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "headerlock_pin: the recording of this test keeps its full request header"
    )
    config.addinivalue_line(
        "markers", "headerlock_name(name): the recording name of this test (default: test name)"
    )
    root = config.rootpath
    fixtures = relative_to_cwd(root / str(config.getini("headerlock_fixtures")))
    recordings = relative_to_cwd(root / str(config.getini("headerlock_recordings")))
    config.stash[PROJECT_KEY] = Project(fixtures, recordings)
    config.stash[EXTENSION_KEY] = type(
        "HeaderlockRecordings", (RecordingExtension,), {"recordings_dir": recordings}
    )
    if _updating(config) and _xdist_workers(config):
        raise pytest.UsageError(
            "headerlock: --snapshot-update under pytest-xdist is refused (parallel updates can"
            " delete recordings other workers still need); record serially with"
            " `pytest -p no:xdist --snapshot-update` or `headerlock record`"
        )


def _updating(config: pytest.Config) -> bool:
    return bool(getattr(config.option, "update_snapshots", False))


def _xdist_workers(config: pytest.Config) -> bool:
    numprocesses = getattr(config.option, "numprocesses", None)
    return bool(numprocesses) or hasattr(config, "workerinput")


def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    project = parent.config.stash[PROJECT_KEY]
    if path.resolve() == project.fixtures.resolve():
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


class ScenarioFile(pytest.File):
    """A ``fixtures/<name>.yaml`` file: one replay item."""

    def collect(self) -> Iterable[pytest.Item]:
        item = ScenarioItem.from_parent(self, name="replay", callobj=_replay_scenario_item)
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


def _replay_scenario_item(request: pytest.FixtureRequest, snapshot: SnapshotAssertion) -> None:
    config = request.config
    project = config.stash[PROJECT_KEY]
    item = request.node
    assert isinstance(item, ScenarioItem)
    assertion = snapshot.use_extension(config.stash[EXTENSION_KEY])
    try:
        scenario = project.scenario(item.recording_name)
    except HeaderlockError:
        if _updating(config):
            _keep(assertion, project.recording_path(item.recording_name))
        raise
    live = bool(config.getoption("headerlock_live"))
    permutations = int(config.getoption("headerlock_permutations"))
    asyncio.run(
        _check_scenario(
            project,
            scenario,
            assertion,
            update=_updating(config),
            live=live,
            permutations=permutations,
        )
    )


async def _check_scenario(
    project: Project,
    scenario: Scenario,
    snapshot: SnapshotAssertion,
    *,
    update: bool,
    live: bool,
    permutations: int,
) -> None:
    if update:
        existing = project.reusable_recording(scenario.name)
        recording, output = await record_scenario(scenario, existing=existing, live=live)
        assert snapshot == recording
    elif live:
        expected = project.require_recording(scenario)
        recording, output = await record_scenario(scenario, live=True)
        _compare(project, scenario, snapshot, expected, recording)
    else:
        expected = project.require_recording(scenario)
        recording, output = await replay_scenario(scenario, expected)
        _compare(project, scenario, snapshot, expected, recording)
    await project.check_pin_guard(scenario, output)
    if permutations > 0:
        from headerlock.testing.order_check import check_scenario_orders  # imports Hypothesis

        model = ModelSource(replies=recorded_replies(recording))
        await check_scenario_orders(scenario, model, permutations)


def _keep(snapshot: SnapshotAssertion, path: Path) -> None:
    """Mark an existing recording as used (unchanged), so an update never deletes it."""
    if path.exists():
        assert snapshot == KeptRecording(path.read_text(encoding="utf-8"))


def _compare(
    project: Project,
    scenario: Scenario,
    snapshot: SnapshotAssertion,
    expected: Recording,
    actual: Recording,
) -> None:
    if snapshot == actual:
        return
    compare(scenario, expected, actual, path=project.recording_path(scenario.name))
    raise AssertionError(f"{scenario.name}: recording differs; {record_command(scenario)}")


class GuardsItem(pytest.Item):
    """Project-wide guards: one pin per header class, normalized recordings, fresh pins."""

    def runtest(self) -> None:
        asyncio.run(self.config.stash[PROJECT_KEY].check_files())

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, "headerlock guards"

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, HeaderlockError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))


class Recorder:
    """Normalizes an ``AgentApp``'s session log and compares it with its recording."""

    def __init__(self, request: pytest.FixtureRequest, snapshot: SnapshotAssertion) -> None:
        self._request = request
        self._snapshot = snapshot.use_extension(request.config.stash[EXTENSION_KEY])

    @property
    def name(self) -> str:
        """The recording name: the ``headerlock_name`` marker, or the test's name."""
        marker = self._request.node.get_closest_marker("headerlock_name")
        raw = marker.args[0] if marker else self._request.node.name
        safe = "".join(c if c.isalnum() or c in "._-" else "-" for c in raw.lower()).strip("-.")
        return check_name(safe, path=str(self._request.node.path))

    def recording(self, app: AgentApp) -> Recording:
        """The normalized recording of ``app``'s session so far."""
        pinned = self._request.node.get_closest_marker("headerlock_pin") is not None
        return Recording(
            scenario=self.name,
            app="python",
            pinned=pinned,
            header_class="python",
            events=scrub_events(
                app.session.to_data(), pinned=pinned, workspace=str(app.workspace.resolve())
            ),
        )

    def assert_match(self, app: AgentApp) -> None:
        """Assert that ``app``'s normalized log equals ``recordings/<name>.yaml``."""
        actual = self.recording(app)
        node = self._request.node
        node.recording_name = self.name
        if self._snapshot == actual:
            return
        path = self._request.config.stash[PROJECT_KEY].recording_path(self.name)
        command = f"pytest --snapshot-update {node.nodeid}"
        if not path.exists():
            raise AssertionError(f"no recording at {path.as_posix()}; record it with: {command}")
        compare_recordings(
            load_recording(path), actual, path=path, subject=f"test {node.nodeid}", command=command
        )
        raise AssertionError(f"{node.nodeid}: recording differs; {command}")


@pytest.fixture
def headerlock_recorder(request: pytest.FixtureRequest, snapshot: SnapshotAssertion) -> Recorder:
    """Compare an ``AgentApp``'s session log with ``recordings/<test name>.yaml``."""
    return Recorder(request, snapshot)
