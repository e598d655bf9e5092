"""The faster paths give what the plain ones gave: loading, scrub checks, dumping in
chunks, cached recordings and plugins, frozen data, the progress line (no timings)."""

from __future__ import annotations

import gc
import io
import itertools
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from headerlock.agent import Recording
from headerlock.errors import PluginError
from headerlock.formats.canonical_yaml import dump, dump_chunks
from headerlock.formats.recording import load_recording, same_chunks
from headerlock.formats.scrub import is_scrubbed, scrub_events
from headerlock.formats.strict_yaml import loads, paused_gc, read_text
from headerlock.runtime.frozen import FrozenDict, deep_freeze, is_deep_frozen, thaw
from headerlock.runtime.header import RequestHeader
from headerlock.runtime.llm import ModelRequest
from headerlock.runtime.plugins import resolve_plugin
from headerlock.testing.scenario.progress import Progress, eta
from headerlock.testing.scenario.project import Project

ROOT = Path(__file__).parents[2]
CORPUS = sorted(
    p
    for folder in ("fixtures", "recordings", "tests/vectors", "benchmarks")
    for p in (ROOT / folder).rglob("*.yaml")
)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_corpus_file_loads_the_same_with_both_parsers(path: Path) -> None:
    text = read_text(path)
    fast, pure = loads(text), loads(text, pure=True)
    assert fast == pure
    assert json.dumps(fast, sort_keys=True) == json.dumps(pure, sort_keys=True)  # types too


def test_equal_strings_are_shared_and_the_data_is_unchanged() -> None:
    text = "a: [{type: x, seq: 1}, {type: x, seq: 2}]\nb: 'type'\nc: 0017\nd: '17'\n"
    data = loads(text)
    assert data == {"a": [{"type": "x", "seq": 1}, {"type": "x", "seq": 2}], "b": "type",
                    "c": 17, "d": "17"}  # fmt: skip
    first, second = data["a"]
    assert next(iter(first)) is next(iter(second))  # the key "type", one object
    assert first["type"] is second["type"]


@pytest.mark.parametrize("enabled", [True, False])
def test_a_load_restores_the_collector_state(enabled: bool) -> None:
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        loads("a: 1\n")
        with paused_gc():
            assert not gc.isenabled()
        assert gc.isenabled() is enabled
        with pytest.raises(ValueError, match="inside"), paused_gc():
            raise ValueError("inside")
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def _session_events() -> list[dict[str, Any]]:
    return load_recording(ROOT / "recordings" / "tool-turn.yaml").events


TEXT = st.sampled_from(
    ["call_1", "call_2", "<<id:1>>", "<<id:2>>", "x", "<<system>>", "sk-live-0123456789"]
)
VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | TEXT,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(TEXT, children, max_size=3),
    max_leaves=8,
)
EVENT = st.fixed_dictionaries(
    {
        "seq": st.integers(1, 5),
        "type": st.sampled_from(["assistant/message", "tool/call", "tool/result", "turn/end",
                                 "request/header", "request/header-delta", "user/message"]),
        "data": st.fixed_dictionaries(
            {},
            optional={
                "id": TEXT,
                "tool_calls": st.lists(st.fixed_dictionaries({}, optional={"id": TEXT, "name": TEXT}), max_size=2),
                "header": st.fixed_dictionaries({}, optional={"system": VALUE, "tools": VALUE}),
                "tools": st.fixed_dictionaries({}, optional={"added": st.lists(VALUE, max_size=2)}),
                "system": st.fixed_dictionaries({}, optional={"insert": VALUE}),
                "elapsed_ms": st.integers(0, 3),
                "content": VALUE,
            },
        ),
    }
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(events=st.lists(EVENT, max_size=5), pinned=st.booleans())
def test_is_scrubbed_is_a_scrub_fixed_point(events: list[dict[str, Any]], pinned: bool) -> None:
    assert is_scrubbed(events, pinned=pinned) == (scrub_events(events, pinned=pinned) == events)
    once = scrub_events(events, pinned=pinned)
    assert is_scrubbed(once, pinned=pinned)


def test_is_scrubbed_on_real_logs_and_tuples(monkeypatch: pytest.MonkeyPatch) -> None:
    events = _session_events()
    assert is_scrubbed(events)
    assert not is_scrubbed(tuple(events))  # a list is what scrubbing gives
    monkeypatch.setenv("HEADERLOCK_API_KEY", "call_1-and-more")
    changed = [{"seq": 1, "type": "tool/call", "data": {"id": "call_1-and-more"}}]
    assert not is_scrubbed(changed)
    assert is_scrubbed(scrub_events(changed))


@settings(max_examples=200, deadline=None)
@given(data=st.dictionaries(TEXT, VALUE, max_size=4) | st.lists(VALUE, max_size=6) | VALUE)
def test_dump_chunks_join_to_the_dump(data: Any) -> None:
    assert "".join(dump_chunks(data)) == dump(data)


def test_a_long_list_is_dumped_in_several_chunks() -> None:
    data = {"events": [{"seq": i, "type": "x"} for i in range(5000)], "version": 1}
    chunks = list(dump_chunks(data))
    assert len(chunks) > 2
    assert "".join(chunks) == dump(data)


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet="ab\n", max_size=12),
    other=st.text(alphabet="ab\n", max_size=12),
    cuts=st.lists(st.integers(0, 12), max_size=4),
    other_cuts=st.lists(st.integers(0, 12), max_size=4),
)
def test_same_chunks_compares_the_joined_text(
    text: str, other: str, cuts: list[int], other_cuts: list[int]
) -> None:
    def split(value: str, at: list[int]) -> list[str]:
        points = [0, *sorted(min(c, len(value)) for c in at), len(value)]
        return [value[a:b] for a, b in itertools.pairwise(points)]

    assert same_chunks(split(text, cuts), split(text, other_cuts))
    assert same_chunks(split(text, cuts), split(other, other_cuts)) == (text == other)


def test_same_text_of_recordings() -> None:
    recording = load_recording(ROOT / "recordings" / "tool-turn.yaml")
    twin = Recording(recording.scenario, recording.app, recording.pinned,
                     recording.header_class, [dict(e) for e in recording.events])  # fmt: skip
    assert recording.same_text(twin)
    twin.events[-1] = {**twin.events[-1], "seq": 99}
    assert not recording.same_text(twin)


def test_a_project_reads_each_recording_once_while_it_is_unchanged(tmp_path: Path) -> None:
    project = Project(tmp_path / "fixtures", tmp_path / "recordings")
    project.recordings.mkdir()
    source = ROOT / "recordings" / "tool-turn.yaml"
    path = project.recordings / "tool-turn.yaml"
    path.write_bytes(source.read_bytes())
    first = project.recording("tool-turn")
    assert first is not None and project.recording("tool-turn") is first
    path.write_bytes(source.read_bytes() + b"\n")  # another size: read again
    second = project.recording("tool-turn")
    assert second is not first and second == first
    replaced = tmp_path / "replacement.yaml"
    replaced.write_bytes(source.read_bytes())
    os.replace(replaced, path)  # an atomic write: another inode
    assert project.recording("tool-turn") is not second
    path.unlink()
    assert project.recording("tool-turn") is None


def test_a_project_reads_again_when_the_secrets_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = Project(tmp_path / "fixtures", tmp_path / "recordings")
    project.recordings.mkdir()
    path = project.recordings / "tool-turn.yaml"
    path.write_bytes((ROOT / "recordings" / "tool-turn.yaml").read_bytes())
    assert project.recording("tool-turn") is not None
    monkeypatch.setenv("HEADERLOCK_API_KEY", "Your notes say")  # now in the recording
    with pytest.raises(Exception, match="holds the value of HEADERLOCK_API_KEY"):
        project.recording("tool-turn")


def test_frozen_data_round_trips_and_views_behave_like_mappings() -> None:
    data = {"a": [1, {"b": (2, 3)}], "c": {"d": None}}
    frozen = deep_freeze(data)
    assert isinstance(frozen, FrozenDict) and is_deep_frozen(frozen)
    assert thaw(frozen) == {"a": [1, {"b": [2, 3]}], "c": {"d": None}}
    assert deep_freeze(frozen) is frozen
    assert list(frozen.keys()) == ["a", "c"] and "a" in frozen and "z" not in frozen
    assert frozen.get("z", 5) == 5 and dict(frozen.items())["c"] == FrozenDict({"d": None})
    assert not is_deep_frozen((frozen, [1]))
    with pytest.raises(TypeError):
        frozen["a"] = 1


def test_a_request_of_frozen_messages_equals_the_frozen_one() -> None:
    header = RequestHeader({"model": "m"}, "system", ())
    messages = ({"role": "user", "content": "hi"},)
    built = ModelRequest(header, messages)
    assert ModelRequest.of_frozen(header, built.messages) == built


def test_a_plugin_path_is_checked_again_when_its_target_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "fastpath_plugins.py").write_text("def plugin(ctx):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import fastpath_plugins  # type: ignore[import-not-found]

    assert resolve_plugin("fastpath_plugins:plugin") is fastpath_plugins.plugin
    assert resolve_plugin("fastpath_plugins:plugin") is fastpath_plugins.plugin
    monkeypatch.setattr(fastpath_plugins, "plugin", lambda: None)
    with pytest.raises(PluginError, match="takes \\(\\), not a context"):
        resolve_plugin("fastpath_plugins:plugin")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_line_shows_count_rate_and_time_left_on_terminals_only() -> None:
    now = [0.0]
    terminal = _Terminal()
    progress = Progress(terminal, 4, "runs", clock=lambda: now[0])
    now[0] = 2.0
    progress.update(1)
    assert progress.text() == "[#####...............] 1/4 runs  0.5/s  ETA 0:06"
    progress.finish()
    assert terminal.getvalue().endswith("\r\x1b[K")
    log = io.StringIO()
    quiet = Progress(log, 4, "runs")
    quiet.update(1)
    quiet.finish()
    assert log.getvalue() == ""
    tenths = Progress(log, 4, "runs", every_tenth=True)
    for done in range(1, 5):
        tenths.update(done)
    assert log.getvalue().splitlines() == [f"progress: {n}/4 runs" for n in range(1, 5)]
    assert (eta(9), eta(750), eta(3723)) == ("0:09", "12:30", "1:02:03")
