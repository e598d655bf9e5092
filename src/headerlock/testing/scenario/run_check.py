"""Whether a run made to record succeeded: the model gave every reply it was asked for.

A run whose model failed (a script that ran out, a live endpoint that is down or
answered with an error) must never become a recording: it would replace a good
one with a failed turn. Errors the fixture scripts on purpose (a reply with
``error:``) and turns that fail before reaching the model are part of the
scenario and do not count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from headerlock.errors import RecordingRunError
from headerlock.runtime.driver import ModelSource
from headerlock.runtime.session import ASSISTANT_ERROR, ASSISTANT_MESSAGE


def model_failure(model: ModelSource, events: Sequence[Mapping[str, Any]]) -> str | None:
    """What went wrong with the model in a run's raw ``events``, or ``None``."""
    answers = [e for e in events if e.get("type") in (ASSISTANT_MESSAGE, ASSISTANT_ERROR)]
    for index, event in enumerate(answers):
        if event["type"] != ASSISTANT_ERROR:
            continue
        data = event.get("data", {})
        where = f"turn {data.get('turn')}, step {data.get('step')}"
        message = str(data.get("message", ""))
        if model.replies is None:
            return f"the live model endpoint failed at {where}: {message}"
        if index >= len(model.replies):
            return (
                f"the model script ran out at {where}: the run asked for reply"
                f" {index + 1}, the script has {len(model.replies)}"
            )
        if model.replies[index].error is None:
            return f"the model failed at {where}: {message}"
    if model.replies is not None and len(answers) > len(model.replies):
        return (
            f"the model script ran out: the run asked for {len(answers)} replies,"
            f" the script has {len(model.replies)}"
        )
    return None


def check_recording_run(name: str, model: ModelSource, events: Sequence[Mapping[str, Any]]) -> None:
    """Raise ``RecordingRunError`` when the model of a recording run failed."""
    failure = model_failure(model, events)
    if failure is not None:
        raise RecordingRunError(f"scenario {name!r} was not recorded: {failure}", scenario=name)
