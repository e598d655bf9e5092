"""Loading a wire recording takes shortcuts on the common case (issue 31): a plain mapping
whose keys are all known is passed without listing its unknown keys, an entry holding
every required key is not asked for each, and the line reader checks a quoted string
against JSON's escaping when that is the emitter's. They must accept and refuse exactly
what the general path does, with the same one-line error: the same data held as other
mappings goes the general way, and the quoted form is the emitter's own."""

from __future__ import annotations

import copy
import re
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from headerlock.errors import SerializationError, WireRecordingError
from headerlock.formats import canonical_yaml, wire_recording
from headerlock.formats.wire_recording import WireRecording, wire_recording_from_data

ENTRY: dict[str, Any] = {
    "api": "openai.chat",
    "config": {},
    "header": "c41d2839bb5e",
    "messages": [{"content": "count the words", "role": "user"}],
    "path": "/v1/chat/completions",
    "response": {"content_type": "application/json", "json": {"id": "x"}, "status": 200},
    "system": "<<system>>",
    "tools": "<<tools>>",
}
RECORDING: dict[str, Any] = {
    "kind": "wire",
    "pinned": False,
    "requests": [ENTRY, {**ENTRY, "continues": 1, "messages": [{"content": "6", "role": "tool"}]}],
    "version": 3,
}
APIS = ("openai.chat", "openai.responses")
KEYS = ("api", "config", "continues", "header", "messages", "path", "response", "system",
        "tool_names", "tools", "prefix", "status", "json", "kind", "http", "zzz", "aaa")  # fmt: skip
VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 700), st.sampled_from(["", "x", "/v1", "<<tools>>"]),
    st.just({}), st.just([]), st.just({"status": 200, "json": {}, "content_type": None}),
)  # fmt: skip
# one change: (where: top level, an entry or its response; key; value, or None to drop it)
CHANGES = st.lists(
    st.tuples(st.sampled_from(["top", "entry", "response"]), st.sampled_from(KEYS),
              st.one_of(st.none(), st.tuples(VALUES))),
    max_size=4,
)  # fmt: skip


def general(data: Any) -> Any:
    """``data`` with each mapping the reader checks (top level, entries, responses) held
    as a ``MappingProxyType``: the general path."""
    if not isinstance(data, dict):
        return data
    top = dict(data)
    requests = top.get("requests")
    if isinstance(requests, list):
        entries = []
        for entry in requests:
            if isinstance(entry, dict):
                entry = dict(entry)
                if isinstance(entry.get("response"), dict):
                    entry["response"] = MappingProxyType(entry["response"])
                entry = MappingProxyType(entry)
            entries.append(entry)
        top["requests"] = entries
    return MappingProxyType(top)


def outcome(data: Any) -> WireRecording | str:
    try:
        return wire_recording_from_data(data, path="r.yaml", apis=APIS)
    except WireRecordingError as error:
        return str(error)


def changed(changes: list[tuple[str, str, tuple[Any] | None]]) -> dict[str, Any]:
    data = copy.deepcopy(RECORDING)
    for where, key, value in changes:
        target = data if where == "top" else data["requests"][0]
        if where == "response":
            target = target.get("response")
        if not isinstance(target, dict):
            continue  # the place was changed away by an earlier change
        if value is None:
            target.pop(key, None)
        else:
            target[key] = copy.deepcopy(value[0])
    return data


@settings(max_examples=300, deadline=None)
@given(CHANGES)
def test_the_fast_paths_read_what_the_general_path_reads(
    changes: list[tuple[str, str, tuple[Any] | None]],
) -> None:
    same_as_general(changed(changes))


def same_as_general(data: dict[str, Any]) -> None:
    fast = outcome(copy.deepcopy(data))
    assert fast == outcome(general(data))


@pytest.mark.parametrize("missing", ["api", "path", "config", "system", "tools"])
def test_an_entry_missing_a_required_key_names_the_first_missing(missing: str) -> None:
    later = ("api", "path", "config", "system", "tools")
    data = changed([("entry", key, None) for key in later[later.index(missing) :]])
    assert outcome(data) == f"r.yaml: requests[0].{missing}: missing"


def test_an_unknown_key_is_named_when_the_shortcut_is_broken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The guard of the mapping shortcut is what refuses an unknown key: a shortcut that
    passes every plain mapping lets it through, and the property above catches it."""
    data = changed([("entry", "zzz", ("x",))])
    assert outcome(data) == "r.yaml: requests[0].zzz: unknown key"
    same_as_general(data)
    shortcut = wire_recording._Reader.mapping

    def unguarded(reader: Any, value: Any, key: str, allowed: frozenset[str]) -> Any:
        return value if type(value) is dict else shortcut(reader, value, key, allowed)

    monkeypatch.setattr(wire_recording._Reader, "mapping", unguarded)
    assert isinstance(outcome(data), WireRecording)  # the key goes unseen
    with pytest.raises(AssertionError):
        same_as_general(data)


def _token(write: Any, text: str) -> str:
    try:
        return str(write(text))
    except SerializationError as error:
        return f"refused: {error}"


TEXTS = st.text(
    st.characters(codec="utf-8") | st.sampled_from('\x00\x08\t\n\r\x1f\x7f\x85\x9f\u2028\ufeff"\\'),
    max_size=12,
) | st.sampled_from(["true", "null", "a b", "-1", "é", "x\ud800"])


def _escaped(text: str) -> str:
    """The emitter's general quoting: every character through ``_ESCAPES``."""
    if canonical_yaml._SURROGATE.search(text):
        raise SerializationError("a lone surrogate")
    return f'"{text.translate(canonical_yaml._ESCAPES)}"'


@settings(max_examples=500, deadline=None)
@given(TEXTS)
def test_a_string_quoted_in_c_is_quoted_as_the_emitter_escapes_it(text: str) -> None:
    quoted, general = _token(canonical_yaml._quoted, text), _token(_escaped, text)
    assert quoted == general or (quoted.startswith("refused") and general.startswith("refused"))


def test_the_json_shortcut_is_only_taken_where_json_escapes_as_the_emitter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for text in ("a\x85b", "\x08", "a\rb", "\u2028", "\ufeff"):
        assert canonical_yaml._quoted(text) == _escaped(text)
    monkeypatch.setattr(canonical_yaml, "_EXOTIC", re.compile("(?!)"))
    assert canonical_yaml._quoted("\x08") != _escaped("\x08")
    assert canonical_yaml._quoted("a\x85b") != _escaped("a\x85b")
