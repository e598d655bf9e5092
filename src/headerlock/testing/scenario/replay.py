"""Record and replay: run a scenario, normalize the run, compare it with the recording."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from headerlock.errors import MissingRecordingError, ReplayMismatch
from headerlock.formats.explain import explain
from headerlock.formats.fixture import Scenario
from headerlock.formats.recording import Recording
from headerlock.formats.scrub import scrub_events, scrub_transcript
from headerlock.runtime.adapters.recorded import replies_from_events
from headerlock.runtime.adapters.scripted import Reply
from headerlock.runtime.context import Plugin
from headerlock.runtime.driver import ModelSource, RunOutput
from headerlock.runtime.session import (
    ASSISTANT_CHUNK,
    ASSISTANT_ERROR,
    ASSISTANT_MESSAGE,
    STEP_START,
    Event,
)
from headerlock.testing.scenario.run import run_scenario
from headerlock.testing.scenario.run_check import check_recording_run


def record_scenario_command(scenario: Scenario) -> str:
    """How to re-record ``scenario``."""
    return (
        f"headerlock record {scenario.name}"
        f"   (or: pytest --snapshot-update {scenario.path.as_posix()})"
    )


def normalize_run(scenario: Scenario, output: RunOutput) -> Recording:
    """The recording a run gives: scrubbed events and transcript plus scenario facts."""
    events = scrub_events(output.events, pinned=scenario.pin, workspace=output.workspace)
    transcript = (
        scrub_transcript(output.transcript, output.events, workspace=output.workspace)
        if output.transcript is not None
        else None
    )
    return Recording(
        scenario=scenario.name,
        app=scenario.app,
        pinned=scenario.pin,
        header_class=scenario.header_class,
        events=events,
        transcript=transcript,
    )


def recorded_replies(recording: Recording) -> tuple[Reply, ...]:
    """The model output stored in ``recording``, one reply per step."""
    wanted = (STEP_START, ASSISTANT_CHUNK, ASSISTANT_MESSAGE, ASSISTANT_ERROR)
    events = [
        Event(e["type"], e["seq"], e["data"]) for e in recording.events if e["type"] in wanted
    ]
    return tuple(replies_from_events(events))


def model_for_recording(
    scenario: Scenario, existing: Recording | None, *, live: bool = False
) -> ModelSource:
    """Live, else the fixture's ``model:`` script, else an existing recording's output."""
    if live:
        return ModelSource(live=True)
    if scenario.model is not None:
        return ModelSource(replies=scenario.model)
    if existing is not None:
        return ModelSource(replies=recorded_replies(existing))
    raise MissingRecordingError(
        f"scenario {scenario.name!r} has no model script and no recording to take model output"
        f" from; add a `model:` list to {scenario.path.as_posix()} or record live"
        " (pytest --snapshot-update --headerlock-live, with HEADERLOCK_BASE_URL set)",
        scenario=scenario.name,
    )


async def record_scenario(
    scenario: Scenario,
    *,
    existing: Recording | None = None,
    live: bool = False,
    plugins: Sequence[Plugin] = (),
) -> tuple[Recording, RunOutput]:
    """Run ``scenario`` to make a new recording; a run whose model failed (a script that
    ran out, a failing live endpoint) raises ``RecordingRunError`` instead."""
    model = model_for_recording(scenario, existing, live=live)
    output = await run_scenario(scenario, model, plugins=plugins)
    check_recording_run(scenario.name, model, output.events)
    return normalize_run(scenario, output), output


async def replay_scenario(
    scenario: Scenario, recording: Recording, *, plugins: Sequence[Plugin] = ()
) -> tuple[Recording, RunOutput]:
    """Run ``scenario`` with the model output of ``recording``; no network."""
    model = ModelSource(replies=recorded_replies(recording))
    output = await run_scenario(scenario, model, plugins=plugins)
    return normalize_run(scenario, output), output


def assert_scenario_matches(
    scenario: Scenario, expected: Recording, actual: Recording, *, path: Path
) -> None:
    """Raise ``ReplayMismatch`` unless both recordings give the same bytes."""
    assert_recordings_match(
        expected,
        actual,
        path=path,
        subject=f"scenario {scenario.name!r}",
        command=record_scenario_command(scenario),
    )


def assert_recordings_match(
    expected: Recording, actual: Recording, *, path: Path, subject: str, command: str
) -> None:
    """Raise ``ReplayMismatch`` (what differs, where, how to re-record) unless the bytes match."""
    if expected.same_text(actual):
        return
    expected_text, actual_text = expected.to_text(), actual.to_text()
    detail = explain(
        expected.to_data(),
        actual.to_data(),
        expected_text=expected_text,
        actual_text=actual_text,
        names=(path.as_posix(), "this run"),
    )
    raise ReplayMismatch(
        f"{subject} no longer matches {path.as_posix()}\n{detail}\n\n"
        f"if the change is intended, re-record: {command}",
        scenario=actual.scenario,
    )
