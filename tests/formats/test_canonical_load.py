"""The shortcut for long recordings headerlock wrote: the strict loader's data, or none."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from headerlock.errors import WireRecordingError
from headerlock.formats import canonical_load
from headerlock.formats.canonical_load import load_repeating
from headerlock.formats.canonical_yaml import dump
from headerlock.formats.strict_yaml import loads
from headerlock.formats.wire_recording import parse_wire_recording
from tests.formats.test_canonical_read import mutated, same, strict


@pytest.fixture(autouse=True)
def _any_length(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(canonical_load, "MIN_CHARS", 0)
    monkeypatch.setattr(canonical_load, "MIN_ITEMS", 0)


def _session(requests: int) -> dict[str, Any]:
    messages: list[Any] = []
    entries = []
    for n in range(requests):
        messages = [*messages, {"role": "user", "content": f"line {n}\nnext: - x\n"}]
        messages.append({"role": "assistant", "content": ["- a", {"k": [1, 2.5, None]}]})
        entries.append(
            {
                "api": "openai.chat",
                "config": {"model": "m", "messages": []},
                "messages": messages,
                "path": "/v1/chat/completions",
                "response": {"content_type": None, "status": 200, "text": f"ok {n}"},
                "system": None,
                "tool_names": [],
                "tools": None,
            }
        )
    entries.append({**entries[0], "messages": []})
    return {"kind": "wire", "pinned": False, "requests": entries, "version": 1}


def test_a_written_recording_loads_to_the_strict_loaders_data() -> None:
    text = dump(_session(6))
    data = load_repeating(text, max_depth=400)
    assert data is not None
    assert data == loads(text, max_depth=400)
    assert dump(data) == text
    first, second = data["requests"][0]["messages"], data["requests"][1]["messages"]
    assert first[0] is second[0]  # a repeated message is loaded once


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t.replace("    role: user\n", "    role: user\n    role: user\n", 1),
        lambda t: t.replace("  path:", "  # a comment\n  path:", 1),
        lambda t: t.replace("- api: openai.chat", "- api: &a openai.chat", 1),
        lambda t: t.replace("text: ok 0", "text: !!str ok 0", 1),
        lambda t: t.replace("version: 1", "version: 1\nversion: 1"),
        lambda t: t.replace("  - content", "  -  content", 1),
        lambda t: t.replace("\n", "\r\n"),
        lambda t: t + "---\n",
    ],
)
def test_any_other_text_is_left_to_the_strict_loader(
    edit: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = edit(dump(_session(4)))
    assert load_repeating(text, max_depth=400) is None

    def parsed() -> Any:
        try:
            return parse_wire_recording(text, path="r.yaml")
        except WireRecordingError as error:
            return str(error)

    shortcut = parsed()
    monkeypatch.setattr(canonical_load, "MIN_CHARS", len(text) + 1)
    assert shortcut == parsed()


def test_nesting_past_the_limit_is_refused_as_strictly() -> None:
    text = dump(_session(3))
    for depth in range(5, 9):
        strict: Any
        try:
            strict = loads(text, max_depth=depth)
        except Exception:
            strict = None
        assert load_repeating(text, max_depth=depth) == strict


def test_a_duplicate_key_in_a_long_recording_is_the_strict_error() -> None:
    text = dump(_session(4)).replace("    role: user\n", "    role: user\n    role: user\n")
    with pytest.raises(WireRecordingError, match="duplicate key 'role'"):
        parse_wire_recording(text, path="r.yaml")


def test_a_recording_of_few_requests_is_loaded_strictly(monkeypatch: pytest.MonkeyPatch) -> None:
    text = dump(_session(3))
    assert load_repeating(text, max_depth=400) is not None
    monkeypatch.setattr(canonical_load, "MIN_ITEMS", text.count("\n- ") + 1)
    assert load_repeating(text, max_depth=400) is None  # few requests: the strict loader


def test_a_text_the_line_reader_leaves_to_the_parser_is_left_whole() -> None:
    """A key too long for a simple key is written ``? key``: the line reader leaves it
    to the parser, and so does the shortcut (the whole text, with the parser's data)."""
    document = _session(4)
    document["requests"][2]["messages"][0]["k" * 1001] = 1
    text = dump(document)
    assert load_repeating(text, max_depth=400) is None
    assert loads(text, max_depth=400) == document


@settings(max_examples=150)
@given(mutated(st.integers(1, 4).map(lambda n: dump(_session(n)))))
def test_an_edited_recording_gives_the_strict_loaders_data_or_none(text: str) -> None:
    data = load_repeating(text, max_depth=400)
    if data is not None:
        kind, expected = strict(text)
        assert kind == "data" and same(data, expected)
