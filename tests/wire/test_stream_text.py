"""Wire format version 2 (issues 26 item 7, 31 item 1): a stream is kept as its events'
text, one event per line; a version 1 recording (``tests/vectors/wire-streams-v1.yaml``,
written by the headerlock of version 1) still replays with every SDK, and
``headerlock migrate`` rewrites it as a fresh record writes it now."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anthropic
import pytest

from headerlock.cli import main
from headerlock.errors import WireRecordingError
from headerlock.formats.pending import write_pending
from headerlock.formats.wire_recording import load_wire_recording
from headerlock.formats.wire_response import WireResponse
from headerlock.testing.wire.lock import lock
from headerlock.testing.wire.run import WireRun
from tests.model_server import ModelServer, serve, sse_answer
from tests.wire import test_bedrock as bedrock, test_gemini as gemini
from tests.wire.agents import KEY, anthropic_agent, chat_agent, chat_client, responses_agent

CLOSED = bedrock.CLOSED + "/v1"
"""Nothing listens here: a replay answers, a leak fails."""
V1 = Path(__file__).parents[1] / "vectors" / "wire-streams-v1.yaml"
V1_PYTEST = Path(__file__).parents[1] / "vectors" / "wire-v1-pytest"
"""The same agent's recording by a pytest test (``test_streams.py::test_replay``), with
its header lock."""
TEXTS = [
    "plain chat",
    "chat streamed",
    "plain responses",
    "responses streamed",
    "plain claude",
    "claude streamed",
    "gemini streamed",
    "bedrock streamed",
]
"""What the agent of ``V1`` got: a plain and a streamed answer from OpenAI Chat,
Responses and Anthropic, a Gemini stream and a Bedrock ConverseStream."""


def every_stream(v1: str) -> list[str]:
    """The agent ``V1`` recorded, against ``v1`` (an origin serving ``/v1/...``)."""
    origin = v1.removesuffix("/v1")
    got = chat_agent(chat_client(v1)) + responses_agent(chat_client(v1))
    got += anthropic_agent(anthropic.Anthropic(base_url=origin, api_key=KEY, max_retries=0))
    got += ["".join(r.text or "" for r in gemini.streamed(gemini.client(origin)))]
    return [*got, bedrock.streamed_text(bedrock.client(origin))]


@contextmanager
def replaying(path: Path) -> Iterator[WireRun]:
    with lock(path) as run:
        yield run


def test_a_version_1_recording_replays_with_every_sdk(tmp_path: Path) -> None:
    path = tmp_path / "streams.yaml"
    shutil.copy(V1, path)
    assert load_wire_recording(path).migrated_from == 1
    with replaying(path):
        assert every_stream(CLOSED) == TEXTS
    assert path.read_bytes() == V1.read_bytes()  # read in memory, never rewritten


def test_migrate_writes_what_a_fresh_record_writes(tmp_path: Path) -> None:
    old = tmp_path / "recordings" / "streams.yaml"
    old.parent.mkdir()
    shutil.copy(V1, old)
    assert main(["migrate", "--check", str(old)]) == 1
    assert old.read_bytes() == V1.read_bytes()  # --check changes nothing
    assert main(["migrate", str(tmp_path / "recordings")]) == 0
    text = old.read_text()
    assert "version: 3" in text and "events:" not in text
    assert "    stream: |\n      event: message_start data: {" in text  # one event per line
    assert "\n      event: contentBlockDelta data: {" in text  # Bedrock's frames, as text
    with serve() as server:
        server.script([{"text": t} for t in TEXTS])
        fresh = tmp_path / "fresh.yaml"
        with lock(fresh, mode="record"):
            assert every_stream(server.base_url) == TEXTS
    assert text == fresh.read_text()
    assert main(["migrate", "--check", str(old)]) == 0
    assert load_wire_recording(old).migrated_from is None
    with replaying(old):
        assert every_stream(CLOSED) == TEXTS


def test_migrate_leaves_other_files_alone_and_names_what_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recordings = tmp_path / "recordings"
    recordings.mkdir()
    shutil.copy(V1, recordings / "old.yaml")
    newer = V1.read_text().replace("\nversion: 1\n", "\nversion: 4\n")
    (recordings / "newer.yaml").write_text(newer)
    (recordings / "broken.yaml").write_text("kind: wire\nkind: wire\n")
    foreign = "name: not headerlock's\nversion: 1\n"
    (recordings / "notes.yaml").write_text(foreign)
    assert main(["migrate", str(recordings)]) == 2
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{recordings.as_posix()}/broken.yaml: line 2: duplicate key 'kind' (first at line 1)",
        f"{recordings.as_posix()}/newer.yaml: wire format version 4 is newer than this"
        " headerlock reads (3); upgrade headerlock",
        f"{recordings.as_posix()}/old.yaml: wire format version 1 -> migrated",
        "1 migrated, 0 current, 1 not headerlock's (left alone), 2 failed",
    ]
    assert (recordings / "notes.yaml").read_text() == foreign
    assert (recordings / "newer.yaml").read_text() == newer
    outside = tmp_path / "outside.yaml"
    shutil.copy(V1, outside)
    (recordings / "old.yaml").unlink()
    (recordings / "old.yaml").symlink_to(outside)
    assert main(["migrate", str(recordings / "old.yaml")]) == 2
    assert "old.yaml: is a symbolic link; headerlock writes only files it owns" in (
        capsys.readouterr().out
    )
    assert outside.read_bytes() == V1.read_bytes()


def test_a_pending_file_is_migrated_and_stays_reviewable(tmp_path: Path) -> None:
    recording = tmp_path / "streams.yaml"
    shutil.copy(V1, recording)
    pending = write_pending(recording, V1.read_text())
    assert main(["migrate", "--check", str(tmp_path)]) == 1
    assert main(["migrate", str(tmp_path)]) == 0
    assert "version: 3" in pending.read_text()
    assert main(["review", "--recordings", str(tmp_path), "--accept", str(pending)]) == 0
    assert recording.read_text().count("stream: |") == 5


def test_the_default_paths_are_recordings_and_fixtures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["migrate"]) == 2
    assert "no recordings/ or fixtures/ here" in capsys.readouterr().err
    (tmp_path / "recordings").mkdir()
    shutil.copy(V1, tmp_path / "recordings" / "a.yaml")
    assert main(["migrate", "--check"]) == 1
    assert main(["migrate"]) == 0
    assert main(["migrate", "--check"]) == 0


@pytest.mark.parametrize(
    ("body", "served"),
    [
        (b'data: {"b":1,"a":"x\xe2\x80\xa8y"}\n\ndata: [DONE]\n\n', None),
        (b"event: ping\nid: 7\ndata: {}\n\n", None),
        (b"data: two\ndata: lines\n\n", b"data: two\ndata: lines\n\n"),  # kept as events
    ],
)
def test_a_stream_serves_the_same_events_as_it_was_recorded(
    body: bytes, served: bytes | None
) -> None:
    from headerlock.formats.canonical_yaml import dump
    from headerlock.formats.strict_yaml import loads
    from headerlock.formats.wire_recording import _Reader

    recorded = WireResponse.from_http(200, "text/event-stream", body)
    loaded = _Reader("r.yaml", None).response(loads(dump(recorded.to_data())), "response")
    assert list(loaded.body) == list(recorded.body)
    if served is not None:
        assert loaded.to_http()[2] == served


def test_a_secret_and_ids_in_a_stream_are_scrubbed_in_its_text(
    tmp_path: Path, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunk = {"id": "chatcmpl-Zq81x", "choices": [{"index": 0, "delta": {"content": KEY}}]}
    model_server.route("*/chat/completions", sse_answer([chunk, "[DONE]"]))
    path = tmp_path / "leak.yaml"
    with lock(path, mode="record"):
        stream = chat_client(model_server.base_url).chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "echo"}], stream=True
        )
        assert [c.choices[0].delta.content for c in stream] == [KEY]
    text = path.read_text()
    assert KEY not in text and "Zq81x" not in text
    line = '      data: {"choices":[{"delta":{"content":"<<secret>>"},"index":0}],"id":"chatcmpl-<<id:1>>"}\n'
    assert line in text
    leaked = tmp_path / "leaked.yaml"
    leaked.write_text(text.replace("<<secret>>", KEY))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with pytest.raises(WireRecordingError) as caught:
        load_wire_recording(leaked)
    assert "requests[0].response.stream holds the value of OPENAI_API_KEY" in str(caught.value)
    assert KEY not in str(caught.value)


USER_TEST = """
from tests.wire.test_stream_text import CLOSED, TEXTS, every_stream


def test_replay(headerlock_wire):
    assert every_stream(CLOSED) == TEXTS
"""


def test_a_pytest_session_replays_a_version_1_recording_and_says_so_once(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\naddopts = -p no:randomly\n")
    pytester.makepyfile(test_streams=USER_TEST)
    path = pytester.path / "recordings" / "test_streams" / "test_replay.yaml"
    shutil.copytree(V1_PYTEST, path.parent)
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "headerlock: 1 recording in an older format version replayed"
            " (recordings/test_streams/test_replay.yaml); update them with: headerlock migrate"
        ]
    )
    assert result.stdout.str().count("headerlock migrate") == 1
    assert path.read_bytes() == (V1_PYTEST / "test_replay.yaml").read_bytes()
    assert main(["migrate", str(pytester.path / "recordings")]) == 0
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(passed=1)
    assert "headerlock migrate" not in result.stdout.str()


def test_diff_names_the_event_a_stream_changed_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    shutil.copy(V1, a)
    assert main(["migrate", str(a)]) == 0
    b.write_text(a.read_text().replace('"text":"claude "', '"text":"Claude "'))
    capsys.readouterr()
    assert main(["diff", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "request 6 (anthropic.messages) response: response.stream[3]: 'event: content" in out
    assert '\n+      event: content_block_delta data: {"delta":{"text":"Claude ",' in out
