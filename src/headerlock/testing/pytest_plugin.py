"""The headerlock pytest plugin (entry point ``pytest11: headerlock``).

Collects ``fixtures/*.yaml`` as scenario items that replay their recording
through a syrupy extension (``pytest --snapshot-update`` records), plus one
``headerlock-guards`` item per fixtures directory. Python tests that drive an
``AgentApp`` themselves use the ``headerlock_recorder`` fixture and the
``headerlock_pin`` marker.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.data import SnapshotCollection
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation
from syrupy.types import SerializableData, SerializedData

from headerlock.errors import HeaderlockError, SerializationError
from headerlock.formats.atomic import atomic_write

if TYPE_CHECKING:
    from headerlock.testing.project import Project
    from headerlock.testing.pytest_items import Recorder

PATHS_KEY = pytest.StashKey[tuple[Path, Path]]()
PROJECT_KEY = pytest.StashKey["Project"]()
EXTENSION_KEY = pytest.StashKey[type["RecordingExtension"]]()
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


def extension_of(config: pytest.Config) -> type[RecordingExtension]:
    """The syrupy extension writing into this session's recordings directory."""
    return config.stash[EXTENSION_KEY]


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
        if isinstance(data, KeptRecording):
            return data.text
        to_text = getattr(data, "to_text", None)
        if callable(to_text):  # a Recording (imported lazily)
            return str(to_text())
        raise SerializationError(f"headerlock snapshots are Recordings, got {type(data).__name__}")

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
            raise SerializationError(f"expected text to write, got {type(data).__name__}")
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
    config.stash[PATHS_KEY] = (fixtures, recordings)
    config.stash[EXTENSION_KEY] = type(
        "HeaderlockRecordings", (RecordingExtension,), {"recordings_dir": recordings}
    )
    if updating(config) and _xdist_workers(config):
        raise pytest.UsageError(
            "headerlock: --snapshot-update under pytest-xdist is refused (parallel updates can"
            " delete recordings other workers still need); record serially with"
            " `pytest -p no:xdist --snapshot-update` or `headerlock record`"
        )


def updating(config: pytest.Config) -> bool:
    """Whether this session records (``--snapshot-update``)."""
    return bool(getattr(config.option, "update_snapshots", False))


def _xdist_workers(config: pytest.Config) -> bool:
    numprocesses = getattr(config.option, "numprocesses", None)
    return bool(numprocesses) or hasattr(config, "workerinput")


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


class ScenarioFile(pytest.File):
    """A ``fixtures/<name>.yaml`` file: one replay item."""

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


def _run_scenario_item(request: pytest.FixtureRequest, snapshot: SnapshotAssertion) -> None:
    from headerlock.testing.pytest_items import run_scenario_item

    run_scenario_item(request, snapshot)


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
def headerlock_recorder(request: pytest.FixtureRequest, snapshot: SnapshotAssertion) -> Recorder:
    """Compare an ``AgentApp``'s session log with ``recordings/<test name>.yaml``."""
    from headerlock.testing.pytest_items import Recorder

    return Recorder(request, snapshot)
