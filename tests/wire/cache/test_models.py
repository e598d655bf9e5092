"""Lineages, not sessions: a request is compared with the request it continues (its
messages extend that one's). A model switch inside a conversation is ``config-changed``
naming both models; a new conversation on another model starts its own lineage, cold,
with no finding; a new conversation on the same tools and system starts warm."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from headerlock import wire
from tests.model_server import ModelServer
from tests.wire.cache.corpus import APIS, Req, base, record

OTHER = {
    "openai.chat": "gpt-4o-mini",
    "openai.responses": "gpt-4o-mini",
    "anthropic.messages": "claude-opus-4-1",
    "gemini.generate": "gemini-2.0-flash",
    "bedrock.converse": "anthropic.claude-opus-4-1-20250805-v1:0",
}


@pytest.mark.parametrize("api", APIS)
def test_a_model_switch_inside_a_conversation_is_config_changed(
    model_server: ModelServer, tmp_path: Path, api: str
) -> None:
    first, second, third = base(api)
    reqs = [first, second, replace(third, model=OTHER[api])]
    path = tmp_path / "switch.yaml"
    run = record(model_server, api, reqs, path)
    for report in (wire.cache_report(run), wire.cache_report(path)):
        text = report.to_text()
        assert [(f.number, f.segment, f.code) for f in report.findings] == [
            (3, "config", "config-changed")
        ], text
        assert f'model "{first.model}" -> "{OTHER[api]}"' in report.findings[0].detail
        assert [r.continues for r in report.requests] == [None, 1, 2]
        assert report.requests[2].predicted == 0, text  # another model: nothing to read


@pytest.mark.parametrize("api", APIS)
def test_a_new_conversation_on_another_model_is_no_finding(
    model_server: ModelServer, tmp_path: Path, api: str
) -> None:
    first, second, _ = base(api)
    other = Req(turn=1, model=OTHER[api], system=first.system + " ")  # another agent
    reqs = [first, second, other]
    path = tmp_path / "models.yaml"
    run = record(model_server, api, reqs, path)
    for report in (wire.cache_report(run), wire.cache_report(path)):
        text = report.to_text()
        assert report.findings == (), text
        assert [r.lineage for r in report.requests] == [1, 1, 2]
        assert [r.continues for r in report.requests] == [None, 1, None]
        assert "(continues request 1)" in text and "(new, cold)" in text


def test_a_sibling_on_the_same_tools_and_system_starts_warm(
    model_server: ModelServer, tmp_path: Path
) -> None:
    first, second, _ = base("openai.chat")
    sibling = replace(first, system=first.system)  # the same tools and system
    reqs = [first, second, replace(sibling, turn=1)]
    report = wire.cache_report(record(model_server, "openai.chat", reqs, tmp_path / "w.yaml"))
    assert report.findings == ()
    assert [r.continues for r in report.requests] == [None, 1, None]
    assert report.requests[2].warm_from == 1 and report.requests[2].predicted > 1024
    assert "(new, warm from request 1 (same tools and system))" in report.to_text()


def test_a_keyed_config_change_on_the_same_model_still_breaks(
    model_server: ModelServer, tmp_path: Path
) -> None:
    reqs = base("openai.chat")
    reqs[2] = replace(reqs[2], extra={"prompt_cache_key": "agent-b"})
    report = wire.cache_report(record(model_server, "openai.chat", reqs, tmp_path / "s.yaml"))
    assert [f.line() for f in report.findings] == [
        'request 3 config: config-changed: prompt_cache_key null -> "agent-b"'
    ]


def test_a_server_side_history_continues_the_latest_request(
    model_server: ModelServer, tmp_path: Path
) -> None:
    """``previous_response_id``: only the new turn is sent; each request continues the
    latest of its API and model, so tools reordered on the third turn are still found."""
    import openai

    from tests.wire.cache.corpus import KEY, LONG, TOOLS

    model_server.script([{"text": f"Answer {n}."} for n in (1, 2, 3)])
    client = openai.OpenAI(base_url=model_server.base_url, api_key=KEY, max_retries=0)
    tools: Any = [{"type": "function", "name": n, "description": d, "parameters": s}
                  for n, d, s in TOOLS]  # fmt: skip
    path = tmp_path / "server.yaml"
    with wire.lock(path, mode="record", pin=True) as run:
        previous = None
        for turn in (1, 2, 3):
            extra: Any = {"previous_response_id": previous} if previous else {}
            reply = client.responses.create(
                model="gpt-4o", instructions=LONG, input=f"Question {turn}?",
                tools=tools if turn < 3 else tools[::-1], **extra,
            )  # fmt: skip
            previous = reply.id
    for report in (wire.cache_report(run), wire.cache_report(path)):
        assert [r.continues for r in report.requests] == [None, 1, 2]
        assert [(f.number, f.code) for f in report.findings] == [(3, "tools-reordered")]
