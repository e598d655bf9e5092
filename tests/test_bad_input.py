"""The bad-input corpus: every malformed fixture, recording or name gets a clear
error (exit 2) that names the file, key or value, and nothing is written."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from headerlock.errors import ScenarioError
from headerlock.testing.scenario.project import Project
from tests.hostile import tree
from tests.support import run_cli as run

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
    Case(
        "plugin-os-system",
        "plugins.0: plugin 'os:system' is a built-in function, not a plugin; a plugin is a"
        " callable taking the context: plugin(ctx) or plugin(ctx, config)",
        fixture=swap("  - headerlock.demo.tools:files", "  - os:system"),
    ),
    Case(
        "plugin-builtin",
        "plugin 'builtins:exec' is a built-in function, not a plugin",
        fixture=swap("  - headerlock.demo.tools:files", "  - builtins:exec"),
    ),
    Case(
        "plugin-stdlib",
        "plugins.0: plugin 'shutil:rmtree' comes from the Python standard library, not a plugin",
        fixture=swap("  - headerlock.demo.tools:files", "  - shutil:rmtree"),
    ),
    Case(
        "plugin-stdlib-class",
        "plugin 'subprocess:Popen' comes from the Python standard library",
        fixture=swap("  - headerlock.demo.tools:files", "  - subprocess:Popen"),
    ),
    Case(
        "plugin-takes-no-context",
        "plugin 'headerlock.testing.scenario.pins:check_against_pin' takes (scenario, events, pin,"
        " header), not a context",
        fixture=swap(
            "  - headerlock.demo.tools:files",
            "  - headerlock.testing.scenario.pins:check_against_pin",
        ),
    ),
    Case(
        "files-workspace-itself",
        "case.yaml:12: files..: file path '.' names the workspace itself, not a file",
        fixture=swap("  notes.txt: |", '  ".": |'),
    ),
    Case(
        "files-empty-name",
        "file path '' names the workspace itself, not a file",
        fixture=swap("  notes.txt: |", '  "": |'),
    ),
    Case(
        "files-directory",
        "files.notes/: file path 'notes/' ends with '/': name a file, not a directory",
        fixture=swap("  notes.txt: |", "  notes/: |"),
    ),
    Case(
        "files-name-too-long",
        "has a name longer than 255 bytes",
        fixture=swap("  notes.txt: |", f"  {'n' * 256}.txt: |"),
    ),
    Case(
        "files-file-and-directory",
        "files.notes.txt: file path 'notes.txt' is a file, but 'notes.txt/inner.txt' uses it"
        " as a directory",
        fixture=swap("  notes.txt: |", "  notes.txt/inner.txt: x\n  notes.txt: |"),
    ),
    Case(
        "files-one-file-twice",
        "file path 'notes.txt' names the same file as './notes.txt'",
        fixture=swap("  notes.txt: |", "  ./notes.txt: x\n  notes.txt: |"),
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


def put(path: Path, content: str | bytes) -> None:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


def test_the_corpus_is_large_enough() -> None:
    assert len(FIXTURES) + len(RECORDINGS) >= 61


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
        "from headerlock.agent import ToolSchema\n\ndef plugin(ctx):\n    ctx.tools.register(ToolSchema('<unlisted-tools>'))\n"
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


# -- the real command line, in a project of its own ----------------------------------------

HEADERLOCK = [sys.executable, "-P", "-m", "headerlock"]
"""``-P``: the working directory is not on ``sys.path`` unless headerlock puts it there
(as for the ``headerlock`` console script)."""


def cli(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONIOENCODING"}
    return subprocess.run(
        [*HEADERLOCK, *args],
        cwd=cwd,
        env={**environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


CASE_RECORDING = GOOD_RECORDING.replace("scenario: tool-turn", "scenario: case")


def user_project(root: Path, plugin: str = "headerlock.demo.tools:files") -> Path:
    """A project of a user's own: fixtures, recordings, maybe plugin modules beside them."""
    (root / "fixtures").mkdir(parents=True)
    (root / "recordings").mkdir()
    (root / "fixtures" / "case.yaml").write_text(swap("headerlock.demo.tools:files", plugin))
    (root / "fixtures" / "pin.yaml").write_text(PIN)
    (root / "recordings" / "pin.yaml").write_text(PIN_RECORDING)
    return root


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("headerlock: "), result.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("files", "args", "message"),
    [
        (
            {},
            ["replay", "--recordings", "/no/such/dir"],
            "headerlock: /no/such/dir: the recordings directory does not exist",
        ),
        (
            {"empty/.keep": ""},
            ["replay", "--fixtures", "empty"],
            "headerlock: empty: no scenarios found (no *.yaml fixture files",
        ),
        ({"empty/.keep": ""}, ["record", "--fixtures", "empty"], "empty: no scenarios found"),
        ({"empty/.keep": ""}, ["flakes", "--fixtures", "empty"], "empty: no scenarios found"),
        (
            {"hl_boom.py": "raise RuntimeError('boom')\n"},
            ["record", "case"],
            "plugins.0: plugin 'hl_boom:plugin': importing 'hl_boom' failed:"
            " RuntimeError: boom (hl_boom.py:1)",
        ),
        (
            {"hl_boom.py": "def plugin(ctx):\n    return (\n"},
            ["replay", "case"],
            "plugin 'hl_boom:plugin': importing 'hl_boom' failed: SyntaxError:",
        ),
        (
            {"hl_boom.py": "import sys\nsys.exit(3)\n"},
            ["record", "case"],
            "importing 'hl_boom' failed: SystemExit: 3 (hl_boom.py:2)",
        ),
        (
            {"hl_boom.py": "import no_such_dependency_xyz\n"},
            ["record", "case"],
            "plugin 'hl_boom:plugin': cannot import 'hl_boom': No module named"
            " 'no_such_dependency_xyz'",
        ),
        (
            {"hl_boom.py": "from os import system as plugin\n"},
            ["record", "case"],
            "plugin 'hl_boom:plugin' is a built-in function, not a plugin",
        ),
        (
            {"hl_boom.py": "def plugin(ctx, config, extra):\n    pass\n"},
            ["record", "case"],
            "plugin 'hl_boom:plugin' takes (ctx, config, extra), not a context",
        ),
        (
            {},
            ["record", "--redact-env", "TOKEN,A=B"],
            "headerlock: --redact-env: 'A=B' is not an environment variable name",
        ),
    ],
    ids=[
        "replay-recordings-dir-missing",
        "replay-fixtures-dir-empty",
        "record-fixtures-dir-empty",
        "flakes-fixtures-dir-empty",
        "plugin-raises-on-import",
        "plugin-syntax-error",
        "plugin-exits-on-import",
        "plugin-dependency-missing",
        "plugin-reexports-os-system",
        "plugin-takes-three-arguments",
        "redact-env-bad-name",
    ],
)
def test_bad_command_lines_are_one_line_errors(
    tmp_path: Path, files: dict[str, str], args: list[str], message: str
) -> None:
    project = user_project(tmp_path / "project", "hl_boom:plugin")
    for name, content in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(content)
    before = tree(project)
    result = cli(project, *args)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert message in one_line_error(result)
    assert tree(project) == before, "nothing is written"


def test_no_command_is_a_usage_error(tmp_path: Path) -> None:
    result = cli(tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("usage: headerlock ")
    assert result.stderr.strip().endswith("headerlock: error: choose a command (headerlock --help)")
    assert result.stdout == ""


def test_version(tmp_path: Path) -> None:
    result = cli(tmp_path, "--version")
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(r"headerlock \d+\.\d+\S*\n", result.stdout), result.stdout


def test_plugins_resolve_from_the_project_root(tmp_path: Path) -> None:
    project = user_project(tmp_path / "project", "hl_local:plugin")
    (project / "hl_local.py").write_text("from headerlock.demo.tools import files as plugin\n")
    (project / "recordings" / "case.yaml").write_text(CASE_RECORDING)
    result = cli(project, "replay")
    assert (result.returncode, result.stderr) == (0, ""), result.stdout
    assert "[2/2] ok   pin (spine, pinned)" in result.stdout


def test_a_files_key_that_is_not_a_file_is_a_one_line_error(tmp_path: Path) -> None:
    project = user_project(tmp_path / "project")
    (project / "fixtures" / "case.yaml").write_text(swap("  notes.txt: |", '  "dir/": |'))
    result = cli(project, "record", "case")
    assert result.returncode == 2
    line = one_line_error(result)
    assert "case.yaml:12: files.dir/: file path 'dir/' ends with '/': name a file" in line


def read_only_directory(tmp_path: Path) -> Path:
    """A directory this process cannot write to (``/sys`` when running as root)."""
    directory = tmp_path / "read-only"
    directory.mkdir()
    directory.chmod(0o555)
    try:
        (directory / ".probe").touch()
    except PermissionError:
        return directory
    (directory / ".probe").unlink()
    directory.chmod(0o755)
    if Path("/sys").is_dir() and not os.access("/sys", os.W_OK | os.X_OK):
        return Path("/sys")
    try:
        (Path("/sys") / ".headerlock-probe").touch()
    except OSError:
        return Path("/sys")
    pytest.skip("no read-only directory to write to")


def test_a_read_only_recordings_directory_is_a_one_line_error(tmp_path: Path) -> None:
    project = user_project(tmp_path / "project")
    recordings = read_only_directory(tmp_path)
    try:
        result = cli(project, "record", "case", "--recordings", str(recordings))
    finally:
        if recordings.is_relative_to(tmp_path):
            recordings.chmod(0o755)
    assert result.returncode == 2, (result.stdout, result.stderr)
    line = one_line_error(result)
    assert line.startswith(f"headerlock: {recordings}/case.yaml: "), line


def test_a_c_locale_prints_with_escapes(tmp_path: Path) -> None:
    project = user_project(tmp_path / "project")
    (project / "recordings" / "case.yaml").write_text(CASE_RECORDING)
    fixture = project / "fixtures" / "case.yaml"
    fixture.write_text(fixture.read_text().replace("What do my notes say?", "Qué dicen? ✓"))
    result = cli(project, "replay", "case", LC_ALL="C", LANG="C", PYTHONUTF8="0")
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1, result.stderr
    assert "Qu\\xe9 dicen? \\u2713" in result.stdout


def test_negative_permutations_are_refused_by_pytest(tmp_path: Path) -> None:
    project = user_project(tmp_path / "project")
    (project / "pytest.ini").write_text("[pytest]\ntestpaths = fixtures\n")
    result = subprocess.run(
        [
            sys.executable,
            "-P",
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--headerlock-permutations=-1",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, result.stdout
    assert "argument --headerlock-permutations: must be 0 or more, got -1" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_fixture_plugins_resolve_from_the_pytest_rootdir(tmp_path: Path) -> None:
    project = user_project(tmp_path / "project", "hl_local:plugin")
    (project / "recordings" / "case.yaml").unlink(missing_ok=True)
    (project / "hl_local.py").write_text("from headerlock.demo.tools import files as plugin\n")
    (project / "pytest.ini").write_text("[pytest]\ntestpaths = fixtures\n")
    command = [sys.executable, "-P", "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    for extra in (["--snapshot-update"], []):
        result = subprocess.run(
            command + extra, cwd=project, capture_output=True, text=True, timeout=120, check=False
        )
        assert result.returncode == 0, result.stdout + result.stderr
    assert (project / "recordings" / "case.yaml").is_file()
