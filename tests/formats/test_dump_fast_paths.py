"""The canonical dump's fast paths (exact ``str``/``dict``/``int`` values, remembered key
texts) write what its general path writes: the same data held as other mappings,
sequences, strings and integers goes the general way, and must give the same bytes.
A recording saved with its text is checked for depth by the text's lines when they are
short (``wire_recording._shallow``): the bound holds on every shape, and a recording too
deep is still refused."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings

from headerlock.errors import OutputFileError
from headerlock.formats import canonical_yaml
from headerlock.formats.canonical_yaml import FlowMapping, dump
from headerlock.formats.wire_recording import (
    WireEntry,
    WireRecording,
    nesting,
    save_wire_recording,
)
from headerlock.formats.wire_response import WireResponse
from tests.formats.test_canonical_read import documents


class _Text(str):
    """A string that is not exactly ``str``."""


class _Number(int):
    """An integer that is not exactly ``int``."""


def general(value: Any) -> Any:
    """``value`` with every dict, list, str and int replaced by a look-alike of another
    type (keys stay ``str``: a key's text is remembered only by its own value)."""
    if isinstance(value, dict):
        return MappingProxyType({key: general(item) for key, item in value.items()})
    if isinstance(value, list):
        return tuple(general(item) for item in value)
    if type(value) is str:
        return _Text(value)
    if type(value) is int:
        return _Number(value)
    return value


@settings(max_examples=400, deadline=None)
@given(documents)
def test_the_fast_paths_write_what_the_general_path_writes(document: Any) -> None:
    canonical_yaml._KEY_TEXTS.clear()
    cold = dump(document)  # every key's text made afresh
    assert dump(document) == cold  # remembered
    assert dump(general(document)) == cold


def test_remembered_key_texts_are_bounded_and_long_keys_are_not_kept() -> None:
    canonical_yaml._KEY_TEXTS.clear()
    many = {f"k{n}": n for n in range(canonical_yaml.MAX_KEY_TEXTS + 10)}
    long_key = "k" * (canonical_yaml.MAX_SIMPLE_KEY + 1)
    text = dump({long_key: 1, **many})
    assert len(canonical_yaml._KEY_TEXTS) == canonical_yaml.MAX_KEY_TEXTS
    assert long_key not in canonical_yaml._KEY_TEXTS
    assert dump({long_key: 1, **many}) == text
    assert text.startswith("k0: 0\n")
    assert f"? {long_key}\n: 1\n" in text


def _chain(depth: int, shape: str, leaf: Any) -> Any:
    """``leaf`` inside ``depth`` containers, innermost first: ``shape`` cycles through
    ``d`` (a mapping, one-letter key), ``l`` (a list) and ``f`` (a flow mapping)."""
    value = leaf
    for n in range(depth):
        kind = shape[n % len(shape)]
        value = {"a": value} if kind == "d" else [value] if kind == "l" else FlowMapping(a=value)
    return value


def _longest_line(text: str) -> int:
    return max(map(len, text.split("\n")))


@pytest.mark.parametrize("shape", ["d", "l", "f", "dl", "ld", "ddl", "lld", "df", "lf", "dlf"])
@pytest.mark.parametrize("leaf", [{}, [], 1, "", None], ids=repr)
def test_a_dump_has_a_line_as_long_as_its_data_nests_deep(shape: str, leaf: Any) -> None:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)
    try:
        for depth in [*range(1, 40), 200, 389, 390, 391, 398, 399, 400, 401, 450]:
            data = {"k": _chain(depth, shape, leaf)}
            assert nesting(data) <= _longest_line(dump(data)) + 2, depth
    finally:
        sys.setrecursionlimit(limit)


@settings(max_examples=300, deadline=None)
@given(documents)
def test_the_line_bound_holds_on_any_document(document: Any) -> None:
    assert nesting(document) <= _longest_line(dump(document)) + 2


def _recording(body: Any) -> WireRecording:
    response = WireResponse(200, "application/json", "json", body)
    entry = WireEntry("openai.chat", "/v1/chat/completions", {}, None, None, (), None, [])
    return WireRecording(False, (replace(entry, response=response),))


@pytest.mark.parametrize(
    ("depth", "written"), [(380, True), (396, True), (397, False), (450, False)]
)
def test_a_recording_nesting_too_deep_is_refused_with_its_text_given(
    tmp_path: Path, depth: int, written: bool
) -> None:
    recording = _recording(_chain(depth, "dl", 1))
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)
    try:
        text = recording.to_text()
        path = tmp_path / "r.yaml"
        if written:
            save_wire_recording(recording, path, text=text)
            assert path.read_text(encoding="utf-8") == text
        else:
            with pytest.raises(OutputFileError, match="nesting deeper than 400 levels"):
                save_wire_recording(recording, path, text=text)
            assert not path.exists()
    finally:
        sys.setrecursionlimit(limit)
