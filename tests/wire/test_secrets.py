"""No secret reaches a wire recording, in any field: URL path and query, credential
headers of any name, URL userinfo, mapping keys; and a recording that holds a known
secret is refused on replay and diff, as a scenario recording is."""

from __future__ import annotations

import base64
import gzip
import json
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import openai
import pytest
import requests

from headerlock.errors import RecordingRunError, WireRecordingError
from headerlock.formats.secrets import secret_forms
from headerlock.formats.wire_recording import load_wire_recording
from headerlock.formats.wire_scrub import Scrubber
from headerlock.testing.wire.apis import NAMES
from headerlock.testing.wire.lock import lock
from tests.hostile import PINNED, cli, one_line_error, write
from tests.model_server import Answer, Hit, ModelServer, json_answer
from tests.wire.agents import KEY, fn_tool

PATH_KEY = "sk-live-in-the-path-0123456789"
GATEWAY_KEY = "gw-secret-for-the-gateway-4242"
PASSWORD = "pw-userinfo-secret-31415"
QUERY_KEY = "qk-query-secret-27182818"


def _ask(client: openai.OpenAI, **options: Any) -> str:
    reply = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], **options
    )
    return reply.choices[0].message.content or ""


def _record(path: Path, model_server: ModelServer, echo: str, client: openai.OpenAI) -> str:
    model_server.script([{"text": "you sent"}], echo_header=echo)
    with lock(path, mode="record"):
        return _ask(client)


def test_a_key_in_the_url_path_is_never_written(tmp_path: Path, model_server: ModelServer) -> None:
    """A gateway that takes the key in its path (it is also the bearer)."""
    path = tmp_path / "path.yaml"
    base = f"{model_server.origin}/{PATH_KEY}/v1"
    client = openai.OpenAI(base_url=base, api_key=PATH_KEY, max_retries=0)
    said = _record(path, model_server, "authorization", client)
    assert PATH_KEY in said  # the endpoint echoed it
    text = path.read_text()
    assert PATH_KEY not in text
    assert "/<<secret>>/v1/chat/completions" in text


def test_a_gateway_header_holding_a_key_is_a_secret_wherever_it_reappears(
    tmp_path: Path, model_server: ModelServer
) -> None:
    path = tmp_path / "gateway.yaml"
    client = openai.OpenAI(
        base_url=model_server.base_url,
        api_key=KEY,
        max_retries=0,
        default_headers={"x-portkey-api-key": GATEWAY_KEY},
    )
    said = _record(path, model_server, "x-portkey-api-key", client)
    assert GATEWAY_KEY in said
    text = path.read_text()
    assert GATEWAY_KEY not in text and KEY not in text
    assert "you sent <<secret>>" in text


def test_url_userinfo_never_reaches_the_recording(
    tmp_path: Path, model_server: ModelServer
) -> None:
    """``https://user:password@host`` becomes ``Authorization: Basic ...``, echoed back."""
    path = tmp_path / "userinfo.yaml"
    host = model_server.origin.removeprefix("http://")
    client = openai.OpenAI(
        base_url=f"http://alice:{PASSWORD}@{host}/v1", api_key=KEY, max_retries=0
    )
    model_server.script(
        [{"text": "basic"}, {"text": f"your password is {PASSWORD}"}], echo_header="authorization"
    )
    with lock(path, mode="record"):
        _ask(client)
        said = _ask(client)
    assert PASSWORD in said
    text = path.read_text()
    encoded = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    assert PASSWORD not in text and encoded not in text and KEY not in text


def test_a_secret_used_as_a_mapping_key_or_a_query_value_is_scrubbed(
    tmp_path: Path, model_server: ModelServer
) -> None:
    path = tmp_path / "keys.yaml"
    client = openai.OpenAI(base_url=model_server.base_url, api_key=KEY, max_retries=0)
    model_server.script([{"text": "ok"}])
    with lock(path, mode="record"):
        _ask(client, metadata={KEY: "the key as a mapping key"}, extra_query={"key": QUERY_KEY})
    text = path.read_text()
    assert KEY not in text and QUERY_KEY not in text
    assert '"<<secret>>": the key as a mapping key' in text


def _leaked(path: Path, model_server: ModelServer, value: str) -> openai.OpenAI:
    """Record one request at ``path``, then hand-edit ``value`` into its answer; the
    agent's client."""
    client = openai.OpenAI(base_url=model_server.base_url, api_key=KEY, max_retries=0)
    model_server.script([{"text": "a harmless answer"}])
    with lock(path, mode="record"):
        _ask(client)
    path.write_text(path.read_text().replace("a harmless answer", f"the key is {value}"))
    return client


def test_a_recording_holding_a_known_secret_is_refused_on_replay_and_diff(
    tmp_path: Path, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "leak.yaml"
    env_key = "sk-proj-hand-edited-0000000001"
    _leaked(path, model_server, env_key)
    monkeypatch.setenv("OPENAI_API_KEY", env_key)
    with pytest.raises(WireRecordingError, match="holds the value of OPENAI_API_KEY") as caught:
        lock(path).__enter__()
    assert env_key not in str(caught.value)
    other = tmp_path / "other.yaml"
    other.write_text(path.read_text())
    result = subprocess.run(
        [sys.executable, "-m", "headerlock", "diff", str(path), str(other)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"OPENAI_API_KEY": env_key, "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "holds the value of OPENAI_API_KEY" in result.stderr
    assert env_key not in result.stdout + result.stderr
    assert "Traceback" not in result.stderr


def test_a_recording_replayed_before_its_secret_was_known_is_refused_once_it_is(
    tmp_path: Path, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "leak.yaml"
    env_key = "sk-proj-hand-edited-0000000002"
    client = _leaked(path, model_server, env_key)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with lock(path):  # read (and remembered) while the value is no secret: green
        _ask(client)
    monkeypatch.setenv("OPENAI_API_KEY", env_key)  # the same file, read again: refused
    with pytest.raises(WireRecordingError, match="holds the value of OPENAI_API_KEY"):
        lock(path).__enter__()


def _echo(hit: Hit) -> Answer:
    """A chat completion whose text echoes the path, the query and the authorization."""
    text = f"you called {hit.path} with {hit.query} as {hit.headers.get('authorization')}"
    message = {"role": "assistant", "content": text}
    return json_answer(
        {
            "id": "c1",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
        }
    )


def _written(root: Path) -> str:
    """Every file below ``root``, as one text."""
    return "\n".join(p.read_text(errors="replace") for p in root.rglob("*") if p.is_file())


def test_record_live_never_writes_the_base_url_userinfo(
    tmp_path: Path, model_server: ModelServer
) -> None:
    """``HEADERLOCK_BASE_URL`` with userinfo: the SDK sends ``Authorization: Basic ...``
    and the endpoint echoes it into the scenario recording."""
    write(tmp_path, {"fixtures/pin.yaml": PINNED})
    host = model_server.origin.removeprefix("http://")
    url = f"http://alice:{PASSWORD}@{host}/v1"

    def live(*args: str) -> subprocess.CompletedProcess[str]:
        return cli(
            tmp_path, *args, HEADERLOCK_BASE_URL=url, HEADERLOCK_API_KEY="", OPENAI_API_KEY=""
        )

    model_server.script([{"text": "you sent"}], echo_header="authorization")
    result = live("record", "--live")
    assert result.returncode == 0, result.stdout + result.stderr
    assert model_server.hits[0].headers["authorization"].startswith("Basic ")
    encoded = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    written = _written(tmp_path) + result.stdout + result.stderr
    for leaked in (PASSWORD, encoded, f"alice:{PASSWORD}"):
        assert leaked not in written
    recording = tmp_path / "recordings" / "pin.yaml"
    assert "you sent Basic <<secret>>" in recording.read_text()
    assert live("replay").returncode == 0
    recording.write_text(recording.read_text().replace("Basic <<secret>>", f"Basic {encoded}"))
    refused = live("replay")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "holds the value of HEADERLOCK_BASE_URL" in one_line_error(refused)
    assert encoded not in refused.stdout + refused.stderr


def _httpx_post(url: str, **params: str) -> str:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    reply = httpx.post(url, params=params, json=body)
    return str(reply.json()["choices"][0]["message"]["content"])


@pytest.mark.parametrize("name", ["key", "access_token", "api_key", "X-Goog-Api-Key", "sig"])
@pytest.mark.parametrize("client", ["openai", "httpx"])
def test_a_credential_query_value_echoed_by_the_endpoint_is_never_written(
    tmp_path: Path, model_server: ModelServer, client: str, name: str
) -> None:
    path = tmp_path / "query.yaml"
    model_server.route("*/chat/completions", _echo)
    with lock(path, mode="record"):
        if client == "openai":
            sdk = openai.OpenAI(base_url=model_server.base_url, api_key=KEY, max_retries=0)
            said = _ask(sdk, extra_query={name: QUERY_KEY})
        else:
            said = _httpx_post(f"{model_server.base_url}/chat/completions", **{name: QUERY_KEY})
    assert QUERY_KEY in said  # the endpoint echoed it
    text = path.read_text()
    assert QUERY_KEY not in text
    assert "<<secret>>" in text


OPENAI_SHAPED = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7dEf0hIj3kLm6n"
ANTHROPIC_SHAPED = "sk-ant-api03-" + "Zy9x-Wv8u_Ts7r" * 6 + "Qp6o0n7m1" + "AA"
GOOGLE_SHAPED = "AIza" + "SyB3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAB"


@pytest.mark.parametrize(
    "shaped",
    [OPENAI_SHAPED, ANTHROPIC_SHAPED, GOOGLE_SHAPED],
    ids=["openai", "anthropic", "google"],
)
def test_a_well_known_key_shape_in_the_url_path_or_query_is_never_written(
    tmp_path: Path, model_server: ModelServer, shaped: str
) -> None:
    """Not the bearer, not an environment value, not in a credential-named parameter:
    known only by its shape (each API module's ``Credentials.key_shapes``)."""
    path = tmp_path / "shaped.yaml"
    model_server.route("*/chat/completions", _echo)
    in_path = openai.OpenAI(
        base_url=f"{model_server.origin}/{shaped}/v1", api_key=KEY, max_retries=0
    )
    with lock(path, mode="record"):
        said = [_ask(in_path), _httpx_post(f"{model_server.base_url}/chat/completions", q=shaped)]
    assert all(shaped in s for s in said), said
    text = path.read_text()
    assert shaped not in text
    assert "/<<secret>>/v1/chat/completions" in text


def test_ordinary_text_in_a_url_is_not_a_key_shape(
    tmp_path: Path, model_server: ModelServer
) -> None:
    plain = ["sk-learn-models", "task-" + "a" * 60, "AIza-too-short", "sk-" + "b" * 30]
    path = tmp_path / "plain.yaml"
    model_server.route("*/chat/completions", _echo)
    base = f"{model_server.origin}/{'/'.join(plain)}/v1"
    with lock(path, mode="record"):
        _ask(openai.OpenAI(base_url=base, api_key=KEY, max_retries=0))
    text = path.read_text()
    assert all(part in text for part in plain), text
    assert [len(s) for s in (OPENAI_SHAPED, ANTHROPIC_SHAPED, GOOGLE_SHAPED)] == [56, 108, 39]


# -- every encoding and escaped form of a secret --------------------------------------

ENV_SECRET = "sk-env-registered-secret-5555"
ODD_SECRET = 'pa"ss\\wörd-4711'
"""A secret holding a quote, a backslash and non-ASCII: JSON escapes all three."""


def _encoders() -> dict[str, Callable[[bytes], bytes]]:
    found: dict[str, Callable[[bytes], bytes]] = {
        "gzip": gzip.compress,
        "deflate": zlib.compress,
        "gzip, deflate": lambda b: zlib.compress(gzip.compress(b)),
    }
    try:
        import brotli  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        return found
    found["br"] = brotli.compress
    return found


def _model_call(model_server: ModelServer) -> None:
    chat = openai.OpenAI(base_url=model_server.base_url, api_key=KEY, max_retries=0)
    _ask(chat)


def _bodies(path: Path) -> list[bytes]:
    """The request bodies of a recording's other traffic, as bytes."""
    found = []
    for entry in load_wire_recording(path, apis=NAMES).http:
        assert entry.body is not None
        value = entry.body.value
        if entry.body.kind == "base64":
            found.append(base64.b64decode(value))
        else:
            found.append((value if isinstance(value, str) else json.dumps(value)).encode())
    return found


@pytest.mark.parametrize("encoding", sorted(_encoders()))
def test_a_secret_in_an_encoded_body_is_decoded_and_scrubbed(
    encoding: str, tmp_path: Path, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HEADERLOCK_API_KEY", ENV_SECRET)
    model_server.script([{"text": "done"}])
    model_server.route("/tool/upload", json_answer({"ok": True}))
    sent = json.dumps({"note": f"the key is {ENV_SECRET}"}).encode()
    url = f"{model_server.origin}/tool/upload"

    def body() -> None:
        headers = {"Content-Encoding": encoding, "Content-Type": "application/json"}
        assert requests.post(url, data=_encoders()[encoding](sent), headers=headers).ok
        _model_call(model_server)

    path = tmp_path / "encoded.yaml"
    with lock(path, mode="record"):
        body()
    [entry] = load_wire_recording(path, apis=NAMES).http
    assert entry.encoding == encoding
    assert entry.body is not None and entry.body.value == {"note": "the key is <<secret>>"}
    hits = len(model_server.hits)
    with lock(path):
        body()
    assert len(model_server.hits) == hits


def test_a_secret_in_a_body_that_is_not_utf8_is_scrubbed_as_bytes(
    tmp_path: Path, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HEADERLOCK_API_KEY", ENV_SECRET)
    model_server.script([{"text": "done"}])
    model_server.route("/tool/blob", Answer(200, b"\xff" + ENV_SECRET.encode(), "image/png"))
    sent = b"\xff\xfe" + ENV_SECRET.encode("latin-1") + b"\x00\xe9"

    def body() -> bytes:
        got = httpx.post(f"{model_server.origin}/tool/blob", content=sent).content
        _model_call(model_server)
        return got

    path = tmp_path / "bytes.yaml"
    with lock(path, mode="record"):
        body()
    [raw] = _bodies(path)
    assert raw == b"\xff\xfe<<secret>>\x00\xe9"
    [entry] = load_wire_recording(path, apis=NAMES).http
    assert entry.response is not None
    assert base64.b64decode(entry.response.body) == b"\xff<<secret>>"
    with lock(path):
        assert body() == b"\xff<<secret>>"


def test_a_body_encoding_headerlock_cannot_decode_is_never_written(
    tmp_path: Path, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    model_server.script([{"text": "done"}])
    model_server.route("/tool/upload", json_answer({"ok": True}))
    path = tmp_path / "zstd.yaml"
    path.write_text("old bytes")

    def body() -> None:
        headers = {"Content-Encoding": "zstd"}
        url = f"{model_server.origin}/tool/upload"
        requests.post(url, data=b"\x28\xb5\x2f\xfd", headers=headers, timeout=5)
        _model_call(model_server)

    with (
        pytest.raises(RecordingRunError, match="content-encoding 'zstd', which headerlock"),
        lock(path, mode="record"),
    ):
        body()
    assert path.read_text() == "old bytes"


def test_every_escaped_form_of_a_secret_is_scrubbed_from_a_pinned_prefix(
    tmp_path: Path, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``requests`` sends JSON with ``ensure_ascii``: the system prompt and the tools hold
    the secret as ``\\"``, ``\\\\`` and ``\\u00f6``; the raw prefix keeps them so."""
    monkeypatch.setenv("MY_TOKEN", ODD_SECRET)
    model_server.script([{"text": "done"}])
    forms = secret_forms(ODD_SECRET)
    body: dict[str, Any] = {
        "model": "m",
        "messages": [
            {"role": "system", "content": f"token {ODD_SECRET}"},
            {"role": "user", "content": f"url {quote(ODD_SECRET)} b64 {_b64(ODD_SECRET)}"},
        ],
        "tools": [fn_tool("t", {"type": "object", "description": ODD_SECRET})],
    }
    url = f"{model_server.base_url}/chat/completions"

    def send() -> None:
        assert requests.post(url, json=body, timeout=5).ok

    path = tmp_path / "pinned.yaml"
    with lock(path, mode="record", pin=True, redact_env=["MY_TOKEN"]):
        send()
    text = path.read_text()
    assert json.dumps(ODD_SECRET)[1:-1] not in text
    assert [form for form in forms if form in text] == []
    [entry] = load_wire_recording(path, apis=NAMES).requests
    assert entry.prefix is not None and "<<secret>>" in entry.prefix.tools
    assert "<<secret>>" in entry.prefix.system
    hits = len(model_server.hits)
    with lock(path, redact_env=["MY_TOKEN"]):
        send()
    assert len(model_server.hits) == hits


def _b64(text: str) -> str:
    return base64.b64encode(f"user:{text}".encode()).decode()


@pytest.mark.parametrize(
    "form",
    [
        json.dumps(ODD_SECRET)[1:-1],
        json.dumps(ODD_SECRET, ensure_ascii=False)[1:-1],
        quote(ODD_SECRET, safe=""),
        _b64(ODD_SECRET),
    ],
    ids=["json-ascii", "json", "url", "base64"],
)
def test_a_recording_holding_an_escaped_form_of_a_secret_is_refused(
    form: str, tmp_path: Path, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "leak.yaml"
    model_server.script([{"text": "a harmless answer"}])
    with lock(path, mode="record"):
        _model_call(model_server)
    path.write_text(path.read_text().replace("a harmless answer", f"see {form}"))  # plain YAML
    monkeypatch.setenv("OPENAI_API_KEY", ODD_SECRET)
    with pytest.raises(WireRecordingError, match="holds the value of OPENAI_API_KEY") as caught:
        lock(path).__enter__()
    assert not [f for f in secret_forms(ODD_SECRET) if f in str(caught.value)]


def test_a_scrubber_never_shows_its_secrets() -> None:
    scrubber = Scrubber.of([KEY, ODD_SECRET])
    assert [f for f in (*secret_forms(KEY), *secret_forms(ODD_SECRET)) if f in repr(scrubber)] == []
    scrubbed = scrubber.text(f"Basic {_b64(KEY)}")  # the key at an offset in base64
    assert "<<secret>>" in scrubbed and not [f for f in secret_forms(KEY) if f in scrubbed]
