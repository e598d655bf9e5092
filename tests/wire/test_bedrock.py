"""AWS Bedrock Converse (``bedrock.converse``) through the real ``boto3`` client over real
HTTP (botocore sends through urllib3): recorded, replayed, scripted (text, tool use,
ConverseStream in AWS's event-stream framing), pinned, order-checked, cache-reported,
and with every AWS credential kept out of the recording."""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

boto3 = pytest.importorskip("boto3")
from botocore.exceptions import (  # type: ignore[import-untyped]  # noqa: E402
    ClientError,
    EventStreamError,
)

import headerlock  # noqa: E402
from headerlock import order_wire_tools, wire  # noqa: E402
from headerlock.cli import main  # noqa: E402
from headerlock.errors import WireMismatch, WireOrderError  # noqa: E402
from headerlock.formats import aws_eventstream  # noqa: E402
from headerlock.formats.scrub import scrub_events  # noqa: E402
from headerlock.formats.secrets import shaped_secrets  # noqa: E402
from headerlock.formats.wire_recording import load_wire_recording  # noqa: E402
from headerlock.testing.wire.apis import detect_api, model_api  # noqa: E402
from headerlock.testing.wire.driver import request_header  # noqa: E402
from tests.model_server import Answer, ModelServer, json_answer  # noqa: E402

KEY_ID = "AKIAIOSFODNN7EXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
TOKEN = "FwoGZXIvYXdzEXAMPLEsessionTOKEN0123456789abcdef"
MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"
PATH = "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"
STREAM_PATH = PATH + "-stream"
NAMES = ["read_file", "grep", "bash"]
CALL: dict[str, Any] = {
    "text": "Let me look.",
    "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}],
}


def _closed_origin() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


CLOSED = _closed_origin()
"""Nothing listens here: a replay or a script answers, a leak fails."""


def client(origin: str = CLOSED) -> Any:
    return boto3.client(
        "bedrock-runtime",
        endpoint_url=origin,
        region_name="us-east-1",
        aws_access_key_id=KEY_ID,
        aws_secret_access_key=SECRET,
        aws_session_token=TOKEN,
    )


def tool(name: str, description: str | None = None) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    spec = {"name": name, "description": description or f"The {name} tool."}
    return {"toolSpec": {**spec, "inputSchema": {"json": schema}}}


def ask(bedrock: Any, messages: list[Any] | None = None, **fields: Any) -> Any:
    tools = fields.pop("tools", None) or [tool(n) for n in NAMES]
    return bedrock.converse(
        modelId=MODEL,
        system=fields.pop("system", [{"text": "You are terse."}]),
        messages=messages or [{"role": "user", "content": [{"text": "hi"}]}],
        toolConfig={"tools": tools, "toolChoice": {"auto": {}}},
        inferenceConfig={"maxTokens": 256, "temperature": fields.pop("temperature", 0.2)},
        **fields,
    )


def streamed_text(bedrock: Any) -> str:
    response = bedrock.converse_stream(
        modelId=MODEL,
        messages=[{"role": "user", "content": [{"text": "and now?"}]}],
        toolConfig={"tools": [tool(n) for n in NAMES]},
    )
    events = list(response["stream"])  # botocore's own event-stream parser
    assert list(events[0]) == ["messageStart"] and list(events[-1]) == ["metadata"]
    return "".join(
        e["contentBlockDelta"]["delta"].get("text", "") for e in events if "contentBlockDelta" in e
    )


def conversation(bedrock: Any) -> list[str]:
    """A tool use answered with its result, then a streamed answer."""
    first = ask(bedrock)
    content = first["output"]["message"]["content"]
    [use] = [block["toolUse"] for block in content if "toolUse" in block]
    result = {"toolUseId": use["toolUseId"], "content": [{"text": "A"}]}
    history = [
        {"role": "user", "content": [{"text": "hi"}]},
        first["output"]["message"],
        {"role": "user", "content": [{"toolResult": result}]},
    ]
    last = ask(bedrock, history)
    return [use["name"], last["output"]["message"]["content"][0]["text"], streamed_text(bedrock)]


# -- record and replay -----------------------------------------------------------------


def test_converse_records_against_the_server_and_replays_with_it_stopped(
    model_server: ModelServer, tmp_path: Path
) -> None:
    model_server.script([CALL, {"text": "It says A."}, {"text": "streamed words"}])
    path = tmp_path / "bedrock.yaml"
    with wire.lock(path, mode="record") as run:
        recorded = conversation(client(model_server.origin))
    assert recorded == ["read_file", "It says A.", "streamed words"]
    assert [h.path for h in model_server.hits] == [PATH, PATH, STREAM_PATH]
    assert model_server.hits[0].headers["authorization"].startswith("AWS4-HMAC-SHA256 ")
    assert [r.api for r in run.requests] == ["bedrock.converse"] * 3
    first, second, third = load_wire_recording(path).requests
    assert (first.system, first.tools, first.tool_names) == (
        "<<system>>",
        "<<tools>>",
        ("bash", "grep", "read_file"),
    )
    assert first.config == {
        "inferenceConfig": {"maxTokens": 256, "temperature": 0.2},
        "toolConfig": {"toolChoice": {"auto": {}}},
    }
    use = second.messages[1]["content"][1]["toolUse"]
    result = second.messages[2]["content"][0]["toolResult"]
    assert use["toolUseId"] == result["toolUseId"] == "<<id:1>>"
    assert third.response is not None and third.response.kind == "events"
    assert third.response.content_type == aws_eventstream.MEDIA_TYPE
    assert [e.event for e in third.response.body] == [
        "messageStart",
        "contentBlockDelta",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    ]
    before, hits = path.read_bytes(), len(model_server.hits)
    with wire.lock(path) as replay:
        assert conversation(client(model_server.origin)) == recorded
    assert len(model_server.hits) == hits  # 0 hits: the replay answered everything
    assert replay.differences == [] and path.read_bytes() == before
    with wire.lock(path):
        assert conversation(client()) == recorded  # nothing listens there


def _live(latency: int, padding: str) -> list[Answer]:
    """What Bedrock answers: a new ``latencyMs`` and random ``p`` padding every time."""
    body = {
        "output": {"message": {"role": "assistant", "content": [{"text": "hi"}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 9, "outputTokens": 1, "totalTokens": 10},
        "metrics": {"latencyMs": latency},
    }
    events = [
        ("messageStart", {"role": "assistant", "p": padding}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "hi"}, "p": padding}),
        ("contentBlockStop", {"contentBlockIndex": 0, "p": padding * 2}),
        ("messageStop", {"stopReason": "end_turn", "p": padding}),
        ("metadata", {"usage": body["usage"], "metrics": {"latencyMs": latency}, "p": "x"}),
    ]
    frames = aws_eventstream.split_frames(aws_eventstream.frames(events))
    stream = Answer(content_type=aws_eventstream.MEDIA_TYPE, chunks=frames)
    return [json_answer(body), stream]


ARGUMENTS = ['{"path": "a.txt",', ' "lines": [1, 2.0],', ' "note": "\u00e9\\u00e9 \\"q\\""}']
"""Tool-use arguments as a model streams them: JSON text in pieces, spaced, escaped."""


def tool_use_stream() -> Answer:
    """A ConverseStream whose tool use streams its arguments in ``ARGUMENTS``' pieces."""
    start = {"toolUse": {"toolUseId": "tooluse_AbC123xyz", "name": "read_file"}}
    events = [
        ("messageStart", {"role": "assistant"}),
        ("contentBlockStart", {"contentBlockIndex": 0, "start": start}),
        *(
            ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": p}}})
            for p in ARGUMENTS
        ),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("messageStop", {"stopReason": "tool_use"}),
        ("metadata", {"usage": {"inputTokens": 5, "outputTokens": 5, "totalTokens": 10}}),
    ]
    frames = aws_eventstream.split_frames(aws_eventstream.frames(events))
    return Answer(content_type=aws_eventstream.MEDIA_TYPE, chunks=frames)


def streamed_tool_use(bedrock: Any) -> tuple[str, list[str]]:
    """The tool name and the argument pieces botocore's event-stream parser yields."""
    response = bedrock.converse_stream(
        modelId=MODEL,
        messages=[{"role": "user", "content": [{"text": "read a.txt"}]}],
        toolConfig={"tools": [tool(n) for n in NAMES]},
    )
    events = list(response["stream"])
    [start] = [
        e["contentBlockStart"]["start"]["toolUse"] for e in events if "contentBlockStart" in e
    ]
    deltas = [e["contentBlockDelta"]["delta"] for e in events if "contentBlockDelta" in e]
    return start["name"], [d["toolUse"]["input"] for d in deltas]


def test_streamed_tool_arguments_replay_byte_identical_through_botocore(
    model_server: ModelServer, tmp_path: Path
) -> None:
    """The pieces of a ConverseStream tool use, recorded live, replay with the server
    stopped as the same pieces: botocore reassembles the arguments the model sent, byte
    for byte (spacing, ``2.0``, escapes kept; never re-serialized)."""
    model_server.route("*/converse-stream", tool_use_stream())
    path = tmp_path / "stream.yaml"
    with wire.lock(path, mode="record", pin=True):
        live = streamed_tool_use(client(model_server.origin))
    assert live == ("read_file", ARGUMENTS)
    with wire.lock(path) as replay:
        replayed = streamed_tool_use(client())
    assert replayed == live and "".join(replayed[1]) == "".join(ARGUMENTS)
    assert replay.differences == [] and len(model_server.hits) == 1


def test_latency_and_stream_padding_never_churn_a_re_record(
    model_server: ModelServer, tmp_path: Path
) -> None:
    recorded = []
    for latency, padding in ((123, "abcdefgh"), (4567, "QRSTUVWXYZ0123")):
        model_server.reset()
        live = _live(latency, padding)
        model_server.route("*/converse", live[0])
        model_server.route("*/converse-stream", live[1])
        path = tmp_path / f"{latency}.yaml"
        with wire.lock(path, mode="record"):
            bedrock = client(model_server.origin)
            ask(bedrock)
            assert streamed_text(bedrock) == "hi"
        recorded.append(path.read_bytes())
    assert recorded[0] == recorded[1]
    assert b"latencyMs: 0" in recorded[0] and b'"p":' not in recorded[0]


def test_no_aws_credential_reaches_the_recording_or_the_output(
    model_server: ModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The key id, secret key and session token given to ``boto3.client`` (never sent:
    only their signature travels) and any ``ASIA…`` key id, leaked into the prompt."""
    model_server.script([{"text": "ok"}, {"text": "ok"}])
    path = tmp_path / "bedrock.yaml"
    leak = f"debug {KEY_ID} {SECRET} {TOKEN} ASIAQWERTYUIOPASDFGH"
    with wire.lock(path, mode="record", pin=True):
        ask(client(model_server.origin), system=[{"text": leak}])
        ask(client(model_server.origin), [{"role": "user", "content": [{"text": leak}]}])
    signature = model_server.hits[0].headers["authorization"].rpartition("Signature=")[2]
    assert model_server.hits[0].headers["x-amz-security-token"] == TOKEN
    text = path.read_text()
    for secret in (KEY_ID, SECRET, TOKEN, "ASIAQWERTYUIOPASDFGH", signature, "AWS4-HMAC"):
        assert secret not in text
    assert "debug <<secret>> <<secret>> <<secret>> <<secret>>" in text
    with pytest.raises(WireMismatch) as caught, wire.lock(path), pytest.raises(ClientError):
        ask(client(), system=[{"text": leak + " more"}])
    shown = str(caught.value) + capsys.readouterr().out
    assert "system" in shown and KEY_ID not in shown and SECRET not in shown


LATE = """
import sys
from headerlock import wire
assert "botocore" not in sys.modules
with wire.lock(sys.argv[1], mode="record", script=[{"text": "ok"}]):
    import boto3  # imported inside the lock: its signer is patched when it loads
    client = boto3.client("bedrock-runtime", endpoint_url="http://127.0.0.1:9",
                          region_name="us-east-1", aws_access_key_id=sys.argv[2],
                          aws_secret_access_key=sys.argv[3])
    client.converse(modelId="m", messages=[{"role": "user", "content": [{"text": sys.argv[3]}]}])
"""


def test_a_boto3_imported_inside_the_lock_has_its_credentials_kept_out(tmp_path: Path) -> None:
    path = tmp_path / "late.yaml"
    source = str(Path(headerlock.__file__).parents[1])
    done = subprocess.run(
        [sys.executable, "-c", LATE, str(path), KEY_ID, SECRET],
        env={"PYTHONPATH": source, "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = path.read_text()
    assert SECRET not in text and "<<secret>>" in text


def test_the_aws_credential_variables_are_secrets(
    model_server: ModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other_secret, other_token = "envSecretKey/0123456789abcdefEXAMPLE", "envSessionToken0123456789"
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", other_secret)
    monkeypatch.setenv("AWS_SESSION_TOKEN", other_token)
    model_server.script([{"text": "ok"}])
    path = tmp_path / "bedrock.yaml"
    with wire.lock(path, mode="record"):
        leak = [{"text": other_secret}, {"text": other_token}]
        ask(client(model_server.origin), [{"role": "user", "content": leak}])
    text = path.read_text()
    assert other_secret not in text and other_token not in text
    assert text.count("<<secret>>") == 2


def test_an_aws_key_id_is_a_secret_by_its_shape_in_a_session_log() -> None:
    events = [{"type": "request_header", "data": {"header": {"config": {"k": f"id {KEY_ID}"}}}}]
    assert scrub_events(events, pinned=True, secrets=[]) == [
        {"type": "request_header", "data": {"header": {"config": {"k": "id <<secret>>"}}}}
    ]
    assert shaped_secrets(f"{KEY_ID}X AKIA0123456789ABCDEF") == ["AKIA0123456789ABCDEF"]


# -- pinned: the tool that moved or changed is named ----------------------------------


@pytest.mark.parametrize(
    "tools",
    [
        [tool("grep"), tool("read_file"), tool("bash")],
        [tool("read_file"), tool("grep", "Search the files."), tool("bash")],
    ],
    ids=["reordered", "description"],
)
def test_a_pinned_replay_fails_naming_the_tool(
    model_server: ModelServer, tmp_path: Path, tools: list[Any]
) -> None:
    model_server.script([{"text": "ok"}])
    path = tmp_path / "bedrock.yaml"
    with wire.lock(path, mode="record", pin=True):
        ask(client(model_server.origin))
    entry = load_wire_recording(path).requests[0]
    assert entry.prefix is not None and '"toolSpec"' in entry.prefix.tools
    with (
        pytest.raises(WireMismatch) as caught,
        wire.lock(path),
        pytest.raises(ClientError) as answer,
    ):
        ask(client(), tools=tools)
    assert answer.value.response["Error"]["Code"] == "ValidationException"
    assert "headerlock: request 1 (bedrock.converse)" in str(answer.value)
    assert any("grep" in line for line in caught.value.differences), caught.value.differences


def test_an_app_wire_header_reads_each_tool_spec() -> None:
    with wire.lock(None, mode="record", script=[{"text": "ok"}]) as run:
        ask(client())
    header = request_header(run.requests[0])
    assert header.system == "You are terse."
    assert [t.name for t in header.tools] == NAMES
    assert header.tools[0].parameters["type"] == "object"


# -- scripted --------------------------------------------------------------------------


def test_scripted_replies_parse_through_botocore() -> None:
    failing = {"text": "partial", "error": "model overloaded"}
    script = [CALL, {"text": "Hello there, world"}, CALL, failing, failing]
    with wire.lock(None, mode="record", script=script) as run:
        first = ask(client())
        assert streamed_text(client()) == "Hello there, world"
        calls = client().converse_stream(
            modelId=MODEL, messages=[{"role": "user", "content": [{"text": "x"}]}]
        )
        events = list(calls["stream"])
        with pytest.raises(ClientError, match="model overloaded"):
            ask(client())
        with pytest.raises(EventStreamError, match="model overloaded"):
            streamed_text(client())
    assert first["stopReason"] == "tool_use"
    assert first["output"]["message"]["content"][1]["toolUse"] == {
        "toolUseId": "tooluse_script0000t0",
        "name": "read_file",
        "input": {"path": "a.txt"},
    }
    assert first["usage"]["cacheReadInputTokens"] == 0
    starts = [e["contentBlockStart"]["start"] for e in events if "contentBlockStart" in e]
    assert starts == [{"toolUse": {"toolUseId": "tooluse_script0002t0", "name": "read_file"}}]
    pieces = [
        e["contentBlockDelta"]["delta"]["toolUse"]["input"]
        for e in events
        if "toolUse" in e.get("contentBlockDelta", {}).get("delta", {})
    ]
    assert "".join(pieces) == '{"path":"a.txt"}' and len(pieces) == 2
    assert [r.path for r in run.requests][:3] == [PATH, STREAM_PATH, STREAM_PATH]


def test_the_event_stream_keeps_padding_out_and_refuses_a_bad_crc() -> None:
    frame = aws_eventstream.frame("contentBlockDelta", {"delta": {"text": "a"}, "p": "abcdef"})
    assert aws_eventstream.decode(frame) == (("contentBlockDelta", {"delta": {"text": "a"}}),)
    broken = frame[:-1] + bytes([frame[-1] ^ 1])
    assert aws_eventstream.decode(broken) is None


def test_the_model_id_is_read_from_the_path_url_decoded() -> None:
    found = model_api("bedrock.converse")
    assert found.model_of(PATH, {}) == MODEL
    assert detect_api("POST", PATH) == "bedrock.converse"
    assert detect_api("POST", "/model/m/invoke", b'{"inputText": "x"}') is None


# -- order -----------------------------------------------------------------------------


def agent(order: Callable[[list[Any]], list[Any]]) -> Callable[[list[str]], None]:
    """A boto3 agent whose tools come from its plugins in load order, a cache point last."""

    def run(names: list[str]) -> None:
        ask(client(), tools=order([*(tool(n) for n in names), {"cachePoint": {"type": "default"}}]))

    return run


def test_the_order_check_catches_tools_in_load_order() -> None:
    with pytest.raises(WireOrderError) as caught:
        wire.assert_order_invariant(agent(lambda tools: tools), NAMES, script=[{"text": "ok"}])
    assert (caught.value.api, caught.value.segment) == ("bedrock.converse", "tools")
    assert "order_wire_tools" in str(caught.value)


def test_the_order_check_passes_once_the_tools_are_ordered() -> None:
    wire.assert_order_invariant(agent(order_wire_tools), NAMES, script=[{"text": "ok"}])


def test_order_wire_tools_keeps_a_cache_point_at_its_index() -> None:
    point = {"cachePoint": {"type": "default"}}
    ordered = order_wire_tools([tool("c"), tool("a"), point, tool("b")])
    assert [t.get("toolSpec", {}).get("name", "cachePoint") for t in ordered] == [
        "a",
        "b",
        "cachePoint",
        "c",
    ]


# -- the cache report ------------------------------------------------------------------


def test_the_cache_report_follows_cache_points_and_finds_a_removal_and_a_tools_change(
    model_server: ModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """cachePoint blocks are Bedrock's breakpoints: request 2 reads what request 1 wrote;
    request 3 drops the cachePoints of its system and its earlier turn, so its only
    breakpoint near the history lies 25 blocks on (beyond the 20-block lookback);
    request 4 changes a tool's description; request 5 drops every cachePoint."""
    model_server.script([{"text": "ok"}] * 5)
    path = tmp_path / "bedrock.yaml"
    point = {"cachePoint": {"type": "default"}}
    system = [{"text": "You are terse. " * 400}, point]
    tools = [*(tool(n) for n in NAMES), point]

    def user(*texts: str, mark: bool = True) -> dict[str, Any]:
        return {"role": "user", "content": [*({"text": t} for t in texts), *[point][: int(mark)]]}

    said = {"role": "assistant", "content": [{"text": "ok"}]}
    turns = [
        [user("hi")],
        [user("hi", mark=False), said, user("more")],
        [user("hi", mark=False), said, user("more", mark=False), said, user(*"x" * 24)],
        [user("hi", mark=False), said, user("more")],
    ]
    changed = [tool("read_file"), tool("grep", "Search the files."), tool("bash"), point]
    unmarked = changed[:3]
    with wire.lock(path, mode="record", pin=True):
        bedrock = client(model_server.origin)
        ask(bedrock, turns[0], system=system, tools=tools)
        ask(bedrock, turns[1], system=system, tools=tools)
        ask(bedrock, turns[2], system=system[:1], tools=tools)
        ask(bedrock, turns[3], system=system, tools=changed)
        last = [*turns[3][:2], user("more", mark=False)]
        ask(bedrock, last, system=system[:1], tools=unmarked)
    out = io.StringIO()
    code = main(["cache", str(path)], out=out)
    report = out.getvalue()
    assert code == 1, report + capsys.readouterr().err
    rows = {line.split()[0]: line.split() for line in report.splitlines()[2:6]}
    assert int(rows["2"][4].replace(",", "")) > 1024, report  # predicted read of request 2
    assert "request 3 messages[4]: breakpoint-lookback:" in report, report
    assert "request 4 tools[1] (grep)" in report and "tool-changed" in report, report
    [line] = [x for x in report.splitlines() if "request 5 config: no-breakpoint:" in x]
    assert "no cachePoint breakpoint" in line, report  # every cachePoint removed
    assert "add a cachePoint block after the last block" in line, line  # Bedrock's own words
    assert "top-level" not in line and "cache_control" not in report, report


# -- headerlock flakes on a boto3 agent ------------------------------------------------

AGENT = f"""
import boto3
from headerlock import order_wire_tools

NAMES = {{"read", "write", "search", "bash", "edit", "grep"}}


def tools():
    return [{{"toolSpec": {{"name": n, "description": f"The {{n}} tool.",
             "inputSchema": {{"json": {{"type": "object"}}}}}}}} for n in NAMES]


def _ask(prompt, tool_list):
    client = boto3.client("bedrock-runtime", endpoint_url="http://127.0.0.1:9",
                          region_name="us-east-1", aws_access_key_id="{KEY_ID}",
                          aws_secret_access_key="{SECRET}")
    reply = client.converse(modelId="{MODEL}", system=[{{"text": "Be terse."}}],
                            messages=[{{"role": "user", "content": [{{"text": prompt}}]}}],
                            toolConfig={{"tools": tool_list}})
    return reply["output"]["message"]["content"][0]["text"]


def set_built(prompt):
    return _ask(prompt, tools())


def ordered(prompt):
    return _ask(prompt, order_wire_tools(tools()))
"""

FIXTURE = """app: wire
pin: true
config:
  entry: agent:{entry}
steps:
  - prompt: hi
model:
  - text: hello
"""


def test_flakes_tells_a_set_built_boto3_agent_from_one_that_orders_its_tools(
    tmp_path: Path,
) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "fixtures").mkdir()
    for entry in ("set_built", "ordered"):
        (tmp_path / "fixtures" / f"{entry}.yaml").write_text(FIXTURE.format(entry=entry))
    source = str(Path(headerlock.__file__).parents[1])  # this checkout's headerlock
    path = os.pathsep.join([str(tmp_path), source])
    env = {"PYTHONPATH": path, "PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin"}
    hunted = subprocess.run(
        [sys.executable, "-m", "headerlock", "flakes", "--runs", "2"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert hunted.returncode == 1, hunted.stdout + hunted.stderr
    rows = {line.split()[0]: line.split() for line in hunted.stdout.splitlines() if line}
    assert rows["ordered"][1:4] == ["2", "1", "-"], hunted.stdout
    assert rows["set_built"][2] == "2" and "header.tools order" in " ".join(rows["set_built"])
    assert KEY_ID not in hunted.stdout + hunted.stderr
