"""What the pytest plugin's items and fixtures do when they run (imported on first use,
so that loading the plugin costs a project without headerlock items nothing)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from headerlock.errors import HeaderlockError, MissingRecordingError, ReplayMismatch
from headerlock.formats.fixture import Scenario, check_name
from headerlock.formats.recording import Recording, load_recording
from headerlock.formats.scrub import scrub_events
from headerlock.runtime.app import AgentApp
from headerlock.runtime.driver import ModelSource
from headerlock.testing.project import Project
from headerlock.testing.pytest_plugin import (
    KeptRecording,
    ScenarioItem,
    extension_of,
    project_of,
    updating,
)
from headerlock.testing.replay import (
    compare,
    compare_recordings,
    record_command,
    record_scenario,
    recorded_replies,
    replay_scenario,
)


def run_scenario_item(request: pytest.FixtureRequest, snapshot: SnapshotAssertion) -> None:
    """Replay (or, under ``--snapshot-update``, record) the item's scenario."""
    config = request.config
    project = project_of(config)
    item = request.node
    assert isinstance(item, ScenarioItem)
    assertion = snapshot.use_extension(extension_of(config))
    try:
        scenario = project.scenario(item.recording_name)
    except HeaderlockError:
        if updating(config):
            _keep(assertion, project.recording_path(item.recording_name))
        raise
    live = bool(config.getoption("headerlock_live"))
    permutations = int(config.getoption("headerlock_permutations"))
    asyncio.run(
        _check_scenario(
            project,
            scenario,
            assertion,
            update=updating(config),
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
    raise ReplayMismatch(
        f"{scenario.name}: recording differs; {record_command(scenario)}", scenario=scenario.name
    )


def run_guards(config: pytest.Config) -> None:
    """The project-wide guards: one pin per header class, normalized recordings, fresh pins."""
    asyncio.run(project_of(config).check_files())


class Recorder:
    """Normalizes an ``AgentApp``'s session log and compares it with its recording."""

    def __init__(self, request: pytest.FixtureRequest, snapshot: SnapshotAssertion) -> None:
        self._request = request
        self._snapshot = snapshot.use_extension(extension_of(request.config))

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
        path = project_of(self._request.config).recording_path(self.name)
        command = f"pytest --snapshot-update {node.nodeid}"
        if not path.exists():
            raise MissingRecordingError(
                f"no recording at {path.as_posix()}; record it with: {command}", scenario=self.name
            )
        compare_recordings(
            load_recording(path), actual, path=path, subject=f"test {node.nodeid}", command=command
        )
        raise ReplayMismatch(f"{node.nodeid}: recording differs; {command}", scenario=self.name)
