"""A recorded multi-agent session (a planner, three executors under ``asyncio.gather``
streaming, one RAG step) in a user's pytest project: different agents are different
lineages, never compared; a tool removed inside the planner's own conversation is found
at its request, with the same number in ``--headerlock-cache`` (record and replay),
``headerlock cache`` and the HTML page; the planner's recorded ``cached_tokens`` sit on
the planner's request in all of them."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import openai  # noqa: F401  (loaded once here: the in-process runs reuse it)
import pytest

from headerlock.cli import main
from headerlock.formats.wire_recording import load_wire_recording
from headerlock.testing.wire.apis import NAMES
from headerlock.testing.wire.script import render_reply
from tests.model_server import Answer, Hit, ModelServer

PROJECT = """
import asyncio

import openai
import pytest

KEY = "sk-test-not-a-real-key-0028"
PLANNER = " ".join(f"Planner rule {{n}}: split the work, name each task." for n in range(140))
EXECUTOR = " ".join(f"Executor rule {{n}}: use the tools, cite sources." for n in range(140))


def tools(*names):
    return [{{"type": "function", "function": {{"name": n, "parameters": {{"type": "object"}}}}}}
            for n in names]


async def planner(client, drop):
    messages = [{{"role": "system", "content": PLANNER}}, {{"role": "user", "content": "Plan the report."}}]
    first = await client.chat.completions.create(model="gpt-4o", messages=messages,
                                                 tools=tools("plan", "delegate", "review"))
    messages += [{{"role": "assistant", "content": first.choices[0].message.content}},
                 {{"role": "user", "content": "Now split it."}}]
    later = ("plan", "review") if drop else ("plan", "delegate", "review")
    await client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools(*later))


async def executor(client, i):
    messages = [{{"role": "system", "content": EXECUTOR}},
                {{"role": "user", "content": f"Task {{i}}: collect source {{i}}."}}]
    for turn in range(2):
        stream = await client.chat.completions.create(
            model="gpt-4o", messages=messages, tools=tools("search", "fetch", "summarize"),
            stream=True)
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
        messages += [{{"role": "assistant", "content": text}},
                     {{"role": "user", "content": f"Summarize source {{i}}."}}]


async def rag(client):
    await client.chat.completions.create(model="gpt-4o-mini", messages=[
        {{"role": "system", "content": "Answer from the context."}},
        {{"role": "user", "content": "Context: notes.txt says hi. Question: what does it say?"}}])


async def team(drop):
    client = openai.AsyncOpenAI(base_url="{base}", api_key=KEY, max_retries=0)
    await planner(client, drop)
    await asyncio.gather(*(executor(client, i) for i in range(3)))
    await rag(client)


@pytest.mark.headerlock_pin
@pytest.mark.headerlock_wire
def test_team(headerlock_wire):
    asyncio.run(team(drop=False))


@pytest.mark.headerlock_pin
@pytest.mark.headerlock_wire(header_class="planted")
def test_team_planted(headerlock_wire):
    asyncio.run(team(drop=True))
"""


def answer(hit: Hit) -> Answer:
    """The loopback model, by content: the planner's second request reports 111 cached
    tokens (a JSON answer); executors stream (no usage); every answer names its turn."""
    request = hit.json()
    users = [m["content"] for m in request["messages"] if m["role"] == "user"]
    text = f"done: {users[-1]}"
    status, content_type, body = render_reply(
        "openai.chat", request, {"text": text}, index=len(users), path=hit.path
    )
    if not request.get("stream"):
        data = json.loads(body)
        cached = 111 if users[-1] == "Now split it." else 0
        data["usage"]["prompt_tokens_details"]["cached_tokens"] = cached
        body = json.dumps(data).encode()
    return Answer(status, body, content_type)


def planner_second(path: Path) -> int:
    """The recording's number of the planner's second request."""
    recording = load_wire_recording(path, apis=NAMES)
    found = [
        n for n, e in enumerate(recording.requests, 1) if "Now split it." in json.dumps(e.messages)
    ]
    assert len(found) == 1
    return found[0]


def row(text: str, number: int) -> list[str]:
    """The columns of request ``number``'s row in a report."""
    line = next(line for line in text.splitlines() if re.match(rf"^\s+{number}\s+\d+%", line))
    return line.split()


@pytest.fixture
def project(pytester: pytest.Pytester, model_server: ModelServer) -> pytest.Pytester:
    model_server.route("*/chat/completions", answer)
    pytester.makepyfile(test_team=PROJECT.format(base=model_server.base_url))
    return pytester


def section(out: str, test: str) -> str:
    start = out.index(f"cache report: test_team.py::{test} (")
    end = out.find("cache report: ", start + 1)
    return out[start : end if end > 0 else len(out)]


def test_agents_are_lineages_and_numbers_agree_everywhere(
    project: pytest.Pytester, tmp_path: Path
) -> None:
    recorded = project.runpytest_inprocess(
        "--snapshot-update", "--headerlock-cache", "-p", "no:cacheprovider"
    )
    assert recorded.ret == 0, recorded.stdout.str()
    folder = project.path / "recordings" / "test_team"
    stable, planted = folder / "test_team.yaml", folder / "test_team_planted.yaml"
    number = planner_second(planted)
    assert number == planner_second(stable)
    replayed = project.runpytest_inprocess("--headerlock-cache", "-p", "no:cacheprovider")
    assert replayed.ret == 0, replayed.stdout.str()
    out = io.StringIO()
    code = main(["cache", str(folder), "--html", str(tmp_path / "page.html")], out=out)
    assert code == 1
    cli = out.getvalue()
    cli_stable = cli[cli.index("cache report: ") : cli.index("cache report: ", 10)]
    cli_planted = cli[cli.index("test_team_planted.yaml (") :]
    finding = f"request {number} tools[1] (delegate) byte "
    for run in (recorded, replayed):
        text = run.stdout.str()
        quiet, broken = section(text, "test_team"), section(text, "test_team_planted")
        assert "findings:" not in quiet, quiet  # no finding between different agents
        assert finding in broken and ": tool-removed: removed delegate" in broken, broken
        assert broken.count("tool-removed") == 2  # the row and the finding: nothing else
        # the planner's recorded cached_tokens on the planner's request, as in the CLI
        assert row(quiet, number)[5] == "111" == row(cli_stable, number)[5], quiet
        assert row(broken, number)[:8] == row(cli_planted, number)[:8]
        assert [line for line in quiet.splitlines() if " 111 " in line] == [
            line for line in cli_stable.splitlines() if " 111 " in line
        ]
    assert "findings:" not in cli_stable and finding in cli_planted
    assert cli_stable.count("(new, cold)") >= 3  # planner, executors' lineage, RAG step
    assert "(continues request" in cli_stable
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    broken_rows = re.findall(r'<tr class="request broken" data-request="(\d+)"', page)
    assert broken_rows == [str(number)]
    assert f'data-request="{number}"' in page and "continues request" in page


def test_executors_sharing_tools_and_system_start_warm(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest_inprocess(
        "--snapshot-update", "-k", "test_team and not planted", "-p", "no:cacheprovider"
    )
    assert result.ret == 0
    from headerlock import wire

    report = wire.cache_report(project.path / "recordings" / "test_team" / "test_team.yaml")
    text = report.to_text()
    assert report.findings == (), text
    roots = [r for r in report.requests if r.continues is None]
    assert len(roots) == 5  # the planner, three executors, the RAG step
    warm = [r for r in roots if r.warm_from is not None]
    assert len(warm) == 2, text  # two executors read what the first one wrote
    assert report.lineages == 5
