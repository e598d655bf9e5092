"""What the pytest plugin's items and fixtures do when they run (imported on first use,
so that loading the plugin costs a project without headerlock items nothing)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from headerlock.errors import MissingRecordingError, ReplayMismatch
from headerlock.formats.fixture import Scenario
from headerlock.formats.header_lock import LOCK_NAME
from headerlock.formats.pending import pending_path
from headerlock.formats.recording import Recording, load_recording, save_recording
from headerlock.formats.scrub import scrub_events
from headerlock.runtime.app import AgentApp
from headerlock.runtime.driver import ModelSource
from headerlock.testing.plugin.state import (
    pending_enabled,
    project_of,
    record_test_command,
    records_missing,
    updating,
)
from headerlock.testing.plugin.updates import (
    claim,
    claim_recording,
    note_matched,
    recording_name_of,
    stage,
    stage_after,
    updates_of,
)
from headerlock.testing.scenario import pending
from headerlock.testing.scenario.project import Project
from headerlock.testing.scenario.replay import (
    assert_recordings_match,
    assert_scenario_matches,
    record_scenario,
    record_scenario_command,
    recorded_replies,
    replay_scenario,
)


def run_scenario_item(request: pytest.FixtureRequest, name: str) -> None:
    """Replay (or, under ``--snapshot-update``, record) the scenario ``name``."""
    config = request.config
    project = project_of(config)
    item = request.node
    path = project.recording_path(name)
    claim(item, path)
    scenario = project.scenario(name)
    asyncio.run(
        _check_scenario(
            item,
            project,
            scenario,
            path,
            update=records_missing(config, path),
            live=bool(config.getoption("headerlock_live")),
            permutations=int(config.getoption("headerlock_permutations")),
        )
    )


async def _check_scenario(
    item: pytest.Item,
    project: Project,
    scenario: Scenario,
    path: Path,
    *,
    update: bool,
    live: bool,
    permutations: int,
) -> None:
    if update:
        existing = project.reusable_recording(scenario.name)
        with project.noting_incomplete(scenario):  # a run that hung is not run again
            recording, output = await record_scenario(scenario, existing=existing, live=live)
        recording = project.with_header_ids(scenario, recording, output)
    else:
        expected = project.require_recording(scenario)
        with project.noting_incomplete(scenario):
            if live:
                recording, output = await record_scenario(scenario, live=True)
            else:
                recording, output = await replay_scenario(scenario, expected)
        recording = project.check_header_lock(scenario, expected, recording, output)
        try:
            _compare(scenario, path, expected, recording)
        except ReplayMismatch as error:
            if not project.pending:
                raise
            found = pending.pend(path, recording, error)
            updates_of(item.config).ledger.pending.add(str(pending_path(path).resolve()))
            raise found from None
        if project.pending:
            pending.clear(path)
    await project.check_pin_guard(scenario, output)
    if permutations > 0:
        from headerlock.testing.order.plugin_orders import (
            check_scenario_orders,  # imports Hypothesis
        )

        model = ModelSource(replies=recorded_replies(recording))
        await check_scenario_orders(scenario, model, permutations)
    if update:
        stage(item, path, recording.to_text(), lambda: save_recording(recording, path))
        if project.header_locked(scenario):
            lock = project.recordings / LOCK_NAME
            stage_after(item, lock, lambda: project.lock_headers(scenario, output))
    else:
        note_matched(item, path)


def _compare(scenario: Scenario, path: Path, expected: Recording, actual: Recording) -> None:
    if _text(path) == actual.to_text():
        return
    assert_scenario_matches(scenario, expected, actual, path=path)
    raise ReplayMismatch(
        f"{scenario.name}: recording differs; {record_scenario_command(scenario)}",
        scenario=scenario.name,
    )


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def run_guards(config: pytest.Config) -> None:
    """The project-wide guards: pins, header locks, normalized recordings, fresh pins."""
    asyncio.run(project_of(config).check_files(updating=updating(config)))


class Recorder:
    """Normalizes an ``AgentApp``'s session log and compares it with its recording."""

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self._request = request

    @property
    def name(self) -> str:
        """The recording name: the ``headerlock_name`` marker, or the test's name in its
        file (``Class.test[param]``)."""
        return recording_name_of(self._request.node)

    @property
    def path(self) -> Path:
        """``recordings/<test file without .py>/<encoded name>.yaml``, claimed for this test."""
        return claim_recording(self._request.node, fixture="headerlock_recorder")

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
        """Assert that ``app``'s normalized log equals the test's recording. Recording
        (``--snapshot-update``, or ``--headerlock-record=new`` with no recording yet)
        writes it once the test has passed; a mismatch writes ``<name>.yaml.new``
        (unless ``--headerlock-no-pending``)."""
        path = self.path
        actual = self.recording(app)
        node = self._request.node
        config = self._request.config
        if records_missing(config, path):
            stage(node, path, actual.to_text(), lambda: save_recording(actual, path))
            return
        if _text(path) == actual.to_text():
            note_matched(node, path)
            if pending_enabled(config):
                pending.clear(path)
            return
        from headerlock.testing.plugin.call_phase import verdict  # a failure, xfail or not

        command = record_test_command(node)
        if not path.exists():
            raise verdict(
                node,
                MissingRecordingError(
                    f"no recording at {path.as_posix()}; record it with: {command}",
                    scenario=self.name,
                ),
            )
        try:
            assert_recordings_match(
                load_recording(path),
                actual,
                path=path,
                subject=f"test {node.nodeid}",
                command=command,
            )
            raise ReplayMismatch(f"{node.nodeid}: recording differs; {command}", scenario=self.name)
        except ReplayMismatch as error:
            if not pending_enabled(config):
                raise verdict(node, error) from None
            found = pending.pend(path, actual, error)
            updates_of(config).ledger.pending.add(str(pending_path(path).resolve()))
            raise verdict(node, found) from None
