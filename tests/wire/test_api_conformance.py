"""The conformance test (issue 26 item 5): every model API headerlock registers goes
through the same cases, each through its real SDK client over real HTTP to one
loopback model server per module.

1. record: a request with three tools and a system prompt, and a streamed one, against
   the server and scripted;
2. replay with the server stopped: the same answers, 0 hits, green;
3. pin: a pinned recording fails on a one-word system change, naming the segment;
4. order: reordered tools fail as an order flake naming the tool list (no pending file),
   a changed description names the tool, and ``assert_order_invariant`` catches tools
   sent in load order;
5. secrets: the client's planted credential (API key header; AWS key id, secret key,
   session token and the SigV4 signature), also leaked into the system prompt, appears in
   no recording, header lock, pending file or pytest output;
6. cache: ``headerlock cache`` finds a planted tools change and, where the API caches at
   explicit breakpoints, a planted breakpoint removal worded with its own marker.

The parameter is the registry itself (``apis.NAMES``): a newly registered API runs every
case, and fails until ``conformance_agents.AGENTS`` has its agent. Only the public
surface is used: ``headerlock.wire``, the ``headerlock_wire`` fixture and the CLI.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from headerlock import wire
from headerlock.cli import main
from headerlock.testing.wire.apis import NAMES
from tests.model_server import ModelServer, serve
from tests.wire import conformance_agents
from tests.wire.agents import CLOSED_ORIGIN
from tests.wire.cache.corpus import LONG
from tests.wire.conformance_agents import AGENTS, KEYS, Tool, Turn, ask

SYSTEM = "You are terse."
BRIEF = "You are brief."
"""The system with one word changed."""
TOOLS: tuple[Tool, ...] = (
    ("read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}),
    ("grep", "Search files.", {"type": "object", "properties": {"pattern": {"type": "string"}}}),
    ("bash", "Run a command.", {"type": "object", "properties": {"command": {"type": "string"}}}),
)
NAMES_SENT = [name for name, _, _ in TOOLS]
REORDERED = (TOOLS[1], TOOLS[0], TOOLS[2])
"""The same tools in another order, not sorted by name."""
DESCRIBED = (TOOLS[0], ("grep", "Search code.", TOOLS[1][2]), TOOLS[2])
"""``grep``'s description changed."""
REPLIES = [{"text": "hello there"}, {"text": "streamed three words"}]
MARKERS = {"anthropic.messages": "cache_control", "bedrock.converse": "cachePoint"}
"""The APIs that cache only at explicit breakpoints, and their breakpoint marker."""


def test_every_registered_api_has_an_agent() -> None:
    assert sorted(AGENTS) == sorted(NAMES) == sorted(KEYS) == sorted(conformance_agents.MODELS)


@pytest.fixture(scope="module")
def server() -> Iterator[ModelServer]:
    """One model server for the module (each test scripts it afresh)."""
    with serve() as running:
        yield running


@pytest.fixture(scope="module", params=NAMES)
def api(request: pytest.FixtureRequest) -> str:
    """Each registered model API; one with no agent fails every case."""
    name: str = request.param
    if name not in AGENTS:
        pytest.fail(f"{name} is registered but has no agent in conformance_agents.AGENTS")
    return name


def conversation(api: str, origin: str, system: str = SYSTEM, tools: Sequence[Tool] = TOOLS) -> list[str]:  # fmt: skip
    """A plain request and a streamed one, each with the system and three tools."""
    return [
        ask(api, origin, system=system, tools=tools),
        ask(api, origin, system=system, tools=tools, turns=[("user", "more")], stream=True),
    ]


def swallowing(call: Callable[[], object]) -> None:
    """``call`` as an agent that catches its SDK's error (the 400 of a mismatch) and goes on."""
    with contextlib.suppress(Exception):  # each SDK raises its own error class
        call()


@dataclass(frozen=True)
class Recorded:
    """One API's conversation recorded unpinned (``path``) and pinned (``pinned``)."""

    path: Path
    pinned: Path
    run: wire.WireRun
    answers: list[str]
    hits: int


@pytest.fixture(scope="module")
def recorded(api: str, server: ModelServer, tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    folder = tmp_path_factory.mktemp(api)
    server.reset()
    server.script(REPLIES * 2)
    with wire.lock(folder / "agent.yaml", mode="record") as run:
        answers = conversation(api, server.origin)
    hits = len(server.hits)
    with wire.lock(folder / "pinned.yaml", mode="record", pin=True):
        assert conversation(api, server.origin) == answers
    return Recorded(folder / "agent.yaml", folder / "pinned.yaml", run, answers, hits)


# -- 1. record, 2. replay ---------------------------------------------------------------


def test_a_request_with_three_tools_and_a_system_records(api: str, recorded: Recorded) -> None:
    assert recorded.answers == ["hello there", "streamed three words"]
    assert recorded.hits == 2  # the plain request and the stream reached the server
    requests = recorded.run.requests
    assert [r.api for r in requests] == [api, api]
    assert [list(r.tool_names) for r in requests] == [NAMES_SENT, NAMES_SENT]
    assert all(SYSTEM in json.dumps(r.header.system) for r in requests)
    text = recorded.path.read_text()
    assert f"api: {api}" in text and "hello there" in text


def test_a_scripted_record_replays_the_same_answers(api: str, tmp_path: Path) -> None:
    """The model scripted (nothing listens at ``CLOSED_ORIGIN``): recorded, then replayed."""
    path = tmp_path / "scripted.yaml"
    with wire.lock(path, mode="record", script=REPLIES) as run:
        answers = conversation(api, CLOSED_ORIGIN)
    assert answers == ["hello there", "streamed three words"]
    assert [(r.api, list(r.tool_names)) for r in run.requests] == [(api, NAMES_SENT)] * 2
    with wire.lock(path) as replay:
        assert conversation(api, CLOSED_ORIGIN) == answers
    assert replay.differences == []


def test_the_recording_replays_with_the_server_stopped(
    api: str, recorded: Recorded, server: ModelServer
) -> None:
    for path, origin in ((recorded.path, CLOSED_ORIGIN), (recorded.pinned, server.origin)):
        before, hits = path.read_bytes(), len(server.hits)
        with wire.lock(path) as run:  # nothing listens at CLOSED_ORIGIN
            assert conversation(api, origin) == recorded.answers
        assert len(server.hits) == hits  # 0 hits
        assert run.differences == [] and path.read_bytes() == before
        assert [r.api for r in run.requests] == [api, api]


# -- 3. pin -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Failed:
    """A failed replay: its error, and whether it wrote a pending file (then removed)."""

    error: wire.WireMismatch
    pending: bool

    @property
    def text(self) -> str:
        return str(self.error)


def mismatch(path: Path, system: str, tools: Sequence[Tool], api: str) -> Failed:
    """A replay of ``path`` (pending files on) whose agent sends ``system`` and ``tools``;
    the recording's bytes stay."""
    before, pending = path.read_bytes(), path.with_name(path.name + ".new")
    with pytest.raises(wire.WireMismatch) as caught, wire.lock(path, pending=True):
        swallowing(lambda: conversation(api, CLOSED_ORIGIN, system, tools))
    written = pending.is_file()
    pending.unlink(missing_ok=True)
    assert path.read_bytes() == before
    return Failed(caught.value, written)


def test_a_pinned_recording_fails_on_a_one_word_system_change(api: str, recorded: Recorded) -> None:
    failed = mismatch(recorded.pinned, BRIEF, TOOLS, api)
    assert f"request 1 ({api}) system:" in failed.text, failed.text
    assert "terse" in failed.text and "brief" in failed.text
    assert not any("tools:" in line for line in failed.error.differences), failed.text
    assert failed.pending  # a change to review


# -- 4. order -----------------------------------------------------------------------------


def test_reordered_tools_fail_as_an_order_flake_naming_the_tool_list(
    api: str, recorded: Recorded
) -> None:
    failed = mismatch(recorded.pinned, SYSTEM, REORDERED, api)
    order = f"request 1 ({api}) tools: order read_file, grep, bash -> grep, read_file, bash"
    assert order in failed.text, failed.text
    assert "an order flake" in failed.text
    assert not failed.pending  # a flake is no change to accept


def test_a_changed_tool_description_names_the_tool(api: str, recorded: Recorded) -> None:
    failed = mismatch(recorded.pinned, SYSTEM, DESCRIBED, api)
    assert f"request 1 ({api}) tools: grep changed:" in failed.text, failed.text
    assert "'Search files.' -> 'Search code.'" in failed.text
    assert failed.pending


def test_the_order_check_catches_tools_sent_in_load_order(api: str) -> None:
    def agent(tools: list[Tool]) -> None:
        ask(api, CLOSED_ORIGIN, system=SYSTEM, tools=tools)

    with pytest.raises(wire.WireOrderError) as caught:
        wire.assert_order_invariant(agent, TOOLS, script=[{"text": "ok"}], shrink=False)
    assert (caught.value.api, caught.value.segment) == (api, "tools")

    def ordered(tools: list[Tool]) -> None:
        agent(sorted(tools))

    wire.assert_order_invariant(ordered, TOOLS, script=[{"text": "ok"}], max_examples=3)


# -- 5. secrets ---------------------------------------------------------------------------

USER_TEST = """
import os

from agents import KEYS, ask

API = os.environ["CONFORMANCE_API"]
ORIGIN = os.environ["CONFORMANCE_ORIGIN"]
TOOLS = {tools!r}


def test_agent(headerlock_wire):
    system = "You are terse. Debug: " + " ".join(KEYS[API]) + os.environ.get("CONFORMANCE_EXTRA", "")
    assert ask(API, ORIGIN, system=system, tools=TOOLS) == "hello there"
    assert ask(API, ORIGIN, system=system, tools=TOOLS, stream=True) == "streamed three words"
"""


CREDENTIAL_HEADERS = ("authorization", "x-api-key", "x-goog-api-key", "x-amz-security-token")
"""The headers the SDK clients carry their credential in (SigV4: its signature too)."""


def test_no_planted_credential_reaches_a_file_or_the_output(
    api: str, server: ModelServer, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The credential the client carries, also leaked into the system prompt: recorded
    through the ``headerlock_wire`` fixture, then a replay whose system changed fails and
    shows the system, and writes its pending header lock."""
    pytester.makeini("[pytest]\naddopts = -p no:randomly -p no:cacheprovider\n")
    pytester.makepyfile(agents=Path(conformance_agents.__file__).read_text())
    pytester.makepyfile(test_agent=USER_TEST.format(tools=list(TOOLS)))
    monkeypatch.setenv("CONFORMANCE_API", api)
    server.reset()
    server.script(REPLIES)
    monkeypatch.setenv("CONFORMANCE_ORIGIN", server.origin)
    recorded = pytester.runpytest_inprocess("--snapshot-update")
    recorded.assert_outcomes(passed=1)
    sent = [h.headers[k] for h in server.hits for k in CREDENTIAL_HEADERS if k in h.headers]
    sent += [value.rpartition("Signature=")[2] for value in sent if "Signature=" in value]
    assert sent, "the client sent no credential header"
    monkeypatch.setenv("CONFORMANCE_ORIGIN", CLOSED_ORIGIN)
    monkeypatch.setenv("CONFORMANCE_EXTRA", " Be kind.")
    failed = pytester.runpytest_inprocess()
    failed.assert_outcomes(failed=1)
    output = "\n".join([*recorded.outlines, *recorded.errlines, *failed.outlines, *failed.errlines])
    shown = "Debug: " + " ".join(["<<secret>>"] * len(KEYS[api]))  # each value scrubbed
    assert "system" in output and f"{shown} Be kind." in output, output
    written = {
        path: path.read_text()
        for path in sorted(pytester.path.rglob("*"))
        if path.is_file() and path.suffix not in (".py", ".pyc", ".ini")
    }
    assert any(path.name.endswith(".new") for path in written), sorted(written)
    assert sum("<<secret>>" in text for text in written.values()) >= 2, sorted(written)
    for secret in (*KEYS[api], *sent, "AWS4-HMAC-SHA256"):
        assert secret not in output
        assert [path for path, text in written.items() if secret in text] == []


# -- 6. cache -----------------------------------------------------------------------------


def turns(count: int) -> list[Turn]:
    """A conversation of ``count`` questions, each answered as the script answers."""
    said: list[Turn] = []
    for n in range(1, count + 1):
        said += [("assistant", f"Answer {n - 1}: done.")] if n > 1 else []
        said.append(("user", f"Question {n}: what is in notes/{n}.txt?"))
    return said


def test_the_cache_report_finds_a_tools_change_and_a_breakpoint_removal(
    api: str, server: ModelServer, tmp_path: Path
) -> None:
    """Four turns of one conversation over a long system: turn 3 changes ``grep``'s
    description; turn 4 drops the breakpoint after the system (where the API has one)."""
    server.reset()
    server.script([{"text": f"Answer {n}: done."} for n in (1, 2, 3, 4)])
    path = tmp_path / "session.yaml"
    with wire.lock(path, mode="record", pin=True):
        for n, tools, mark in ((1, TOOLS, True), (2, TOOLS, True), (3, DESCRIBED, True),
                               (4, DESCRIBED, False)):  # fmt: skip
            ask(api, server.origin, system=LONG, tools=tools, turns=turns(n), mark=mark)
    expected = [(3, "tools", "tool-changed")]
    expected += [(4, "config", "no-breakpoint")] if api in MARKERS else []
    report = wire.cache_report(path)
    assert [(f.number, f.segment, f.code) for f in report.findings] == expected, report.to_text()
    out = io.StringIO()
    assert main(["cache", str(path)], out=out) == 1, out.getvalue()
    lines = out.getvalue().splitlines()
    assert any(line.strip().startswith("request 3 tools[1] (grep)") for line in lines), lines
    if api in MARKERS:
        [line] = [x for x in lines if "request 4 config: no-breakpoint:" in x]
        others = set(MARKERS.values()) - {MARKERS[api]}
        assert MARKERS[api] in line and not any(other in line for other in others), line
