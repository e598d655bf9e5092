"""The bad-input corpus: every malformed fixture, recording or name gets a clear
error (exit 2) that names the file, key or value, and nothing is written."""

from __future__ import annotations

import asyncio
import hashlib
import io
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from headerlock.cli import main
from headerlock.errors import ScenarioError
from headerlock.testing.project import Project

ROOT = Path(__file__).parents[1]
GOOD = (ROOT / "fixtures" / "tool-turn.yaml").read_text()
GOOD_RECORDING = (ROOT / "recordings" / "tool-turn.yaml").read_text()
PIN = (ROOT / "fixtures" / "text-turn.yaml").read_text()
PIN_RECORDING = (
    (ROOT / "recordings" / "text-turn.yaml")
    .read_text()
    .replace("scenario: text-turn", "scenario: pin")
)


def bomb(levels: int = 9) -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Case:
    id: str
    message: str
    fixture: str | bytes | None = None
    recording: str | bytes | None = None
    name: str = "case"


def swap(old: str, new: str, text: str = GOOD) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def rec(old: str, new: str) -> str:
    return swap(old, new, GOOD_RECORDING.replace("scenario: tool-turn", "scenario: case"))


FIXTURES = [
    Case(
        "yaml-syntax",
        "case.yaml:3: did not find expected ',' or ']'",
        fixture="app: spine\nsteps: [oops\nmore: 1\n",
    ),
    Case(
        "wrong-type-pin",
        "case.yaml:3: pin: Input should be a valid boolean (got 'sure')",
        fixture=swap("app: spine", "app: spine\npin: sure"),
    ),
    Case(
        "wrong-type-steps",
        "steps: Input should be a valid list",
        fixture=swap("steps:\n  - prompt: What do my notes say?", "steps: go"),
    ),
    Case(
        "unknown-key",
        "case.yaml:3: pinned: unknown key 'pinned'",
        fixture=swap("app: spine", "app: spine\npinned: true"),
    ),
    Case(
        "unknown-config-key",
        "config.modle: unknown key 'modle'",
        fixture=swap("  model: demo", "  modle: demo"),
    ),
    Case(
        "missing-steps",
        "steps: missing required key",
        fixture="app: spine\nconfig: {model: demo}\n",
    ),
    Case("empty", "case.yaml: file is empty", fixture=""),
    Case("whitespace-only", "case.yaml: file is empty", fixture="  \n\n"),
    Case("comment-only", "case.yaml: file is empty", fixture="# nothing here\n"),
    Case("not-a-mapping", "a scenario is a mapping, got list", fixture="- a\n- b\n"),
    Case("non-utf8", "case.yaml: not UTF-8 text (byte 0xe9", fixture=b"description: caf\xe9\n"),
    Case(
        "tabs",
        "(a tab: YAML indents with spaces only)",
        fixture="app: spine\nconfig:\n\tmodel: demo\n",
    ),
    Case(
        "duplicate-key",
        "duplicate key 'app' (first at line 1)",
        fixture="app: spine\napp: acp\nsteps: [{prompt: x}]\n",
    ),
    Case(
        "python-tag",
        "could not determine a constructor for the tag 'tag:yaml.org,2002:python/object/apply:os.system'",
        fixture="app: !!python/object/apply:os.system ['echo pwned']\n",
    ),
    Case(
        "custom-tag",
        "could not determine a constructor for the tag '!secret'",
        fixture="app: !secret spine\n",
    ),
    Case(
        "binary-tag",
        "the tag 'tag:yaml.org,2002:binary' is not allowed",
        fixture="app: !!binary c3BpbmU=\n",
    ),
    Case(
        "set-tag", "the tag 'tag:yaml.org,2002:set' is not allowed", fixture="app: !!set {a, b}\n"
    ),
    Case(
        "alias",
        "case.yaml:1: anchors and aliases are not allowed",
        fixture="x: &p {prompt: hi}\nsteps: [*p]\n",
    ),
    Case("billion-laughs", "anchors and aliases are not allowed", fixture=bomb()),
    Case(
        "merge-key",
        "merge keys (<<) are not allowed",
        fixture="config:\n  <<: {model: demo}\nsteps: [{prompt: x}]\n",
    ),
    Case(
        "deep-nesting",
        "nesting deeper than 64 levels",
        fixture="steps: " + "[" * 100 + "]" * 100 + "\n",
    ),
    Case(
        "plugin-dotdot",
        "plugins.0: plugin path '../evil:plugin' is not of the form",
        fixture=swap("  - headerlock.demo.tools:files", "  - ../evil:plugin"),
    ),
    Case(
        "plugin-absolute",
        "plugin path '/tmp/evil.py:plugin' is not of the form",
        fixture=swap("  - headerlock.demo.tools:files", "  - /tmp/evil.py:plugin"),
    ),
    Case(
        "plugin-nul",
        "is not of the form",
        fixture=swap("  - headerlock.demo.tools:files", '  - "headerlock.demo\\0tools:files"'),
    ),
    Case(
        "plugin-missing-module",
        "cannot import 'no_such_module_xyz'",
        fixture=swap("  - headerlock.demo.tools:files", "  - no_such_module_xyz:plugin"),
    ),
    Case(
        "plugin-missing-attribute",
        "has no attribute 'nope'",
        fixture=swap("  - headerlock.demo.tools:files", "  - headerlock.demo.tools:nope"),
    ),
    Case(
        "files-dotdot",
        "files.../outside.txt: file path '../outside.txt' must stay inside the workspace",
        fixture=swap("  notes.txt: |", "  ../outside.txt: |"),
    ),
    Case(
        "files-absolute",
        "file path '/etc/notes.txt' must stay inside the workspace",
        fixture=swap("  notes.txt: |", "  /etc/notes.txt: |"),
    ),
    Case(
        "tool-order-string",
        "config.tool_order: tool_order must be a list of tool names, got str",
        fixture=swap("  model: demo", "  model: demo\n  tool_order: bash"),
    ),
    Case(
        "tool-order-non-string",
        "tool_order[1] must be a tool name (string), got 7",
        fixture=swap("  model: demo", "  model: demo\n  tool_order: [read, 7, <unlisted-tools>]"),
    ),
    Case(
        "tool-order-rest-twice",
        'tool_order lists "<unlisted-tools>" more than once',
        fixture=swap(
            "  model: demo", "  model: demo\n  tool_order: [<unlisted-tools>, <unlisted-tools>]"
        ),
    ),
    Case(
        "tool-order-empty",
        'tool_order must contain the "<unlisted-tools>" rest entry',
        fixture=swap("  model: demo", "  model: demo\n  tool_order: []"),
    ),
    Case(
        "tool-order-no-rest",
        'tool_order must contain the "<unlisted-tools>" rest entry',
        fixture=swap("  model: demo", "  model: demo\n  tool_order: [read]"),
    ),
    Case(
        "max-steps-zero",
        "config.max_steps: Input should be greater than 0",
        fixture=swap("  model: demo", "  model: demo\n  max_steps: 0"),
    ),
    Case(
        "temperature-string",
        "config.temperature: Input should be a valid number",
        fixture=swap("  model: demo", "  model: demo\n  temperature: hot"),
    ),
    Case(
        "empty-prompt",
        "steps.0.prompt: String should have at least 1 character",
        fixture=swap("  - prompt: What do my notes say?", '  - prompt: ""'),
    ),
    Case(
        "reply-unknown-key",
        "model[1]: unknown key 'txt'",
        fixture=swap(
            "  - text: Your notes say to buy milk.", "  - txt: Your notes say to buy milk."
        ),
    ),
    Case(
        "reply-calls-not-list",
        "model[0].tool_calls: expected a list",
        fixture=swap(
            "  - tool_calls:\n      - name: read\n        arguments: {path: notes.txt}",
            "  - tool_calls: read",
        ),
    ),
    Case(
        "huge-file",
        "more than the limit of 33554432",
        fixture="description: " + "x" * (33 * 1024 * 1024) + "\n",
    ),
]

RECORDINGS = [
    Case(
        "rec-newer-version",
        "recordings/case.yaml: recording format version 2 is newer than this headerlock reads (1)",
        recording=rec("version: 1", "version: 2"),
    ),
    Case(
        "rec-unknown-version",
        "unknown recording format version 0",
        recording=rec("version: 1", "version: 0"),
    ),
    Case("rec-not-mapping", "a recording is a mapping, got list", recording="- 1\n"),
    Case(
        "rec-missing-events",
        "missing key 'events'",
        recording="app: spine\nheader_class: default\npinned: false\nscenario: case\nversion: 1\n",
    ),
    Case(
        "rec-seq-gap",
        "events: corrupt log at seq 3: expected seq 2, got 3",
        recording=rec("  seq: 2\n", "  seq: 3\n"),
    ),
    Case(
        "rec-unscrubbed",
        "unpinned recording is not normalized (scrubbing changes events[3].data.header.tools",
        recording=rec('      tools: "<<tools>>"', "      tools: []"),
    ),
    Case(
        "rec-non-utf8",
        "recordings/case.yaml: not UTF-8 text",
        recording=b"version: 1\nscenario: caf\xe9\n",
    ),
    Case("rec-empty", "recordings/case.yaml: file is empty", recording=""),
    Case("rec-duplicate-key", "duplicate key 'version'", recording="version: 1\nversion: 1\n"),
    Case(
        "rec-python-tag",
        "could not determine a constructor",
        recording="version: !!python/name:os.system ''\n",
    ),
    Case("rec-alias-bomb", "anchors and aliases are not allowed", recording=bomb()),
]


def tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "recordings").mkdir()
    (tmp_path / "fixtures" / "case.yaml").write_text(GOOD)
    (tmp_path / "recordings" / "case.yaml").write_text(
        GOOD_RECORDING.replace("scenario: tool-turn", "scenario: case")
    )
    (tmp_path / "fixtures" / "pin.yaml").write_text(PIN)
    (tmp_path / "recordings" / "pin.yaml").write_text(PIN_RECORDING)
    return tmp_path


def run(project: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(
        [
            *args,
            "--fixtures",
            str(project / "fixtures"),
            "--recordings",
            str(project / "recordings"),
        ],
        out=out,
    )
    return code, out.getvalue() + capsys.readouterr().err


def put(path: Path, content: str | bytes) -> None:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


def test_the_corpus_is_large_enough() -> None:
    assert len(FIXTURES) + len(RECORDINGS) >= 45


def test_a_good_project_replays(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, output = run(project, capsys, "replay", "case")
    assert code == 0, output


@pytest.mark.parametrize("case", FIXTURES, ids=[c.id for c in FIXTURES])
@pytest.mark.parametrize("command", ["replay", "record"])
def test_bad_fixtures(
    project: Path, capsys: pytest.CaptureFixture[str], case: Case, command: str
) -> None:
    assert case.fixture is not None
    put(project / "fixtures" / "case.yaml", case.fixture)
    if command == "record":
        (project / "recordings" / "case.yaml").unlink()
    before = tree(project)
    started = time.perf_counter()
    code, output = run(project, capsys, command, "case")
    assert time.perf_counter() - started < 10
    assert code == 2, output
    assert case.message in output, output
    assert tree(project) == before, "nothing is written"


@pytest.mark.parametrize("case", RECORDINGS, ids=[c.id for c in RECORDINGS])
def test_bad_recordings(project: Path, capsys: pytest.CaptureFixture[str], case: Case) -> None:
    assert case.recording is not None
    put(project / "recordings" / "case.yaml", case.recording)
    before = tree(project)
    code, output = run(project, capsys, "replay", "case")
    assert code == 2, output
    assert case.message in output, output
    assert tree(project) == before


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("../case", "scenario name '../case' must match"),
        ("/etc/passwd", "scenario name '/etc/passwd' must match"),
        ("sub/case", "scenario name 'sub/case' must match"),
        ("..", "scenario name '..' must match"),
        ("CASE", "scenario name 'CASE' must match"),
    ],
)
@pytest.mark.parametrize("command", ["replay", "record"])
def test_bad_names_read_and_write_nothing(
    project: Path, capsys: pytest.CaptureFixture[str], name: str, message: str, command: str
) -> None:
    before = tree(project.parent)
    code, output = run(project, capsys, command, name)
    assert code == 2
    assert message in output
    assert tree(project.parent) == before


def test_nul_in_a_name_is_refused(project: Path) -> None:
    with pytest.raises(ScenarioError, match="scenario name 'a\\\\x00b' must match"):
        Project(project / "fixtures", project / "recordings").scenario("a\x00b")


@pytest.mark.parametrize("transform", ["crlf", "bom", "crlf+bom"])
def test_crlf_and_bom_replay_identically(
    project: Path, capsys: pytest.CaptureFixture[str], transform: str
) -> None:
    for path in (project / "fixtures" / "case.yaml", project / "recordings" / "case.yaml"):
        data = path.read_bytes()
        if "crlf" in transform:
            data = data.replace(b"\n", b"\r\n")
        if "bom" in transform:
            data = b"\xef\xbb\xbf" + data
        path.write_bytes(data)
    code, output = run(project, capsys, "replay", "case")
    assert code == 0, output


def test_a_provider_returning_the_reserved_name_records_a_balanced_error_turn(
    tmp_path: Path,
) -> None:
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "reserved.yaml").write_text(
        "pin: true\nconfig: {model: demo}\nplugins: [reserved_tool:plugin]\nsteps: [{prompt: hi}]\nmodel: []\n"
    )
    (tmp_path / "reserved_tool.py").write_text(
        "from headerlock import ToolSchema\n\ndef plugin(ctx):\n    ctx.tools.register(ToolSchema('<unlisted-tools>'))\n"
    )
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        project = Project(tmp_path / "fixtures", tmp_path / "recordings")
        recording = asyncio.run(project.record(project.scenario("reserved")))
    finally:
        sys.path.remove(str(tmp_path))
    assert [e["type"] for e in recording.events] == ["turn/start", "user/message", "turn/end"]
    assert recording.events[2]["data"]["reason"] == {
        "kind": "error",
        "step": 1,
        "message": 'tool provider returned reserved tool name "<unlisted-tools>" (reserved for tool_order\'s rest entry)',
    }
    shutil.rmtree(tmp_path / "recordings")
