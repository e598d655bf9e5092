"""``headerlock diff`` on two wire recordings: where the cacheable prefix first breaks."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from headerlock.cli import main
from headerlock.formats.wire_recording import load_wire_recording
from headerlock.testing.wire.explain import explain_wire, prefix_break
from headerlock.testing.wire.lock import lock
from tests.wire.agents import CLOSED, CLOSED_ORIGIN, KEY, fn_tool

SEARCH: Any = {"type": "object", "properties": {"q": {"type": "string"}}}
TOOLS: Any = [
    {"name": "fetch", "description": "Fetch a URL.", "input_schema": {"type": "object"}},
    {"name": "search", "description": "Search the web.", "input_schema": SEARCH},
]


def _anthropic(
    path: Path, *, tools: Any = TOOLS, system: str = "You are terse.", pin: bool = True
) -> None:
    """Record a two-request Anthropic agent with a scripted model."""
    client = anthropic.Anthropic(base_url=CLOSED_ORIGIN, api_key=KEY, max_retries=0)
    with lock(path, mode="record", pin=pin, script=[{"text": "one"}, {"text": "two"}]):
        for prompt in ("hi", "more"):
            client.messages.create(
                model="claude-test",
                max_tokens=64,
                system=system,
                tools=tools,
                messages=[{"role": "user", "content": prompt}],
            )


def _chat(path: Path, tools: Any, *, pin: bool = True) -> None:
    client = openai.OpenAI(base_url=CLOSED, api_key=KEY, max_retries=0)
    with lock(path, mode="record", pin=pin, script=[{"text": "ok"}]):
        client.chat.completions.create(
            model="gpt-test",
            messages=[
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "hi"},
            ],
            tools=tools,
        )


def diff(a: Path, b: Path) -> tuple[int, str]:
    out = io.StringIO()
    code = main(["diff", str(a), str(b)], out=out)
    return code, out.getvalue()


def test_a_tool_reorder_is_tools_changed_at_the_first_differing_byte(tmp_path: Path) -> None:
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    _anthropic(a)
    _anthropic(b, tools=TOOLS[::-1])
    code, out = diff(a, b)
    assert code == 1
    found = prefix_break(load_wire_recording(a), load_wire_recording(b))
    assert found is not None
    assert (found.number, found.segment, found.cache_reason) == (1, "tools", "tools_changed")
    assert (found.tool_a, found.tool) == ("fetch", "search")
    prefix_a = load_wire_recording(a).requests[0].prefix
    prefix_b = load_wire_recording(b).requests[0].prefix
    assert prefix_a is not None and prefix_b is not None
    raw_a, raw_b = prefix_a.raw, prefix_b.raw
    first = next(n for n, (x, y) in enumerate(zip(raw_a, raw_b, strict=False)) if x != y)
    assert found.offset == first
    lines = out.splitlines()
    assert lines[:5] == [
        f"A = {a.as_posix()}",
        f"B = {b.as_posix()}",
        f"cacheable prefix: first differs at request 1 (anthropic.messages), segment tools,"
        f" byte {first}, tool fetch in A, search in B; anthropic cache: tools_changed",
        '  A `[{"name":"^fetch","description":"Fe`',
        '  B `[{"name":"^search","description":"S`',
    ]
    # the prefix comes before the rest of the diff, which names the reorder and the messages
    rest = out.index("what else differs")
    assert out.index("cacheable prefix") < rest
    assert (
        "request 1 (anthropic.messages) tools: order fetch, search -> search, fetch" in out[rest:]
    )
    assert (
        "request 2 (anthropic.messages) tools: order fetch, search -> search, fetch" in out[rest:]
    )
    assert out.index("--- ") > rest  # then the unified diff of the files


def test_a_system_change_is_system_changed(tmp_path: Path) -> None:
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    _anthropic(a)
    _anthropic(b, system="You are verbose.")
    code, out = diff(a, b)
    assert code == 1
    found = prefix_break(load_wire_recording(a), load_wire_recording(b))
    assert found is not None
    assert (found.segment, found.tool, found.cache_reason) == ("system", None, "system_changed")
    prefix = load_wire_recording(a).requests[0].prefix
    assert prefix is not None
    assert found.offset == len(prefix.tools.encode()) + len('"You are ')
    assert "segment system" in out and "anthropic cache: system_changed" in out
    assert "A `" in out and "^terse" in out and "^verbose" in out


def test_a_schema_key_order_is_the_same_data_in_other_bytes(tmp_path: Path) -> None:
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    swapped = {"properties": {"q": {"type": "string"}}, "type": "object"}
    _chat(a, [fn_tool("search", SEARCH)])
    _chat(b, [fn_tool("search", swapped)])
    code, out = diff(a, b)
    assert code == 1
    assert "first differs at request 1 (openai.chat), segment tools, byte " in out
    assert ", tool search\n" in out
    assert "the same data in other bytes (JSON key order or spacing)" in out
    assert "anthropic cache" not in out


def test_equal_recordings_exit_0(tmp_path: Path) -> None:
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    _anthropic(a)
    _anthropic(b)
    assert a.read_bytes() == b.read_bytes()
    assert diff(a, b) == (0, "wire recordings are identical\n")
    assert explain_wire(load_wire_recording(a), load_wire_recording(b)) == (
        "wire recordings are identical"
    )


def test_unpinned_recordings_keep_only_what_replay_compares(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.yaml", tmp_path / "b.yaml", tmp_path / "c.yaml"
    _anthropic(a, pin=False)
    _anthropic(b, tools=TOOLS[::-1], pin=False)
    _anthropic(c, tools=TOOLS[:1], pin=False)
    assert "prefix_sha256" not in a.read_text(encoding="utf-8")
    assert a.read_bytes() == b.read_bytes()  # the order is the class pin's to guard: no churn
    code, out = diff(a, b)
    assert code == 0
    code, out = diff(a, c)
    assert code == 1
    assert "segment tools, tool search; anthropic cache: tools_changed" in out
    assert "tools: removed search" in out


def test_only_response_and_request_count_differ(tmp_path: Path) -> None:
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    _anthropic(a)
    client = anthropic.Anthropic(base_url=CLOSED_ORIGIN, api_key=KEY, max_retries=0)
    with lock(b, mode="record", pin=True, script=[{"text": "other"}]):
        client.messages.create(
            model="claude-test",
            max_tokens=64,
            system="You are terse.",
            tools=TOOLS,
            messages=[{"role": "user", "content": "hi"}],
        )
    code, out = diff(a, b)
    assert code == 1
    assert "cacheable prefix: the same in the 1 request both recordings have" in out
    assert "request 1 (anthropic.messages) response: response.json.content[0].text" in out
    assert "request 2 (anthropic.messages) request: only in A (/v1/messages)" in out


def test_bad_files_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = tmp_path / "a.yaml"
    _anthropic(a)
    scenario = Path(__file__).parents[2] / "recordings" / "text-turn.yaml"
    assert diff(a, scenario)[0] == 2
    assert "not a wire recording (no `kind: wire`), but" in capsys.readouterr().err
    broken = tmp_path / "broken.yaml"
    broken.write_text(a.read_text().replace("kind: wire", "kind: wire\nextra: 1"))
    assert diff(a, broken)[0] == 2
    assert "broken.yaml" in capsys.readouterr().err
    assert diff(a, tmp_path / "missing.yaml")[0] == 2
    assert "missing.yaml" in capsys.readouterr().err
