"""No secret reaches a wire recording, in any field: URL path and query, credential
headers of any name, URL userinfo, mapping keys; and a recording that holds a known
secret is refused on replay and diff, as a scenario recording is."""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from headerlock.errors import WireRecordingError
from headerlock.testing.wire.lock import lock
from tests.hostile import PINNED, cli, one_line_error, write
from tests.model_server import Answer, Hit, ModelServer, json_answer
from tests.wire.agents import KEY

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


def test_a_recording_holding_a_known_secret_is_refused_on_replay_and_diff(
    tmp_path: Path, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "leak.yaml"
    client = openai.OpenAI(base_url=model_server.base_url, api_key=KEY, max_retries=0)
    model_server.script([{"text": "a harmless answer"}])
    with lock(path, mode="record"):
        _ask(client)
    env_key = "sk-proj-hand-edited-0000000001"
    path.write_text(path.read_text().replace("a harmless answer", f"the key is {env_key}"))
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
    known only by its shape (``secrets.KEY_SHAPES``)."""
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
