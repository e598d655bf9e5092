"""No data loss, no leaked secrets, balanced turns under runtime faults, fuzzing."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings, strategies as st

from headerlock.agent import AgentApp, ScriptedAdapter, ToolSchema
from headerlock.errors import (
    CorruptLogError,
    HeaderlockError,
    RecordingError,
    ScenarioError,
    YamlError,
)
from headerlock.formats.recording import parse_recording, recording_from_data
from headerlock.formats.scrub import scrub_events
from headerlock.formats.strict_yaml import dumps
from headerlock.runtime.header import RequestHeader, fold_request_header
from headerlock.runtime.session import Event
from headerlock.strategies import tool_sets
from headerlock.testing.scenario.fixtures import parse_scenario
from headerlock.testing.scenario.project import Project
from tests import flaky_plugins
from tests.model_server import ModelServer, chat_stream, json_answer, text_chunks

ROOT = Path(__file__).parents[1]
SECRET = "sk-sentinel-do-not-leak-7f3a"


def subprocess_env(**extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'src'}",
        **extra,
    }


# -- no data loss -------------------------------------------------------------

KILLED_WRITER = """
import os, sys, time
from pathlib import Path
import headerlock.formats.atomic as atomic

def stall(fd):
    print("writing", flush=True)
    time.sleep(60)

atomic.os.fsync = atomic.os.fdatasync = stall
atomic.atomic_write(Path(sys.argv[1]), "new content\\n" * 100_000)
"""


def test_a_write_killed_midway_leaves_the_old_recording(tmp_path: Path) -> None:
    target = tmp_path / "recordings" / "tool-turn.yaml"
    target.parent.mkdir()
    shutil.copy(ROOT / "recordings" / "tool-turn.yaml", target)
    before = target.read_bytes()
    process = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(target)],
        stdout=subprocess.PIPE, text=True, env=subprocess_env(PYTHONPATH=str(ROOT / "src")),
    )  # fmt: skip
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "writing"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert target.read_bytes() == before
    assert sorted(p.name for p in target.parent.glob("*.yaml")) == ["tool-turn.yaml"]


def test_parallel_recorders_of_different_scenarios_do_not_clobber(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "fixtures", tmp_path / "fixtures")
    names = ["text-turn", "tool-turn", "ordered-turn", "reorder-turn"]
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "headerlock",
                "record",
                name,
                "--fixtures",
                "fixtures",
                "--recordings",
                "recordings",
            ],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=subprocess_env(),
        )
        for name in names * 2
    ]
    for process in processes:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
    for name in names:
        written = (tmp_path / "recordings" / f"{name}.yaml").read_bytes()
        assert written == (ROOT / "recordings" / f"{name}.yaml").read_bytes()
    assert sorted(p.name for p in (tmp_path / "recordings").iterdir()) == sorted(
        f"{n}.yaml" for n in names
    )


# -- secrets ------------------------------------------------------------------


def test_the_api_key_never_reaches_recordings_logs_or_errors(
    tmp_path: Path, model_server: ModelServer
) -> None:
    (tmp_path / "fixtures").mkdir()
    shutil.copy(ROOT / "fixtures" / "text-turn.yaml", tmp_path / "fixtures")
    rejected = json_answer({"error": {"message": f"Incorrect API key provided: {SECRET}"}}, 401)
    outputs = []
    for answer in (rejected, chat_stream(text_chunks("PONG"))):
        model_server.reset()
        model_server.route("*/chat/completions", answer)
        result = subprocess.run(
            [sys.executable, "-m", "headerlock", "record", "--live", "text-turn"],
            cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
            env=subprocess_env(HEADERLOCK_BASE_URL=model_server.base_url, HEADERLOCK_API_KEY=SECRET, OPENAI_LOG="debug"),
        )  # fmt: skip
        assert model_server.hits[0].headers["authorization"] == f"Bearer {SECRET}"
        path = tmp_path / "recordings" / "text-turn.yaml"
        recording = path.read_text() if path.exists() else ""
        outputs.append((result, recording))
        for text in (result.stdout, result.stderr, recording):
            assert SECRET not in text
    (failed, nothing), (passed, recorded) = outputs
    # a rejected live run is not a recording: exit 1, nothing written, the reason said
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert nothing == ""
    assert "HTTP 401: Incorrect API key provided: ***" in failed.stdout + failed.stderr
    assert passed.returncode == 0, passed.stderr
    assert "content: PONG" in recorded


# -- runtime faults -----------------------------------------------------------


def run_turns(app: AgentApp, count: int = 2) -> list[Any]:
    async def go() -> list[Any]:
        await app.start()
        return [await app.run_turn("go") for _ in range(count)]

    return asyncio.run(go())


def test_a_raising_waterfall_listener_fails_each_turn_balanced() -> None:
    app = AgentApp({}, plugins=[flaky_plugins.raising_listener], adapter=ScriptedAdapter(["x"]))
    results = run_turns(app)
    assert [r.reason.message for r in results] == ["LookupError: listener lost its index"] * 2
    assert [e.type for e in app.session.events] == ["turn/start", "user/message", "turn/end"] * 2
    assert app.state == "idle"


def test_a_raising_agent_error_listener_is_contained_and_reported() -> None:
    app = AgentApp({}, plugins=[flaky_plugins.raising_listener], adapter=ScriptedAdapter(["x"]))
    reported: list[tuple[str, Exception]] = []

    def broken(payload: Any) -> None:
        raise RuntimeError("observer crashed")

    app.ctx.on("agent/error", broken)
    app.ctx.on("internal/error", lambda name, error: reported.append((name, error)))
    results = run_turns(app, 1)
    assert results[0].reason.kind == "error"
    assert [(n, str(e)) for n, e in reported] == [("agent/error", "observer crashed")]
    assert app.session.events[-1].type == "turn/end"


def test_a_raising_session_subscriber_does_not_wedge_the_agent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = AgentApp({}, adapter=ScriptedAdapter(["one", "two"]))
    seen: list[str] = []
    reported: list[tuple[str, Exception]] = []

    def crash_on_first(event: Event) -> None:
        seen.append(event.type)
        if len(seen) == 1:
            raise RuntimeError("subscriber crashed")

    app.session.subscribe(crash_on_first)
    app.session.subscribe(lambda event: seen.append(f"second saw {event.type}"))
    app.ctx.on("internal/error", lambda name, error: reported.append((name, error)))
    with caplog.at_level("ERROR", logger="headerlock"):
        results = run_turns(app)
    assert [(r.reason.kind, r.text) for r in results] == [("stop", "one"), ("stop", "two")]
    assert app.state == "idle"
    assert seen[:2] == ["turn/start", "second saw turn/start"]
    events = app.session.events
    assert [e.type for e in events].count("turn/end") == 2
    assert len(seen) == 2 * len(events)
    assert [(n, str(e)) for n, e in reported] == [("session/subscriber", "subscriber crashed")]
    assert "session subscriber raised RuntimeError on turn/start (seq 1)" in caplog.text


FAULTY_SCENARIOS = {
    "tool-fault": """\
        pin: true
        config: {model: demo}
        plugins: [tests.flaky_plugins:failing_tool]
        steps: [{prompt: go}, {prompt: again}]
        model: [{tool_calls: [{name: explode}]}, {text: recovered}]
        """,
    "stream-fault": """\
        header_class: other
        pin: true
        config: {model: demo}
        plugins: [tests.flaky_plugins:alpha]
        steps: [{prompt: go}, {prompt: again}]
        model: [{text: "partial answer", error: "the model endpoint answered HTTP 500: overloaded"}, {text: fine}]
        """,
}


@pytest.mark.parametrize("name", sorted(FAULTY_SCENARIOS))
def test_faulty_runs_stay_foldable_and_replay_identically(tmp_path: Path, name: str) -> None:
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / f"{name}.yaml").write_text(textwrap.dedent(FAULTY_SCENARIOS[name]))
    project = Project(tmp_path / "fixtures", tmp_path / "recordings")
    scenario = project.scenario(name)
    recording = asyncio.run(project.record(scenario))
    ends = [e["data"]["reason"] for e in recording.events if e["type"] == "turn/end"]
    assert ends[0]["kind"] == "error"
    assert ends[1] == {"kind": "stop", "step": 1}
    assert fold_request_header(Event.from_data(e) for e in recording.events) is not None
    asyncio.run(project.replay(scenario))  # raises on any difference


# -- fuzzing ------------------------------------------------------------------

yaml_ish = st.text(
    alphabet=st.sampled_from(list("abc:-[]{}&*!|>'\"#\n\t %@`,?0123456789<>")), max_size=80
)


@settings(max_examples=150)
@given(yaml_ish)
def test_fuzz_fixture_parser_raises_only_its_errors(text: str) -> None:
    with contextlib.suppress(ScenarioError, YamlError):
        parse_scenario(text, Path("fuzz.yaml"))


@settings(max_examples=150)
@given(yaml_ish)
def test_fuzz_recording_parser_raises_only_recording_errors(text: str) -> None:
    with contextlib.suppress(RecordingError):
        parse_recording(text, path="fuzz.yaml")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "seq",
                    "type",
                    "data",
                    "header",
                    "tools",
                    "id",
                    "name",
                    "system",
                    "insert",
                    "keep_start",
                    "keep_end",
                    "added",
                    "removed",
                    "changed",
                    "tool_calls",
                    "config",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)
event_types = st.sampled_from(
    [
        "request/header",
        "request/header-delta",
        "assistant/message",
        "tool/call",
        "tool/result",
        "turn/end",
        "step/start",
    ]
)


@st.composite
def event_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(0, 6))
    return [
        {
            "seq": i + 1,
            "type": draw(event_types),
            "data": draw(
                st.dictionaries(
                    st.sampled_from(
                        [
                            "header",
                            "tools",
                            "system",
                            "config",
                            "id",
                            "tool_calls",
                            "reason",
                            "elapsed_ms",
                        ]
                    ),
                    json_values,
                    max_size=3,
                )
            ),
        }
        for i in range(count)
    ]


HEADER_TYPES = ("request/header", "request/header-delta")


@settings(max_examples=200)
@given(event_lists(), tool_sets(max_size=2))
def test_fuzz_fold_reads_only_header_events_and_names_the_bad_one(
    events: list[dict[str, Any]], tools: list[ToolSchema]
) -> None:
    log = [Event.from_data(e) for e in events]
    header_seqs = [e.seq for e in log if e.type in HEADER_TYPES]
    header: RequestHeader | CorruptLogError | None
    try:
        header = fold_request_header(log)
    except CorruptLogError as error:
        header = error
    if isinstance(header, CorruptLogError):
        assert header.seq in header_seqs  # the error names the bad event
        return
    assert (header is None) == (not header_seqs)
    assert fold_request_header(e for e in log if e.type in HEADER_TYPES) == header
    if header is not None:
        assert RequestHeader.from_data(header.to_data()) == header
    last = RequestHeader({"model": "m"}, "sys", tuple(tools))
    full = Event("request/header", len(log) + 1, {"header": last.to_data(), "reason": "fallback"})
    assert fold_request_header([*log, full]) == last


@settings(max_examples=200)
@given(event_lists())
@example(
    [{"seq": 1, "type": "turn/end", "data": {"elapsed_ms": None, "tools": [{}]}}]
)  # found by fuzzing
def test_fuzz_scrub_is_idempotent_and_the_loader_agrees_with_the_validator(
    events: list[dict[str, Any]],
) -> None:
    once = scrub_events(events)
    assert scrub_events(once) == once
    document = {
        "version": 1,
        "scenario": "fuzz",
        "app": "spine",
        "pinned": False,
        "header_class": "default",
        "events": events,
    }
    text = dumps(document)  # JSON-like data is always writable
    try:
        expected = recording_from_data(document, path="fuzz.yaml")
    except RecordingError:
        with pytest.raises(RecordingError):
            parse_recording(text, path="fuzz.yaml")
        return
    loaded = parse_recording(text, path="fuzz.yaml")
    assert loaded == expected
    assert loaded.to_text() == text


@settings(max_examples=100)
@given(json_values)
def test_fuzz_recording_loader_on_any_data(value: Any) -> None:
    try:
        recording_from_data(value, path="fuzz.yaml")
    except RecordingError:
        pass
    except HeaderlockError as error:  # pragma: no cover - the assertion below explains
        raise AssertionError(f"unexpected {type(error).__name__}: {error}") from error
