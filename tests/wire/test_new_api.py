"""Adding a model API is one module plus one registry line: a toy API, defined here as a
new ``apis/`` module would define it (its own path, tool list location and shape, secret
header and volatile config key), is added to ``apis.REGISTERED`` the way a new line adds
it, and nothing else; plain ``httpx`` then records, replays and pins it against a real
loopback server like any registered API, and its secret stays out of every file and
output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from headerlock import wire
from headerlock.errors import WireMismatch
from headerlock.formats.wire_recording import load_wire_recording
from headerlock.formats.wire_vocabulary import Credentials, WireVocabulary, vocabulary
from headerlock.runtime.wire_tools import ToolShape
from headerlock.testing.wire import apis
from headerlock.testing.wire.apis.base import JSON, ModelApi, Rendered, Turn, Volatile, dumps
from tests.model_server import ModelServer, json_answer, serve

PATH = "/toyco/v3/ponder"
PASS_HEADER = "x-toyco-pass"  # no generic credential word in it: only the API says so
PASS = "toyco-pass-7f3a9c2e51d84b06"
TOOLS = ["measure", "fold", "glue"]
ANSWER = {"said": "done", "spent": 3}


def _render(turn: Turn) -> Rendered:
    return 200, JSON, dumps({"said": turn.reply.text, "spent": turn.output_tokens}).encode()


TOY = ModelApi(
    name="toyco.ponder",
    path_suffixes=(PATH,),
    messages_key="lines",
    system_keys=("preamble",),
    tools_at=("kit", "gadgets"),
    tool_shape=ToolShape("Toyco", wrapper="gadget"),
    schema_at=("takes",),
    volatile=Volatile(keys=("nonce",)),
    vocabulary=WireVocabulary(Credentials(headers=(PASS_HEADER,))),
    render=_render,
    error_body=lambda message, code: {"fault": {"says": message, "code": code}},
    call_id_prefix="toy_",
)


@pytest.fixture(autouse=True)
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry line: ``REGISTERED`` with the toy API in it, for this test only (after
    the registry was used, as earlier tests in a session use it)."""
    assert "toyco.ponder" not in apis.NAMES and vocabulary().credentials.headers
    monkeypatch.setattr(apis, "REGISTERED", (*apis.REGISTERED, TOY))


def gadget(name: str) -> dict[str, Any]:
    return {"gadget": {"name": name, "about": f"The {name} gadget.", "takes": {"type": "object"}}}


def ponder(origin: str, tools: list[str], nonce: int) -> httpx.Response:
    body = {
        "preamble": "Be brief.",
        "lines": [{"who": "user", "says": f"build it, pass {PASS}"}],  # the agent leaks it
        "kit": {"gadgets": [gadget(name) for name in tools], "pick": "any"},
        "nonce": nonce,
        "depth": 2,
    }
    return httpx.post(origin + PATH, json=body, headers={PASS_HEADER: PASS}, timeout=5)


def test_the_registry_derives_everything_from_its_one_list() -> None:
    assert "toyco.ponder" in apis.NAMES and apis.model_api("toyco.ponder") is TOY
    assert apis.detect_api("POST", "/x" + PATH) == "toyco.ponder"
    assert PASS_HEADER in apis.vocabulary().credentials.headers
    assert TOY.tool_shape in apis.tool_shapes()


def test_a_new_api_records_replays_pins_and_keeps_its_secret(
    model_server: ModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    route = model_server.route("*" + PATH, json_answer(ANSWER))
    path = tmp_path / "toy.yaml"
    with wire.lock(path, mode="record", pin=True) as run:
        assert ponder(model_server.origin, TOOLS, nonce=1).json() == ANSWER
    assert len(route.hits) == 1 and route.hits[0].headers[PASS_HEADER] == PASS
    [entry] = load_wire_recording(path, apis=apis.NAMES).requests
    assert (entry.api, entry.tool_names) == ("toyco.ponder", ("fold", "glue", "measure"))
    assert entry.config == {"depth": 2, "kit": {"pick": "any"}}  # the nonce is volatile
    assert [r.api for r in run.requests] == ["toyco.ponder"]

    with serve() as stopped:
        closed = stopped.origin
    before = path.read_bytes()
    with wire.lock(path) as replay:  # nothing listens at ``closed``: the recording answers
        assert ponder(closed, TOOLS, nonce=2).json() == ANSWER
    assert replay.differences == [] and path.read_bytes() == before
    assert len(route.hits) == 1

    with pytest.raises(WireMismatch) as caught, wire.lock(path):
        assert ponder(closed, ["glue", "measure", "fold"], nonce=3).status_code >= 400
    shown = "\n".join(caught.value.differences)
    assert all(name in shown for name in TOOLS), shown

    output = capsys.readouterr()
    for text in (path.read_text(), str(caught.value), output.out, output.err):
        assert PASS not in text
    assert "build it, pass <<secret>>" in path.read_text()  # its header's value, everywhere
