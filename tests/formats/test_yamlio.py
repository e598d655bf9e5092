"""Canonical YAML out, strict YAML in."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, strategies as st

from headerlock.errors import YamlError
from headerlock.formats.canonical_read import read
from headerlock.formats.canonical_yaml import FlowMapping
from headerlock.formats.strict_yaml import dumps, load_file, loads
from headerlock.formats.yaml_events import YAML_C

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
def test_dumps_round_trips_through_both_loaders(value: Any) -> None:
    text = dumps(value)
    assert loads(text) == value
    assert loads(text, fast=False) == value
    assert loads(text, pure=True) == value
    assert dumps(loads(text)) == text


def test_every_character_round_trips() -> None:
    """Each BMP code point (and a sample of the others) alone, inside text and in
    multi-line text, as values and as keys, loads back equal (C loader and the line
    reader; the pure loader on a sample). One document, so the test stays fast."""
    points = [cp for cp in range(0x10000) if not 0xD800 <= cp <= 0xDFFF]
    points += list(range(0x10000, 0x110000, 251))
    texts = [t for cp in points for t in (f"x{chr(cp)}y", f"{chr(cp)} a\n", f"line\n{chr(cp)}\n")]
    keys = [chr(cp) for cp in points]
    document = {"values": texts, "keys": dict.fromkeys(keys, 0)}
    text = dumps(document)
    assert loads(text, fast=False) == document
    assert read(text, max_depth=64) == document  # the line reader (test_canonical_read)
    sample = texts[::97]
    small = {"values": sample, "keys": dict.fromkeys(keys[::97], 0)}
    assert loads(dumps(small), pure=True) == small


def _flowed(value: Any) -> Any:
    """``value`` with every mapping in a list written as one flow line (a stream's events)."""
    if isinstance(value, list):
        return [FlowMapping(v) if isinstance(v, dict) else _flowed(v) for v in value]
    if isinstance(value, dict):
        return {k: _flowed(v) for k, v in value.items()}
    return value


@given(json_values)
def test_flow_mappings_round_trip_through_both_loaders(value: Any) -> None:
    document = {"events": [{"json": FlowMapping({"data": value})}, value]}
    text = dumps(document)
    assert loads(text) == document
    assert loads(text, fast=False) == document
    assert loads(text, pure=True) == document
    assert dumps(_flowed(loads(text))) == dumps(_flowed(document))


def test_flow_mappings_are_one_line_and_hold_every_character() -> None:
    """Each BMP code point (and a sample of the others), as a value and as a key of a
    flow mapping, loads back equal on one line; a key too long for a flow key makes
    that mapping a block mapping."""
    points = [cp for cp in range(0x10000) if not 0xD800 <= cp <= 0xDFFF]
    points += list(range(0x10000, 0x110000, 251))
    event = FlowMapping({chr(cp): f"x{chr(cp)}y\n{chr(cp)}" for cp in points})
    text = dumps([event])
    assert text.count("\n") == 1 and text.startswith("- {")
    assert loads(text) == [event]
    sample = FlowMapping({chr(cp): chr(cp) for cp in points[::97]})
    assert loads(dumps([sample]), pure=True) == [sample]
    long_key = FlowMapping({"k" * 2000: 1, "short": [1, {"a": None}]})
    text = dumps([long_key])
    assert text.count("\n") > 1
    assert loads(text) == [long_key]


def test_lone_surrogates_are_refused_with_a_reason() -> None:
    with pytest.raises(ValueError, match=r"cannot write a lone surrogate \(U\+D83D\) as YAML"):
        dumps({"text": "broken \ud83d emoji"})


def test_c_loader_is_present_here() -> None:
    assert YAML_C, "PyYAML without libyaml: the C loader path of these tests did not run"


def test_plain_literal_and_quoted_styles() -> None:
    text = dumps(
        {
            "plain": "What do my notes say?",
            "reserved": "yes",
            "number_like": "007",
            "colon": "a: b",
            "literal": "one\ntwo\n",
            "strip": "one\ntwo",
            "keep": "one\n\n",
            "trailing_space": "one \ntwo",
            "float": 1e-05,
        }
    )
    assert text == (
        'colon: "a: b"\n'
        "float: 1.0e-05\n"
        "keep: |+\n  one\n\n"
        "literal: |\n  one\n  two\n"
        'number_like: "007"\n'
        "plain: What do my notes say?\n"
        'reserved: "yes"\n'
        "strip: |-\n  one\n  two\n"
        'trailing_space: "one \\ntwo"\n'
    )


def test_insertion_order_does_not_matter() -> None:
    a = {"b": 1, "a": {"y": [1, 2], "x": "text"}}
    b = {"a": {"x": "text", "y": [1, 2]}, "b": 1}
    assert dumps(a) == dumps(b)


def test_multiline_strings_are_literal_blocks_and_nothing_wraps() -> None:
    long = "word " * 200
    text = dumps({"persona": "line one\nline two\n", "long": long})
    assert "persona: |\n  line one\n  line two\n" in text
    assert f'long: "{long}"\n' in text  # one line, never wrapped


def test_no_aliases_for_shared_objects() -> None:
    shared = {"k": "v"}
    assert "&" not in dumps({"a": shared, "b": shared})


def test_same_bytes_under_another_hash_seed_and_locale(tmp_path: Path) -> None:
    script = (
        "import sys; from headerlock.formats.strict_yaml import dumps;"
        "data = {'tools': sorted({'zeta', 'alpha', 'mid', 'é', '\\u00e9t\\u00e9'}), 's': {'b': 2, 'a': 1}};"
        "sys.stdout.write(dumps(data))"
    )
    outputs = set()
    for seed, locale in (("0", "C"), ("1", "C.UTF-8"), ("4242", "POSIX")):
        env = dict(
            os.environ, PYTHONHASHSEED=seed, LC_ALL=locale, LANG=locale, PYTHONIOENCODING="utf-8"
        )
        result = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, check=True, timeout=60
        )
        outputs.add(result.stdout)
    assert len(outputs) == 1


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("a: &x 1\nb: *x\n", "anchors and aliases are not allowed", 1),
        ("a: 1\nb: 2\na: 3\n", "duplicate key 'a' (first at line 1)", 3),
        ("base: {x: 1}\nother:\n  <<: {y: 2}\n", "merge keys (<<) are not allowed", 3),
        ("a: !!python/object:os.system {}\n", "could not determine a constructor", 1),
        ("a: !custom 1\n", "could not determine a constructor", 1),
        ("a: !!binary aGk=\n", "the tag 'tag:yaml.org,2002:binary' is not allowed", 1),
        ("a: [1, 2\n", "expected ',' or ']'", 2),
        ("a:\n\tb: 1\n", "(a tab: YAML indents with spaces only)", 2),
        ("1: x\n", "mapping keys must be strings", 1),
    ],
)
def test_strict_loading_errors_name_the_line(text: str, message: str, line: int) -> None:
    with pytest.raises(YamlError) as info:
        loads(text, path="f.yaml")
    assert message in str(info.value)
    assert info.value.line == line
    assert str(info.value).startswith(f"f.yaml:{line}: ")


def test_dates_stay_strings() -> None:
    assert loads("released: 2024-01-02\n") == {"released": "2024-01-02"}


def test_billion_laughs_is_refused_fast() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(
            f"{cur}: &{cur} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]"
        )
    started = time.perf_counter()
    with pytest.raises(YamlError, match="anchors and aliases are not allowed"):
        loads("\n".join(lines))
    assert time.perf_counter() - started < 1.0


def test_deep_nesting_is_refused() -> None:
    with pytest.raises(YamlError, match="nesting deeper than 64 levels"):
        loads("[" * 200 + "]" * 200)


def test_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("  \n")
    with pytest.raises(YamlError, match=r"empty\.yaml: file is empty"):
        load_file(empty)
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"a: caf\xe9\n")
    with pytest.raises(YamlError, match=r"not UTF-8 text \(byte 0xe9 at offset 6\)"):
        load_file(latin)
    bom = tmp_path / "bom.yaml"
    bom.write_bytes(b"\xef\xbb\xbfa: 1\r\nb: |\r\n  x\r\n  y\r\n")
    assert load_file(bom) == {"a": 1, "b": "x\ny\n"}
    bom.write_bytes(b"\xef\xbb\xbfa: caf\xe9\n")  # the offset counts the BOM's bytes too
    with pytest.raises(YamlError, match=r"not UTF-8 text \(byte 0xe9 at offset 9\)"):
        load_file(bom)
    with pytest.raises(YamlError, match="no such file"):
        load_file(tmp_path / "missing.yaml")
    with pytest.raises(YamlError, match="more than the limit of 10"):
        load_file(bom, max_bytes=10)


def test_yaml_module_safe_dump_differs_from_canonical() -> None:
    # The reason the dumper settings are pinned: the default width wraps long lines.
    value = {"s": "x " * 100}
    assert yaml.safe_dump(value) != dumps(value)
