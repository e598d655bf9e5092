"""Fixtures and recordings load under the YAML 1.2 core schema, strictly, with both parsers."""

from __future__ import annotations

import io
import math
import sys
from pathlib import Path
from typing import Any

import pytest

from headerlock.cli import main
from headerlock.errors import InputFileError, RecordingError, SerializationError, YamlError
from headerlock.formats.recording import load_recording
from headerlock.formats.strict_yaml import dumps, loads

ROOT = Path(__file__).parents[2]
PARSERS = [pytest.param(False, id="libyaml"), pytest.param(True, id="pure")]

CORE = [
    # YAML 1.1 read these as sexagesimal, octal, booleans, a timestamp or a "value" key.
    ("12:30", "12:30"),
    ("1:00:00", "1:00:00"),
    ("017", 17),
    ("0017", 17),
    ("-017", -17),
    ("+12", 12),
    ("0o17", 15),
    ("0x1F", 31),
    ("0b101", "0b101"),
    ("1_000", "1_000"),
    ("yes", "yes"),
    ("No", "No"),
    ("on", "on"),
    ("OFF", "OFF"),
    ("y", "y"),
    ("=", "="),
    ("2024-01-02", "2024-01-02"),
    ("2024-01-02T10:00:00Z", "2024-01-02T10:00:00Z"),
    ("true", True),
    ("True", True),
    ("TRUE", True),
    ("false", False),
    ("tRUE", "tRUE"),
    ("~", None),
    ("null", None),
    ("Null", None),
    ("NULL", None),
    ("", None),
    ("nULL", "nULL"),
    ("1.5", 1.5),
    ("1e3", 1000.0),
    ("-.5", -0.5),
    ("1.", 1.0),
    ("+1.5E-2", 0.015),
    (".inf", math.inf),
    ("-.Inf", -math.inf),
    ("+.INF", math.inf),
    ("-0o17", "-0o17"),
    ("0o18", "0o18"),
    ("0xG", "0xG"),
    ("1.2.3", "1.2.3"),
    (".", "."),
    ("+", "+"),
    ("-.nan", "-.nan"),
]


@pytest.mark.parametrize("pure", PARSERS)
@pytest.mark.parametrize(("plain", "expected"), CORE, ids=[c[0] or "empty" for c in CORE])
def test_plain_scalars_resolve_per_the_yaml_1_2_core_schema(
    plain: str, expected: Any, pure: bool
) -> None:
    value = loads(f"v: {plain}\n", pure=pure)["v"]
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize("pure", PARSERS)
@pytest.mark.parametrize("text", [".nan", ".NaN", ".NAN"])
def test_nan(text: str, pure: bool) -> None:
    assert math.isnan(loads(f"v: {text}\n", pure=pure)["v"])


@pytest.mark.parametrize("pure", PARSERS)
def test_quoted_and_tagged_scalars(pure: bool) -> None:
    text = (
        'a: "017"\nb: \'true\'\nc: !!str 12\nd: !!int "017"\ne: !!float 1\nf: ! 12\ng: !!null ""\n'
    )
    assert loads(text, pure=pure) == {
        "a": "017",
        "b": "true",
        "c": "12",
        "d": 17,
        "e": 1.0,
        "f": "12",
        "g": None,
    }


@pytest.mark.parametrize("pure", PARSERS)
@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("a: 1\nb: !!bool yes\n", "'yes' is not a YAML 1.2 core !!bool", 2),
        ("a: !!int 12:30\n", "'12:30' is not a YAML 1.2 core !!int", 1),
        ("a: !!float x\n", "'x' is not a YAML 1.2 core !!float", 1),
        ("a: 1\n---\nb: 2\n", "expected a single document in the stream", 2),
        ("a:\n  - x\n  - <<: {b: 1}\n", "merge keys (<<) are not allowed", 3),
        ("? [1]\n: x\n", "mapping keys must be strings, got [1]", 1),
        ("a: 1\n? {b: 1}\n: x\n", "mapping keys must be strings, got {'b': 1}", 2),
        ("a: !!set {x}\n", "the tag 'tag:yaml.org,2002:set' is not allowed here", 1),
        ("a: !!omap [{x: 1}]\n", "the tag 'tag:yaml.org,2002:omap' is not allowed here", 1),
        ("a: !thing [1]\n", "could not determine a constructor for the tag '!thing'", 1),
        ("a:\n  b: 1\n  c: 2\n  b: 3\n", "duplicate key 'b' (first at line 2)", 4),
        ("a: [1, &x 2]\n", "anchors and aliases are not allowed", 1),
    ],
)
def test_strict_errors_name_the_line(text: str, message: str, line: int, pure: bool) -> None:
    with pytest.raises(YamlError) as info:
        loads(text, path="f.yaml", pure=pure)
    assert message in str(info.value)
    assert info.value.line == line
    assert "\n" not in str(info.value)


def test_yes_and_on_are_ordinary_keys() -> None:
    assert loads("yes: 1\non: 2\nNo: 3\n") == {"yes": 1, "on": 2, "No": 3}


def test_a_quoted_merge_key_is_an_ordinary_key() -> None:
    assert loads('"<<": 1\n') == {"<<": 1}


@pytest.mark.parametrize("pure", PARSERS)
def test_a_4301_digit_integer_is_a_one_line_error(pure: bool) -> None:
    text = "a: 1\nn: " + "9" * 4301 + "\n"
    with pytest.raises(YamlError) as info:
        loads(text, path="f.yaml", pure=pure)
    message = str(info.value)
    assert message.startswith("f.yaml:2: integer of 4301 digits is too long")
    assert "quote it to keep it as a string" in message
    assert "\n" not in message
    hexa = "n: 0x" + "f" * 3600 + "\n"
    with pytest.raises(YamlError, match="too long"):
        loads(hexa, pure=pure)


@pytest.mark.parametrize("pure", PARSERS)
def test_4300_digits_and_leading_zeros_are_fine(pure: bool) -> None:
    assert loads("n: " + "9" * 4300 + "\n", pure=pure)["n"] == 10**4300 - 1
    assert loads("n: " + "0" * 5000 + "7\n", pure=pure)["n"] == 7


def test_the_writer_refuses_what_the_reader_refuses() -> None:
    assert loads(dumps({"n": 10**4300 - 1}))["n"] == 10**4300 - 1
    with pytest.raises(SerializationError, match="more than 4300 digits") as info:
        dumps({"n": 10**4300})
    assert "\n" not in str(info.value)


def test_the_writer_honours_a_lower_interpreter_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        with pytest.raises(SerializationError, match="more than 4300 digits"):
            dumps({"n": 10**700})
        with pytest.raises(YamlError, match="too long"):
            loads("n: " + "1" * 700 + "\n")
    finally:
        sys.set_int_max_str_digits(limit)


@pytest.mark.parametrize("pure", PARSERS)
@pytest.mark.parametrize("escape", ["\\ud800", "\\udc80", "\\U0000DFFF"])
def test_a_lone_surrogate_escape_is_a_one_line_error(escape: str, pure: bool) -> None:
    with pytest.raises(YamlError) as info:
        loads(f'a: 1\nb: "x{escape}y"\n', path="f.yaml", pure=pure)
    assert str(info.value).startswith("f.yaml:2: ")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("pure", PARSERS)
def test_astral_characters_are_escaped_as_one_code_point(pure: bool) -> None:
    assert loads('a: "\\U0001F600"\n', pure=pure) == {"a": "\U0001f600"}
    with pytest.raises(YamlError):  # libyaml refuses surrogate escapes, even paired ones
        loads('a: "\\ud83d\\ude00"\n', pure=pure)


@pytest.mark.parametrize("pure", PARSERS)
def test_a_lone_surrogate_in_the_text_is_a_one_line_error(pure: bool) -> None:
    with pytest.raises(YamlError) as info:
        loads("a: 1\nb: x\ud800y\n", path="f.yaml", pure=pure)
    assert str(info.value).startswith("f.yaml:")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("pure", PARSERS)
def test_empty_streams_and_scalar_roots(pure: bool) -> None:
    assert loads("", pure=pure) is None
    assert loads("# only a comment\n", pure=pure) is None
    assert loads("--- 017\n", pure=pure) == 17
    assert loads("[]\n", pure=pure) == []
    assert loads("a: {}\n", pure=pure) == {"a": {}}


# -- in a user's project ---------------------------------------------------------------

FIXTURE = """\
app: spine
pin: true
config:
  model: demo
plugins:
  - headerlock.demo.tools:files
files:
  notes.txt: |
    Buy milk.
steps:
  - prompt: What do my notes say?
model:
  - tool_calls:
      - name: read
        arguments: {path: notes.txt, at: 12:30, count: 017, mode: 0o17, flag: yes, off: off}
  - text: Your notes say to buy milk.
"""


def _run(project: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(
        [*args, "--fixtures", str(project / "fixtures"), "--recordings", str(project / "rec")],
        out=out,
    )
    return code, out.getvalue() + capsys.readouterr().err


def test_model_script_arguments_keep_their_yaml_1_2_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "clock.yaml").write_text(FIXTURE)
    code, output = _run(tmp_path, capsys, "record", "clock")
    assert code == 0, output
    recording = load_recording(tmp_path / "rec" / "clock.yaml")
    calls = [e["data"] for e in recording.events if e["type"] == "tool/call"]
    assert calls[0]["arguments"] == {
        "path": "notes.txt",
        "at": "12:30",
        "count": 17,
        "mode": 15,
        "flag": "yes",
        "off": "off",
    }
    code, output = _run(tmp_path, capsys, "replay", "clock")
    assert code == 0, output


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("count: 017", "count: " + "1" * 4301, "clock.yaml:15: integer of 4301 digits is too long"),
        ("prompt: What", 'prompt: "\\ud800 What', "clock.yaml:11:"),
    ],
    ids=["4301-digits", "lone-surrogate"],
)
def test_bad_scalars_in_a_fixture_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, message: str
) -> None:
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "rec").mkdir()
    text = FIXTURE.replace(old, new, 1)
    if "\\ud800" in new:
        text = text.replace("my notes say?", 'my notes say?"', 1)
    (tmp_path / "fixtures" / "clock.yaml").write_text(text)
    for command in ("record", "replay"):
        code, output = _run(tmp_path, capsys, command, "clock")
        assert code == 2, output
        assert message in output, output
        assert "Traceback" not in output
        assert len(output.strip().splitlines()) == 1, output
    assert not any((tmp_path / "rec").iterdir())


def test_a_4301_digit_integer_in_a_recording_is_a_one_line_error(tmp_path: Path) -> None:
    text = (ROOT / "recordings" / "tool-turn.yaml").read_text()
    path = tmp_path / "tool-turn.yaml"
    path.write_text(text.replace("version: 1", "version: " + "1" * 4301, 1))
    with pytest.raises(RecordingError) as info:
        load_recording(path)
    assert "integer of 4301 digits is too long" in str(info.value)
    assert "\n" not in str(info.value)


def test_the_bundled_fixtures_mean_the_same_under_1_2() -> None:
    """Every bundled fixture loads to the same data under the old 1.1 reading."""
    import yaml

    for path in sorted((ROOT / "fixtures").glob("*.yaml")):
        text = path.read_text()
        assert loads(text, path=str(path)) == yaml.safe_load(text), path.name


def test_scenario_error_for_a_bad_tag(tmp_path: Path) -> None:
    from headerlock.testing.scenario.project import Project

    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "clock.yaml").write_text(
        FIXTURE.replace("flag: yes", "flag: !!bool yes")
    )
    with pytest.raises(InputFileError, match=r"'yes' is not a YAML 1.2 core !!bool"):
        Project(tmp_path / "fixtures", tmp_path / "rec").scenario("clock")
