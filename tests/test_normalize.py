"""Scrub, tokenize and restore."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from headerlock import TOOL_ORDER_REST, ToolSchema, order_tools
from headerlock.formats.scrub import (
    SYSTEM_PLACEHOLDER,
    TOOLS_PLACEHOLDER,
    restore_header,
    scrub_events,
    scrub_transcript,
)
from headerlock.runtime.header import RequestHeader
from headerlock.testing.project import Project

FIXTURES = Path(__file__).parents[1] / "fixtures"
RECORDINGS = Path(__file__).parents[1] / "recordings"


def raw_runs() -> list[tuple[str, list[dict[str, Any]], str]]:
    """Unscrubbed events of every bundled spine/stdio scenario (replayed, no network)."""
    project = Project(FIXTURES, RECORDINGS)
    runs = []
    for scenario in project.scenarios():
        if scenario.app == "acp":
            continue
        _, output = asyncio.run(project.replay(scenario))
        runs.append((scenario.name, output.events, output.workspace))
    return runs


RUNS = raw_runs()


def test_placeholders_ids_times_and_paths() -> None:
    events: list[dict[str, Any]] = [
        {"seq": 1, "type": "request/header", "data": {"header": {"config": {}, "system": "S", "tools": [{"name": "a"}]}, "reason": "initial"}},
        {"seq": 2, "type": "assistant/message", "data": {"content": "", "tool_calls": [{"id": "call_x9", "name": "a", "arguments": {"p": "/ws/f"}}]}},
        {"seq": 3, "type": "tool/result", "data": {"id": "call_x9", "name": "a", "content": "read /ws/f"}},
        {"seq": 4, "type": "request/header-delta", "data": {"tools": {"added": [{"name": "b", "description": "B"}], "removed": ["a"]}, "system": {"keep_start": 0, "keep_end": 0, "insert": ["new"]}}},
        {"seq": 5, "type": "turn/end", "data": {"turn": 1, "reason": {"kind": "stop", "step": 1}, "elapsed_ms": 17}},
    ]  # fmt: skip
    scrubbed = scrub_events(events, workspace="/ws")
    assert scrubbed[0]["data"]["header"] == {
        "config": {},
        "system": SYSTEM_PLACEHOLDER,
        "tools": TOOLS_PLACEHOLDER,
    }
    assert scrubbed[1]["data"]["tool_calls"][0] == {
        "id": "<<id:1>>",
        "name": "a",
        "arguments": {"p": "<<workspace>>/f"},
    }
    assert scrubbed[2]["data"] == {"id": "<<id:1>>", "name": "a", "content": "read <<workspace>>/f"}
    assert scrubbed[3]["data"] == {
        "tools": {"added": ["b"], "removed": ["a"]},
        "system": {"keep_start": 0, "keep_end": 0, "insert": SYSTEM_PLACEHOLDER},
    }
    assert scrubbed[4]["data"]["elapsed_ms"] == 0
    assert [e["seq"] for e in scrubbed] == [1, 2, 3, 4, 5]
    assert events[0]["data"]["header"]["system"] == "S", "the input is not modified"
    pinned = scrub_events(events, pinned=True, workspace="/ws")
    assert pinned[0]["data"]["header"]["tools"] == [{"name": "a"}]
    assert scrub_transcript([{"toolCallId": "call_x9", "cwd": "/ws"}], events, workspace="/ws") == [
        {"toolCallId": "<<id:1>>", "cwd": "<<workspace>>"}
    ]


def test_scrub_is_idempotent_on_real_runs() -> None:
    assert RUNS
    for name, events, workspace in RUNS:
        for pinned in (False, True):
            once = scrub_events(events, pinned=pinned, workspace=workspace)
            assert scrub_events(once, pinned=pinned, workspace=workspace) == once, name


@settings(max_examples=40)
@given(st.sampled_from(RUNS), st.randoms(use_true_random=False))
def test_scrub_is_idempotent_on_mutated_runs(run: Any, rng: Any) -> None:
    _, events, workspace = run
    mutated = [dict(e) for e in events]
    rng.shuffle(mutated)
    once = scrub_events(mutated, workspace=workspace)
    assert scrub_events(once, workspace=workspace) == once


def test_restore_of_scrubbed_pinned_header_is_identity() -> None:
    tools = (ToolSchema("read", "R"), ToolSchema("bash", "B"), ToolSchema("todo_write", "T"))
    for policy in (None, ["todo_write", TOOL_ORDER_REST]):
        header = RequestHeader({"model": "m"}, "system text", order_tools(tools, policy))
        scrubbed = scrub_events(
            [{"seq": 1, "type": "request/header", "data": {"header": header.to_data()}}]
        )
        assert restore_header(scrubbed[0]["data"]["header"], header, policy) == header
