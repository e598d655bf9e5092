"""``assert_cache_stable`` on recorded SDK sessions: a timestamp in the system prompt,
tools sent in set order (as a restarted agent sends them), a stable session; and the
recorded usage (cache reads and writes) beside the prediction."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from headerlock import wire
from headerlock.errors import CacheBreakError, ConfigError
from headerlock.testing.wire.cache.html import html_page
from headerlock.testing.wire.cache.prefix import estimate_tokens
from tests.model_server import ModelServer, json_answer
from tests.wire.cache.corpus import KEY, LONG, SENDERS, TOOLS, base

SET_ORDER = "import json, sys; print(json.dumps(list({*json.loads(sys.argv[1])})))"
NAMES = [name for name, _, _ in TOOLS] + ["todo", "web_fetch", "glob", "edit"]


def set_orders(count: int) -> list[list[str]]:
    """The tool names as ``list(set(names))`` in fresh processes of distinct hash seeds,
    the first ``count`` distinct orders (what an agent that keeps its tools in a set
    sends after each restart)."""
    orders: list[list[str]] = []
    for seed in range(64):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        out = subprocess.run(
            [sys.executable, "-c", SET_ORDER, json.dumps(NAMES)],
            env=env, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        order = json.loads(out)
        if order not in orders:
            orders.append(order)
        if len(orders) == count:
            return orders
    raise AssertionError("set order did not vary over 64 hash seeds")


def tool(name: str) -> Any:
    parameters = {"type": "object", "properties": {"q": {"type": "string"}}}
    return {
        "type": "function",
        "function": {"name": name, "description": f"The {name} tool.", "parameters": parameters},
    }


def agent(client: openai.OpenAI, systems: list[str], tool_lists: list[list[str]]) -> None:
    """A chat loop: one question per turn, the history growing."""
    messages: list[Any] = []
    for turn, (system, names) in enumerate(zip(systems, tool_lists, strict=True), 1):
        messages.append({"role": "user", "content": f"Question {turn}?"})
        reply = client.chat.completions.create(
            model="gpt-4o",
            messages=[{"role": "system", "content": system}, *messages],
            tools=[tool(n) for n in names],
        )
        messages.append({"role": "assistant", "content": reply.choices[0].message.content})


def recorded(server: ModelServer, path: Path, systems: list[str], tools: list[list[str]]) -> Path:
    server.script([{"text": f"Answer {n}."} for n in range(len(systems))])
    client = openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
    with wire.lock(path, mode="record", pin=True):
        agent(client, systems, tools)
    return path


def test_a_timestamp_in_the_system_prompt_raises_volatile_content_at_request_2(
    model_server: ModelServer, tmp_path: Path
) -> None:
    systems = [f"Current time: 2026-03-0{n}T09:00:0{n}Z\n{LONG}" for n in (1, 2, 3)]
    path = recorded(model_server, tmp_path / "clock.yaml", systems, [NAMES] * 3)
    with pytest.raises(CacheBreakError) as caught:
        wire.assert_cache_stable(path)
    error = caught.value
    assert isinstance(error, AssertionError)
    assert error.codes == ("volatile-content", "volatile-content")
    assert error.findings[0].startswith("request 2 system byte ")
    assert "date-time `2026-03-01T09:00:01Z` -> `2026-03-02T09:00:02Z`" in error.findings[0]
    assert str(error).splitlines()[0] == f"2 cache findings in {path.as_posix()}:"
    report = wire.assert_cache_stable(path, allow=["volatile-content"])
    # the tools render before the system: they stay shared, the rest is sent anew
    # and the system up to the first differing digit of the date
    tools = len(json.dumps([tool(n) for n in NAMES], separators=(",", ":")))
    offsets = [f.offset or 0 for f in report.findings]
    assert [r.shared_bytes for r in report.requests] == [0, *offsets]
    assert offsets[0] == offsets[1] > tools


def test_tools_in_set_order_raise_tools_reordered(
    model_server: ModelServer, tmp_path: Path
) -> None:
    first, second = set_orders(2)
    path = recorded(model_server, tmp_path / "set.yaml", [LONG] * 3, [first, first, second])
    with pytest.raises(CacheBreakError) as caught:
        wire.assert_cache_stable(path)
    assert caught.value.codes == ("tools-reordered",)
    moved = next(n for n, (a, b) in enumerate(zip(first, second, strict=True)) if a != b)
    assert caught.value.findings[0].startswith(f"request 3 tools[{moved}] ({second[moved]}) byte ")
    fixed = recorded(
        model_server,
        tmp_path / "sorted.yaml",
        [LONG] * 3,
        [sorted(first), sorted(second), sorted(first)],
    )
    assert wire.assert_cache_stable(fixed).stable


def test_a_stable_session_passes_and_allow_must_name_codes(
    model_server: ModelServer, tmp_path: Path
) -> None:
    path = recorded(model_server, tmp_path / "ok.yaml", [LONG] * 3, [NAMES] * 3)
    report = wire.assert_cache_stable(path)
    assert isinstance(report, wire.CacheReport) and report.stable
    with pytest.raises(ConfigError, match="unknown cache finding code 'tool-reorder'"):
        wire.assert_cache_stable(path, allow=["tool-reorder"])


def usage_answer(cached: int, prompt: int) -> Any:
    return json_answer({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": 1, "total_tokens": prompt + 1,
                  "prompt_tokens_details": {"cached_tokens": cached}},
    })  # fmt: skip


def test_recorded_usage_is_shown_beside_the_prediction(
    model_server: ModelServer, tmp_path: Path
) -> None:
    model_server.route(
        "*/chat/completions", usage_answer(0, 1500), usage_answer(1408, 1520), usage_answer(0, 1540)
    )
    client = openai.OpenAI(base_url=model_server.base_url, api_key=KEY, max_retries=0)
    path = tmp_path / "usage.yaml"
    with wire.lock(path, mode="record", pin=True) as run:
        agent(client, [LONG] * 3, [NAMES, NAMES, NAMES[::-1]])
    report = wire.cache_report(path)
    assert [r.actual.read if r.actual else None for r in report.requests] == [0, 1408, 0]
    assert [r.actual.prompt if r.actual else None for r in report.requests] == [1500, 1520, 1540]
    shared = estimate_tokens(report.requests[1].shared_bytes)
    assert shared > 1024
    assert report.requests[1].predicted == 1024 + (shared - 1024) // 128 * 128
    assert report.requests[2].predicted == 0
    lines = report.to_text().splitlines()
    assert lines[3].split()[:2] == ["2", f"{report.requests[1].shared_percent}%"]
    assert lines[3].split()[5] == "1,408"
    assert "1,408 tokens cached (recorded)" in report.to_text()
    closed = openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key=KEY, max_retries=0)
    with wire.lock(path) as replayed:  # a replay: the bytes sent, the recording's usage
        agent(closed, [LONG] * 3, [NAMES, NAMES, NAMES[::-1]])
    again = wire.cache_report(replayed)
    assert [r.actual for r in again.requests] == [r.actual for r in report.requests]
    assert again.findings == wire.cache_report(run).findings
    assert [f.code for f in again.findings] == ["tools-reordered"]


def claude_answer(read: int, written: int) -> Any:
    return json_answer({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 20, "output_tokens": 1, "cache_read_input_tokens": read,
                  "cache_creation_input_tokens": written},
    })  # fmt: skip


def test_recorded_cache_writes_are_shown_beside_the_reads(
    model_server: ModelServer, tmp_path: Path
) -> None:
    """Anthropic's ``cache_creation_input_tokens``, in the request lines and on the page."""
    model_server.route(
        "*/messages", claude_answer(0, 1547), claude_answer(1547, 40), claude_answer(1587, 41)
    )
    send = SENDERS["anthropic.messages"](model_server)
    path = tmp_path / "claude.yaml"
    with wire.lock(path, mode="record", pin=True):
        for req in base("anthropic.messages"):
            send(replace(req, mark_last=True))
    report = wire.cache_report(path)
    assert [(r.actual.read, r.actual.written) for r in report.requests if r.actual] == [
        (0, 1547), (1547, 40), (1587, 41)
    ]  # fmt: skip
    lines = report.to_text().splitlines()
    assert lines[1].split()[-5:] == ["predicted", "actual", "written", "first", "finding"]
    assert [line.split()[5:7] for line in lines[2:5]] == [
        ["0", "1,547"], ["1,547", "40"], ["1,587", "41"]
    ]  # fmt: skip
    assert ", 3,134 tokens cached, 1,628 written (recorded)," in lines[5]
    page = html_page([report])
    assert "recorded cache read 1,547, written 40<" in page


def diagnosed_answer(reason: str | None) -> Any:
    data: dict[str, Any] = {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 20, "output_tokens": 1, "cache_read_input_tokens": 0,
                  "cache_creation_input_tokens": 0},
    }  # fmt: skip
    if reason is not None:
        data["diagnostics"] = {"cache_miss_reason": {"type": reason}}
    return json_answer(data)


def test_automatic_caching_is_a_breakpoint_and_a_miss_reason_is_checked(
    model_server: ModelServer, tmp_path: Path
) -> None:
    """Anthropic's top-level ``cache_control`` caches at the last block (no
    ``no-breakpoint``, reads predicted); a recorded ``cache_miss_reason`` is shown beside
    the finding and checked against its segment."""
    model_server.route(
        "*/messages",
        diagnosed_answer(None), diagnosed_answer(None), diagnosed_answer("tools_changed"),
    )  # fmt: skip
    client = anthropic.Anthropic(base_url=model_server.origin, api_key=KEY, max_retries=0)
    path = tmp_path / "auto.yaml"
    tools: Any = [{"name": n, "description": d, "input_schema": s} for n, d, s in TOOLS]
    messages: list[Any] = []
    with wire.lock(path, mode="record", pin=True):
        for turn in (1, 2, 3):
            messages.append({"role": "user", "content": f"Question {turn}?"})
            client.messages.create(
                model="claude-sonnet-4-5", max_tokens=64, system=LONG, messages=messages,
                tools=tools if turn < 3 else tools[::-1],
                extra_body={"cache_control": {"type": "ephemeral"}},
            )  # fmt: skip
            messages.append({"role": "assistant", "content": "ok"})
    report = wire.cache_report(path)
    assert [f.code for f in report.findings] == ["tools-reordered"], report.to_text()
    assert report.requests[1].predicted == report.requests[0].prefix_tokens
    finding = report.findings[0]
    assert finding.provider == "recorded cache_miss_reason tools_changed: agrees"
    assert "[recorded cache_miss_reason tools_changed: agrees]" in report.to_text()
    assert report.requests[2].actual is not None
    assert report.requests[2].actual.miss_reason == "tools_changed"


def test_a_miss_reason_with_no_break_found_is_shown_on_its_row(
    model_server: ModelServer, tmp_path: Path
) -> None:
    model_server.route("*/messages", diagnosed_answer(None), diagnosed_answer("unavailable"))
    client = anthropic.Anthropic(base_url=model_server.origin, api_key=KEY, max_retries=0)
    path = tmp_path / "diag.yaml"
    messages: list[Any] = []
    with wire.lock(path, mode="record", pin=True):
        for turn in (1, 2):
            messages.append({"role": "user", "content": f"Question {turn}?"})
            client.messages.create(
                model="claude-sonnet-4-5", max_tokens=64, system=LONG, messages=messages,
                extra_body={"cache_control": {"type": "ephemeral"}},
            )  # fmt: skip
            messages.append({"role": "assistant", "content": "ok"})
    report = wire.cache_report(path)
    assert report.findings == ()
    row = report.to_text().splitlines()[3]
    assert row.split()[0] == "2"
    assert "- [recorded cache_miss_reason unavailable: no break found here]" in row
