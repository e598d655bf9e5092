"""The line reader of canonical YAML: the strict loader's data for what headerlock
writes, and ``None`` (the strict loader's result or error) for any other text."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from headerlock.errors import YamlError
from headerlock.formats import canonical_read
from headerlock.formats.canonical_read import read
from headerlock.formats.canonical_yaml import MAX_INT_DIGITS, dump
from headerlock.formats.strict_yaml import loads

ROOT = Path(__file__).parents[2]
DEPTH = 400

TRICKY = [
    "",
    "yes",
    "No",
    "null",
    "~",
    "true",
    "0",
    "017",
    "0x1F",
    "1_000",
    "1.0",
    ".nan",
    "-.inf",
    "12:30",
    "- a",
    "-",
    "a: b",
    "a:b",
    "#x",
    "a #b",
    "|",
    "|-",
    ">",
    "{}",
    "[]",
    "'q'",
    '"q"',
    "\\",
    "&a",
    "*a",
    "!x",
    "? k",
    "<<",
    "---",
    "...",
    "%YAML",
    "\n",
    "a\n",
    "a\n\n",
    "a\nb",
    "a\n\nb\n\n\n",
    " a\nb",
    "a \nb",
    "a\n b\n",
    "a\n  - b\n",
    "a\tb",
    "a\rb\n",
    "a\x85b",
    "a\u2028b",
    "\ufeffa",
    "\x00",
    "\x7f",
    "é\n😀\n",
    "k" * 1001,
]
texts = st.text() | st.sampled_from(TRICKY)
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**60), max_value=10**60)
    | st.floats(allow_nan=False)
    | texts
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=25,
)
documents = st.dictionaries(texts, values, min_size=1, max_size=5) | st.lists(
    values, min_size=1, max_size=5
)


def strict(text: str, max_depth: int = DEPTH) -> tuple[str, Any]:
    """What the parser's events give: the data, or the error (file and line)."""
    try:
        return "data", loads(text, path="r.yaml", fast=False, max_depth=max_depth)
    except YamlError as error:
        return "error", str(error)


def loaded(text: str, max_depth: int = DEPTH) -> tuple[str, Any]:
    """What ``loads`` gives (the line reader first)."""
    try:
        return "data", loads(text, path="r.yaml", max_depth=max_depth)
    except YamlError as error:
        return "error", str(error)


def same(a: Any, b: Any, *, ordered: bool = True) -> bool:
    """Equal data, types included (``1 == 1.0 == True`` is not enough), NaN equal to
    NaN, and keys in the same order unless not ``ordered``."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        keys = list(a) == list(b) if ordered else sorted(a) == sorted(b)
        return keys and all(same(a[k], b[k], ordered=ordered) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(
            same(x, y, ordered=ordered) for x, y in zip(a, b, strict=True)
        )
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


@given(documents)
def test_what_dump_writes_is_read_as_the_strict_loader_reads_it(document: Any) -> None:
    text = dump(document)
    data = read(text, max_depth=DEPTH)
    if data is None:  # a key too long for a simple key is written "? key": left to libyaml
        assert _long_key(document), text
        return
    assert same(data, document, ordered=False)
    assert same(data, strict(text)[1])


def _long_key(value: Any) -> bool:
    """Whether a key of ``value`` is written as a complex key (``? key``)."""
    if isinstance(value, dict):
        return any(
            dump({key: None}).startswith("? ") or _long_key(item) for key, item in value.items()
        )
    return isinstance(value, list) and any(_long_key(item) for item in value)


MUTATIONS = [
    " ",
    "  ",
    "-",
    "- ",
    ":",
    ": ",
    "\t",
    "#",
    " #",
    "&a ",
    "*a",
    "!!str ",
    "!x ",
    "|",
    "|2",
    ">",
    "{",
    "}",
    "[",
    "]",
    ",",
    '"',
    "'",
    "\\",
    "\\x41",
    "\\ud800",
    "\n",
    "\r",
    "\r\n",
    "?",
    "? ",
    "%",
    "<<",
    "0",
    "00",
    "1",
    "e",
    ".",
    "a",
    "~",
    "null",
    "\ufeff",
    "\x85",
    "\u2028",
    "\x00",
    "\ud800",
    "---\n",
    "...\n",
    "# c\n",
    "a: 1\n",
    "<<: {}\n",
]


WRITTEN = documents.map(dump)


@st.composite
def mutated(draw: st.DrawFn, written: st.SearchStrategy[str] = WRITTEN) -> str:
    """A text ``dump`` wrote, then edited as a hand (or a bug) might."""
    text = draw(written)
    for _ in range(draw(st.integers(1, 3))):
        lines = text.split("\n")
        at = draw(st.integers(0, len(text)))
        row = draw(st.integers(0, max(len(lines) - 2, 0)))
        kind = draw(st.integers(0, 7))
        if kind == 0:
            text = text[:at] + draw(st.sampled_from(MUTATIONS)) + text[at:]
        elif kind == 1:
            text = text[:at] + text[at + 1 :]
        elif kind == 2:
            text = text[:at] + draw(st.sampled_from(MUTATIONS)) + text[at + 1 :]
        elif kind == 3:
            lines.insert(row, lines[row])
            text = "\n".join(lines)
        elif kind == 4:
            del lines[row]
            text = "\n".join(lines)
        elif kind == 5 and row + 1 < len(lines):
            lines[row], lines[row + 1] = lines[row + 1], lines[row]
            text = "\n".join(lines)
        elif kind == 6:
            lines[row] = " " * draw(st.integers(1, 3)) + lines[row]
            text = "\n".join(lines)
        elif kind == 7:
            lines[row] = lines[row][draw(st.integers(1, 2)) :]
            text = "\n".join(lines)
    return text


@settings(max_examples=200)
@given(mutated())
def test_any_other_text_gives_the_strict_loaders_data_or_error(text: str) -> None:
    data = read(text, max_depth=DEPTH)
    if data is not None:  # only a text dump writes is read: the strict loader's data
        assert dump(data) == text
        kind, expected = strict(text)
        assert kind == "data" and same(data, expected)
    outcome, strict_outcome = loaded(text), strict(text)
    assert outcome[0] == strict_outcome[0]
    assert same(outcome[1], strict_outcome[1])


HOSTILE = [
    "a: &x 1\nb: *x\n",
    "a: 1\nb: 2\na: 3\n",
    "a: 1\na: 1\n",
    "b: 1\na: 2\n",
    "base:\n  x: 1\nother:\n  <<: {}\n",
    "<<: {}\n",
    "a: !!str 1\n",
    "a: !!python/object:os.system {}\n",
    "a: !custom 1\n",
    "a: !!binary aGk=\n",
    "a: {x: 1}\n",
    "a: [1, 2]\n",
    'a: {"x": 1}\n',
    "a:\n\tb: 1\n",
    "a:\n   b: 1\n",
    "a:\n b: 1\n",
    "a:\n  - 1\n",
    "a:\n- 1\n -2\n",
    "a: 1 # note\n",
    "# note\na: 1\n",
    "a: 1\n---\nb: 2\n",
    "---\na: 1\n",
    "a: 1\n...\n",
    "%YAML 1.2\n---\na: 1\n",
    'a: "\\ud800"\n',
    "a: \ud800\n",
    f"a: {'9' * (MAX_INT_DIGITS + 1)}\n",
    f"a: -{'9' * (MAX_INT_DIGITS + 1)}\n",
    f"a: {'9' * MAX_INT_DIGITS}\n",
    "a: 0x1F\n",
    "a: 017\n",
    "a: 1_000\n",
    "a: +1\n",
    "a: -0\n",
    "a: 1e3\n",
    "a: 1.\n",
    "a: .Inf\n",
    "a: yes\n",
    "a: ~\n",
    "a: Null\n",
    "a:\n",
    "a: \n",
    "a:  1\n",
    "a: 'q'\n",
    'a: "abc"\n',
    'a: "a\\x41"\n',
    'a: "\\u0041"\n',
    'a: "line\\nnext\\n"\n',
    "a: >\n  folded\n",
    "a: |2\n  x\n  y\n",
    "a: |\n  x\n",
    "a: |-\n  x\n  y\n\n",
    "a: |\n  x\n  y\n\n",
    "a: |\n  x \n  y\n",
    "a: |\n  x\n  \n  y\n",
    "a: |\n   x\n  y\n",
    "a: |\n  x\n y\n",
    "? a\n: 1\n",
    f"{'k' * 1001}: 1\n",
    "1: x\n",
    "true: x\n",
    "null: x\n",
    '"": x\n',
    "a: 1\r\nb: 2\r\n",
    "\ufeffa: 1\n",
    "a: 1",
    "a: 1\n\n",
    "\na: 1\n",
    "",
    "\n",
    "- 1\n- - 2\n  - 3\n",
    "- a: 1\n  b: 2\n- c\n",
    "- a: 1\n   b: 2\n",
    "-  a\n",
    "- a\n-\n",
    "a: 1\n  b: 2\n",
    "a\n",
    "plain scalar\n",
    "a: x\x00\n",
    "a: x\x85y\n",
    "a: x\u2028y\n",
    "a: '1'\n",
    "a: !!int 1\n",
    "a:\n- 1\nb:\n  c: 2\n",
    "a: [\n",
    "- [a]\n",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_texts_give_the_strict_loaders_result(text: str) -> None:
    data = read(text, max_depth=DEPTH)
    if data is not None:
        assert dump(data) == text
    outcome, strict_outcome = loaded(text), strict(text)
    assert outcome[0] == strict_outcome[0]
    assert same(outcome[1], strict_outcome[1])


@pytest.mark.parametrize(
    "text",
    [
        "a: &x 1\nb: *x\n",
        "a: 1\na: 1\n",
        "b: 1\na: 2\n",
        "<<: {}\n",
        "a: !!str x\n",
        "a: {x: 1}\n",
        "a:\n\tb: 1\n",
        "a: 1 # note\n",
        "a: 1\n---\nb: 2\n",
        'a: "\\ud800"\n',
        f"a: {'9' * (MAX_INT_DIGITS + 1)}\n",
        "a: 017\n",
        'a: "abc"\n',
        "a:\n",
        "a: 1\r\nb: 2\r\n",
    ],
)
def test_hostile_texts_are_left_to_the_strict_loader(text: str) -> None:
    assert read(text, max_depth=DEPTH) is None


def test_refusals_keep_their_error_file_and_line() -> None:
    for text, message in [
        ("a: 1\nb: &x 2\n", "r.yaml:2: anchors and aliases are not allowed"),
        ("a: 1\nb: 2\nb: 3\n", "r.yaml:3: duplicate key 'b' (first at line 2)"),
        ("a:\n  <<: {}\n", "r.yaml:2: merge keys (<<) are not allowed"),
        ('a: 1\nb: "\\ud83d"\n', "r.yaml:2: found invalid Unicode character escape code"),
        (f"a: 1\nb: {'9' * 4301}\n", "r.yaml:2: integer of 4301 digits is too long"),
    ]:
        with pytest.raises(YamlError) as info:
            loads(text, path="r.yaml")
        assert str(info.value).startswith(message)


def _nested(depth: int) -> Any:
    value: Any = {"leaf": 1}
    for n in range(depth - 1):
        value = {"k": value} if n % 2 else [value]
    return value


@pytest.mark.parametrize("depth", [1, 2, 3, 63, 64, 65, 66])
def test_nesting_is_limited_exactly_as_strictly(depth: int) -> None:
    for document in (_nested(depth), {"a": _nested(depth - 1) if depth > 1 else 1}):
        text = dump(document)
        kind, expected = strict(text, max_depth=64)
        data = read(text, max_depth=64)
        if kind == "data":
            assert data is not None and same(data, expected)
        else:
            assert data is None and "nesting deeper than 64 levels" in expected
    empty = dump({"a": _nested(depth - 1) if depth > 1 else {}} | {"b": {}})
    assert loaded(empty, max_depth=64) == strict(empty, max_depth=64)


def test_numbers_and_words_keep_their_types() -> None:
    document = {
        "big": 10**MAX_INT_DIGITS - 1,
        "bool": True,
        "false": False,
        "float": 1.0,
        "inf": -math.inf,
        "int": 1,
        "nan": math.nan,
        "none": None,
        "small": 1e-05,
        "text": "1",
        "zero": -0.0,
    }
    data = read(dump(document), max_depth=DEPTH)
    assert isinstance(data, dict) and same(data, document, ordered=False)
    assert math.copysign(1, data["zero"]) == -1


def test_the_projects_own_yaml_files_are_read_by_the_line_reader() -> None:
    """Recordings and fixtures headerlock wrote are read without the parser, equal."""
    read_fast = 0
    for path in sorted([*ROOT.glob("recordings/*.yaml"), *ROOT.glob("fixtures/*.yaml")]):
        text = path.read_text(encoding="utf-8")
        data = read(text, max_depth=DEPTH)
        if data is not None:
            read_fast += 1
            assert same(data, strict(text)[1])
        else:
            assert dump(strict(text)[1]) != text, path  # only hand-written ones decline
    assert read_fast


def test_remembered_lines_are_forgotten_past_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lines kept between loads hold a bounded number of characters; a line too
    long to keep, or one forgotten, is read again as well."""
    monkeypatch.setattr(canonical_read, "_CACHED_CHARS", 100)
    monkeypatch.setattr(canonical_read, "_CACHED_LINE", 50)
    document = {f"k{n:03}": n for n in range(30)} | {"long": "x" * 60, "text": "a\nb\n"}
    for _ in range(2):
        assert read(dump(document), max_depth=DEPTH) == document
        remembered = canonical_read._remembered
        assert remembered.chars <= 100
        assert sum(map(len, remembered.lines)) == remembered.chars


def test_reading_what_headerlock_wrote_never_imports_the_yaml_parser(tmp_path: Path) -> None:
    """PyYAML takes tens of milliseconds to import: a run that reads only canonical
    files (a replay's start-up) does without it; another text imports it."""
    path = tmp_path / "r.yaml"
    path.write_text(dump({"kind": "wire", "requests": [{"a": 1, "b": "x\ny\n"}]}))
    script = (
        "import sys; from pathlib import Path;"
        "from headerlock.formats.strict_yaml import load_file, loads;"
        "import headerlock.testing.wire.lock;"
        f"load_file(Path({str(path)!r}));"
        "print('yaml' in sys.modules, end=' ');"
        "loads('a: 017\\n');"
        "print('yaml' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.split() == ["False", "True"]
