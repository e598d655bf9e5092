"""No secret reaches a wire recording, in any field: URL path and query, credential
headers of any name, URL userinfo, mapping keys; and a recording that holds a known
secret is refused on replay and diff, as a scenario recording is."""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path
from typing import Any

import openai
import pytest

from headerlock.errors import WireRecordingError
from headerlock.testing.wire.lock import lock
from tests.model_server import ModelServer
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
