"""Wire format version 3 (issue 31): a request whose messages begin with an earlier
request's whole list is written as its continuation (``continues: N`` and only the
messages after N's), so a growing session takes space linear in its messages.

A user's project (``tests/test_agent.py``, an agent on the real ``openai`` SDK at the
loopback model server) records a growing conversation, replays it green, and fails a
changed middle message with the words a full (version 2) recording gives; a hostile
``continues`` is one line naming the file, the request and the key; and for any
entries, what is written reads back as the full lists version 2 wrote.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import openai  # noqa: F401  (imported once: in-process runs reuse the SDK)
import pytest
from hypothesis import given, strategies as st

import headerlock.testing.plugin.wire_fixture  # noqa: F401  (loaded once: in-process runs reuse it)
from headerlock.cli import main
from headerlock.errors import WireRecordingError
from headerlock.formats import canonical_read, wire_continuations
from headerlock.formats.canonical_yaml import dump
from headerlock.formats.wire_recording import (
    WIRE_MAX_DEPTH,
    WireEntry,
    WireRecording,
    load_wire_recording,
    parse_wire_recording,
)
from headerlock.formats.wire_response import WireResponse
from headerlock.runtime.canonical import canonical_json
from tests.model_server import ModelServer

AGENT = """
import os

import openai


def session(turns):
    client = openai.OpenAI(
        base_url=os.environ["AGENT_BASE_URL"], api_key="sk-test-not-a-real-key-0001", max_retries=0
    )
    messages = [{"role": "system", "content": "You are terse."}]
    answers = []
    for turn in turns:
        messages.append({"role": "user", "content": turn})
        while True:
            reply = client.chat.completions.create(model="gpt-test", messages=messages)
            message = reply.choices[0].message
            said = {"role": "assistant", "content": message.content}
            if not message.tool_calls:
                messages.append(said)
                break
            said["tool_calls"] = [call.model_dump() for call in message.tool_calls]
            messages.append(said)
            for call in message.tool_calls:
                messages.append(
                    {"role": "tool", "tool_call_id": call.id, "content": "notes: " + turn}
                )
        answers.append(message.content)
    return answers
"""

TESTS = """
import os

from agent import session


def test_session(headerlock_wire):
    turns = ["plan the trip", "book the train", "find a hotel", "sum it up"]
    turns[1] = os.environ.get("AGENT_TURN_2", turns[1])
    assert session(turns) == ["ok 1", "ok 2", "ok 3", "ok 4"]
"""

INI = """[pytest]
pythonpath = tests
addopts = -p no:randomly -p no:cacheprovider
"""

REPLIES: list[Any] = [
    {"tool_calls": [{"name": "search", "arguments": {"q": "trip"}, "id": "call_a1"}]},
    {"text": "ok 1"},
    {"text": "ok 2"},
    {"tool_calls": [{"name": "search", "arguments": {"q": "hotel"}, "id": "call_b2"}]},
    {"text": "ok 3"},
    {"text": "ok 4"},
]
"""Six requests: each sends the whole conversation so far, two of them after a tool call."""
RECORDING = "recordings/tests/test_agent/test_session.yaml"


@pytest.fixture
def project(
    pytester: pytest.Pytester, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> pytest.Pytester:
    """The user's project with its growing session recorded."""
    monkeypatch.delenv("AGENT_TURN_2", raising=False)
    pytester.makeini(INI)
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "agent.py").write_text(AGENT)
    (pytester.path / "tests" / "test_agent.py").write_text(TESTS)
    model_server.script(REPLIES)
    monkeypatch.setenv("AGENT_BASE_URL", model_server.base_url)
    result = pytester.runpytest_inprocess("--snapshot-update")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    return pytester


def full_form(recording: WireRecording) -> str:
    """The text version 2 wrote: every request's whole message list."""
    data = recording.to_data()
    data["version"] = 2
    data["requests"] = [entry.to_data() for entry in recording.requests]
    return dump(data)


def test_a_growing_session_is_written_as_continuations_and_replays_green(
    project: pytest.Pytester,
) -> None:
    path = project.path / RECORDING
    text = path.read_text()
    recording = load_wire_recording(path)
    data = canonical_read.read(text, max_depth=WIRE_MAX_DEPTH)  # the fast path takes it
    assert isinstance(data, dict) and data["version"] == 3
    written = data["requests"]
    assert [r.get("continues") for r in written] == [None, 1, 2, 3, 4, 5]
    assert [len(r["messages"]) for r in written] == [1, 2, 2, 2, 2, 2]  # only the new ones
    assert written[3]["messages"] == [
        {"content": "ok 2", "role": "assistant"},
        {"content": "find a hotel", "role": "user"},
    ]
    assert [len(e.messages) for e in recording.requests] == [1, 3, 5, 7, 9, 11]  # whole
    assert recording.requests[5].messages[0] == {"content": "plan the trip", "role": "user"}
    assert len(text) < len(full_form(recording))
    result = project.runpytest_inprocess()
    result.assert_outcomes(passed=1)
    assert "older format" not in result.stdout.str()
    assert path.read_text() == text


def _mismatch(output: str) -> list[str]:
    """The failure's own lines: from the mismatch headline to the end of its diff."""
    lines = output.splitlines()
    start = next(n for n, line in enumerate(lines) if "does not match the recording" in line)
    end = next(n for n, line in enumerate(lines) if " headerlock " in line and "===" in line)
    return [re.sub(r"^E\s+", "", line) for line in lines[start:end]]


def test_a_changed_middle_message_fails_with_the_words_of_a_full_recording(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = project.path / RECORDING
    monkeypatch.setenv("AGENT_TURN_2", "book a plane")
    continued = project.runpytest_inprocess()
    continued.assert_outcomes(failed=1)
    got = _mismatch(continued.stdout.str())
    assert "request 3 (openai.chat) messages: messages[4].content: 'book the train' ->" in (
        "\n".join(got)
    )  # numbered in the whole list, as the agent sent it
    for pending in path.parent.glob("*.new"):
        pending.unlink()
    path.write_text(full_form(load_wire_recording(path)))  # the same session, as v2 wrote it
    full = project.runpytest_inprocess()
    full.assert_outcomes(failed=1)
    assert _mismatch(full.stdout.str()) == got


def test_migrate_writes_a_version_2_session_as_a_fresh_record_writes_it(
    project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    path = project.path / RECORDING
    fresh = path.read_text()
    old = full_form(load_wire_recording(path))
    path.write_text(old)
    assert load_wire_recording(path).migrated_from == 2
    result = project.runpytest_inprocess()
    result.assert_outcomes(passed=1)  # a version 2 file still replays, and is not rewritten
    assert "1 recording in an older format version replayed" in result.stdout.str()
    assert path.read_text() == old
    assert main(["migrate", str(project.path / "recordings")]) == 0
    assert "wire format version 2 -> migrated" in capsys.readouterr().out
    assert path.read_text() == fresh


# -- hostile files -----------------------------------------------------------------------


def _entry(messages: Any, **more: Any) -> dict[str, Any]:
    return {
        "api": "openai.chat",
        "config": {"model": "m"},
        "messages": messages,
        "path": "/v1/chat/completions",
        "response": {"content_type": "application/json", "json": {}, "status": 200},
        "system": "<<system>>",
        "tool_names": [],
        "tools": "<<tools>>",
        **more,
    }


def _text(*entries: dict[str, Any], version: int = 3) -> str:
    return dump({"kind": "wire", "version": version, "pinned": False, "requests": list(entries)})


HI = {"content": "hi", "role": "user"}
MORE = {"content": "more", "role": "user"}


@pytest.mark.parametrize(
    ("entries", "key", "reason"),
    [
        ([_entry([HI]), _entry([MORE], continues="1")], "requests[1].continues", "must be the number of an earlier request, got '1'"),
        ([_entry([HI]), _entry([MORE], continues=True)], "requests[1].continues", "must be the number of an earlier request, got True"),
        ([_entry([HI]), _entry([MORE], continues=1.0)], "requests[1].continues", "must be the number of an earlier request, got 1.0"),
        ([_entry([HI]), _entry([MORE], continues=None)], "requests[1].continues", "must be the number of an earlier request, got None"),
        ([_entry([HI]), _entry([MORE], continues="x" * 99)], "requests[1].continues", f"must be the number of an earlier request, got '{'x' * 36}..."),
        ([_entry([HI]), _entry([MORE], continues=0)], "requests[1].continues", "request 2 can continue request 1 to 1 (requests are numbered from 1), got 0"),
        ([_entry([HI]), _entry([MORE], continues=-1)], "requests[1].continues", "request 2 can continue request 1 to 1 (requests are numbered from 1), got -1"),
        ([_entry([HI]), _entry([MORE], continues=2)], "requests[1].continues", "request 2 can continue request 1 to 1 (requests are numbered from 1), got 2"),
        ([_entry([HI]), _entry([MORE], continues=10**99)], "requests[1].continues", f"request 2 can continue request 1 to 1 (requests are numbered from 1), got 1{'0' * 36}..."),
        ([_entry([HI]), _entry([MORE], continues=3), _entry([HI])], "requests[1].continues", "request 2 can continue request 1 to 1 (requests are numbered from 1), got 3"),
        ([_entry([HI], continues=2), _entry([MORE], continues=1)], "requests[0].continues", "request 1 has no earlier request to continue"),
        ([_entry([HI]), _entry([HI], continues=3), _entry([MORE], continues=2)], "requests[1].continues", "request 2 can continue request 1 to 1 (requests are numbered from 1), got 3"),
        ([_entry("hi"), _entry([MORE], continues=1)], "requests[1].continues", "request 1 has no list of messages to continue"),
        ([_entry([]), _entry([MORE], continues=1)], "requests[1].continues", "request 1 has no list of messages to continue"),
        ([_entry([HI]), _entry("more", continues=1)], "requests[1].messages", "must be a list (the messages after those of request 1), got str"),
        ([_entry([HI]), {k: v for k, v in _entry([], continues=1).items() if k != "messages"}], "requests[1].messages", "missing: a request that continues an earlier one lists the messages after that one's"),
    ],
)  # fmt: skip
def test_a_bad_continuation_is_one_line_naming_the_file_request_and_key(
    tmp_path: Path, entries: list[dict[str, Any]], key: str, reason: str
) -> None:
    path = tmp_path / "hostile.yaml"
    path.write_text(_text(*entries))
    with pytest.raises(WireRecordingError) as caught:
        load_wire_recording(path)
    assert str(caught.value) == f"{path}: {key}: {reason}"
    assert caught.value.key == key


def test_a_version_2_file_has_no_continuations(tmp_path: Path) -> None:
    path = tmp_path / "old.yaml"
    path.write_text(_text(_entry([HI]), _entry([MORE], continues=1), version=2))
    with pytest.raises(WireRecordingError) as caught:
        load_wire_recording(path)
    assert str(caught.value) == (
        f"{path}: requests[1].continues: unknown key (continuations are format version 3;"
        " this file says an older version)"
    )


def test_the_command_line_names_a_bad_continuation_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text(_text(_entry([HI]), _entry([MORE], continues=1)))
    bad.write_text(_text(_entry([HI]), _entry([MORE], continues=2)))
    assert main(["diff", str(good), str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"headerlock: {bad}: requests[1].continues: request 2 can continue request 1 to 1"
        " (requests are numbered from 1), got 2"
    ]


def test_a_long_chain_loads_with_each_message_read_once_and_shared(tmp_path: Path) -> None:
    """1,500 requests, each continuing the one before with one message: no recursion,
    no copy of a message (every entry holds the objects read once)."""
    count = 1500
    entries = [_entry([{"n": 0}])]
    entries += [_entry([{"n": n}], continues=n) for n in range(1, count)]
    path = tmp_path / "chain.yaml"
    path.write_text(_text(*entries))
    requests = load_wire_recording(path).requests
    assert [m["n"] for m in requests[-1].messages] == list(range(count))
    first = requests[0].messages[0]
    assert all(entry.messages[0] is first for entry in requests)
    assert requests[-1].messages[-2] is requests[-2].messages[-1]


def test_a_chain_that_would_repeat_too_much_is_refused_before_it_expands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A short file cannot expand into more messages than a version 2 file at the size
    limit lists (``MAX_REPEATS``, lowered here): the request that passes it is named."""
    monkeypatch.setattr(wire_continuations, "MAX_REPEATS", 100)
    entries = [_entry([{"n": 0}])] + [_entry([{"n": n}], continues=n) for n in range(1, 20)]
    path = tmp_path / "chain.yaml"
    path.write_text(_text(*entries))
    with pytest.raises(WireRecordingError) as caught:
        load_wire_recording(path)
    assert str(caught.value) == (
        f"{path}: requests[14].continues: the continuations repeat more than 100 earlier"
        " messages in all (the limit of a wire recording)"
    )  # 1 + 2 + ... + 14 = 105 > 100


# -- what is written reads back whole --------------------------------------------------

SCALARS = st.sampled_from([0, 1, 1.0, -0.0, 0.0, True, False, None, "1", "hi", "<<id:1>>"])
MESSAGE = st.one_of(
    SCALARS,
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": SCALARS}),
    st.lists(SCALARS, max_size=2),
)
CONVERSATION = st.lists(MESSAGE, max_size=5)


def _twin(value: Any) -> Any:
    """``value`` with its numbers and booleans of another type: equal by ``==``, written
    otherwise (``1`` -> ``1.0`` -> ``true`` -> ``1``)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return float(value)
    if isinstance(value, float):
        return bool(value) if value in (0.0, 1.0) else value
    if isinstance(value, dict):
        return {key: _twin(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_twin(item) for item in value]
    return value


@st.composite
def sessions(draw: st.DrawFn) -> list[Any]:
    """Message lists that often grow earlier ones (the prefix of a drawn earlier list
    and new messages, or its twin: equal by ``==``, not as written), and some that are
    not lists."""
    lists: list[Any] = []
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["new", "grow", "grow", "twin", "text"]))
        if kind == "text":
            lists.append(draw(st.sampled_from(["hi", "", None])))
        elif kind == "twin" and lists and isinstance(lists[-1], list):
            lists.append(_twin(lists[-1]) + draw(CONVERSATION))
        elif kind == "grow" and any(isinstance(m, list) for m in lists):
            base = draw(st.sampled_from([m for m in lists if isinstance(m, list)]))
            cut = draw(st.integers(0, len(base)))
            lists.append(base[:cut] + draw(CONVERSATION))
        else:
            lists.append(draw(CONVERSATION))
    return lists


def _recording(message_lists: list[Any]) -> WireRecording:
    response = WireResponse(200, "application/json", "json", {})
    entries = tuple(
        WireEntry(
            "openai.chat", "/v1/x", {}, "<<system>>", "<<tools>>", (), None, m, None, response
        )
        for m in message_lists
    )
    return WireRecording(False, entries)


def _exact(recording: WireRecording) -> list[str]:
    """Each entry's data, with ``1``, ``1.0`` and ``true`` told apart."""
    return [canonical_json(entry.to_data()) for entry in recording.requests]


@given(sessions())
def test_what_is_written_reads_back_as_version_2_wrote_it(message_lists: list[Any]) -> None:
    recording = _recording(message_lists)
    text = recording.to_text()
    read = parse_wire_recording(text, path="v3.yaml")
    as_v2 = parse_wire_recording(full_form(recording), path="v2.yaml")
    assert _exact(read) == _exact(as_v2) == _exact(recording)
    copied = _recording([copy.deepcopy(m) for m in message_lists])  # none shared
    assert copied.to_text() == text  # the bytes depend on content, never on identity
    assert canonical_read.read(text, max_depth=WIRE_MAX_DEPTH) is not None
    written = read.to_data()["requests"]
    for number, entry in enumerate(read.requests, 1):
        starts = [  # the earlier requests whose whole list begins this one's
            n
            for n, other in enumerate(read.requests[: number - 1], 1)
            if isinstance(entry.messages, list)
            and isinstance(other.messages, list)
            and other.messages
            and canonical_json(entry.messages[: len(other.messages)])
            == canonical_json(other.messages)
        ]
        assert written[number - 1].get("continues") == (max(starts) if starts else None)
