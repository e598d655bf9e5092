"""The ``headerlock`` command line."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from headerlock.cli import main
from tests.model_server import ModelServer, chat_stream, text_chunks

ROOT = Path(__file__).parents[1]
SPINE = ["text-turn", "tool-turn", "ordered-turn", "error-turn", "reorder-turn"]


def run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(args), out=out)
    return code, out.getvalue()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "fixtures").mkdir()
    for name in SPINE:
        shutil.copy(ROOT / "fixtures" / f"{name}.yaml", tmp_path / "fixtures")
    return tmp_path


def dirs(root: Path) -> list[str]:
    return ["--fixtures", str(root / "fixtures"), "--recordings", str(root / "recordings")]


def test_demo_records_replays_and_shows_tool_orders() -> None:
    code, out = run("demo")
    assert code == 0, out
    assert "request/header (initial) seq 4: todo_write, edit, list, write, read" in out
    assert "request/header (fallback) seq 10: write, todo_write, read, list, edit" in out
    assert 'turn 1 failed: tool_order lists unregistered tool "ghost"' in out
    assert "[7/8] ok   tool-turn (spine)" in out
    assert "[8/8] ok   wire-turn (wire, pinned)" in out
    assert "request/header (initial) seq 4: reverse, upper, word_count" in out
    assert out.rstrip().endswith("pins fresh: ok")


def test_record_then_replay(project: Path) -> None:
    code, out = run("record", *dirs(project))
    assert code == 0, out
    assert f"[5/5] recorded tool-turn -> {project}/recordings/tool-turn.yaml" in out
    code, out = run("replay", *dirs(project))
    assert code == 0, out
    code, out = run("replay", "tool-turn", *dirs(project))
    assert (code, out.splitlines()[0][:22]) == (0, "[1/1] ok   tool-turn (")


def test_record_new_records_only_the_scenarios_with_no_recording(project: Path) -> None:
    """``headerlock record --record new``: pytest's ``--headerlock-record=new``."""
    assert run("record", "text-turn", *dirs(project))[0] == 0
    kept = (project / "recordings" / "text-turn.yaml").stat().st_mtime_ns
    code, out = run("record", "--record", "new", "text-turn", "tool-turn", *dirs(project))
    assert code == 0, out
    assert "[1/2] kept text-turn" in out and "(--record new)" in out
    assert "[2/2] recorded tool-turn" in out
    assert (project / "recordings" / "text-turn.yaml").stat().st_mtime_ns == kept


def test_replay_exit_codes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run("record", *dirs(project))
    pinned = project / "recordings" / "text-turn.yaml"
    pinned.write_text(pinned.read_text().replace("Read a UTF-8 text file", "Read a file"))
    code, out = run("replay", *dirs(project))
    assert code == 1
    assert "FAIL text-turn (spine, pinned)" in out
    assert "events[3].data.header.tools.read.description: 'Read a file from the workspace.'" in out
    assert "re-record: headerlock record text-turn" in out
    broken = project / "recordings" / "tool-turn.yaml"
    broken.write_text("version: 1\n")
    code, out = run("replay", *dirs(project))
    assert code == 2
    assert "missing key 'scenario'" not in out  # bad input: one line on stderr
    assert "recordings/tool-turn.yaml: missing key 'scenario'" in capsys.readouterr().err
    code, _ = run("replay", "no-such", *dirs(project))
    assert code == 2
    assert "no-such.yaml: no such fixture" in capsys.readouterr().err
    code, _ = run("replay", "../escape", *dirs(project))
    assert code == 2
    assert "scenario name '../escape' must match" in capsys.readouterr().err


def test_diff(project: Path) -> None:
    run("record", *dirs(project))
    rec = project / "recordings"
    code, out = run("diff", str(rec / "tool-turn.yaml"), str(rec / "tool-turn.yaml"))
    assert (code, out) == (0, "recordings are identical\n")
    code, out = run("diff", str(rec / "tool-turn.yaml"), str(rec / "text-turn.yaml"))
    assert code == 1
    assert "  ... and 10 more" in out
    assert (
        "events[1].data.content: 'What do my notes say?' -> 'Reply with exactly the word: PONG.'"
        in out
    )


def test_module_entry_point_exits_with_the_command_exit_code() -> None:
    def module(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "headerlock", *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )

    rec = ROOT / "recordings"
    differ = module("diff", str(rec / "tool-turn.yaml"), str(rec / "text-turn.yaml"))
    assert differ.returncode == 1, differ.stderr
    assert "events[1].data.content: 'What do my notes say?' ->" in differ.stdout
    missing = module("diff", str(rec / "no-such.yaml"), str(rec / "text-turn.yaml"))
    assert missing.returncode == 2, missing.stderr
    assert "no-such.yaml: no such recording" in missing.stderr


# -- secrets ---------------------------------------------------------------------------

LEAKY_PLUGIN = """
import os
from headerlock.agent import ToolSchema

NAMES = ("HEADERLOCK_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "MY_TOKEN", "SHORT_ONE")


def plugin(ctx):
    def leak(arguments):
        return " ".join(f"{name}={os.environ.get(name, '')}" for name in NAMES)

    def fail(arguments):
        raise RuntimeError("denied for " + os.environ.get("MY_TOKEN", ""))

    ctx.tools.register(ToolSchema("leak", "Show the credentials."), leak)
    ctx.tools.register(ToolSchema("fail", "Fail with a credential."), fail)
"""

LEAKY_FIXTURE = """\
pin: true
config: {model: demo}
plugins: [hl_leaky:plugin]
steps: [{prompt: show me}]
model:
  - tool_calls: [{name: leak}, {name: fail}]
  - text: done
"""

SECRETS = {
    "HEADERLOCK_API_KEY": "hl-secret-0123456789",
    "OPENAI_API_KEY": "sk-openai-0123456789",
    "ANTHROPIC_API_KEY": "sk-ant-0123456789",
    "MY_TOKEN": "my-token-0123456789",
}


def cli(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The real command, with the working directory not on ``sys.path`` by itself (``-P``)."""
    base = {k: v for k, v in os.environ.items() if k not in (*SECRETS, "HEADERLOCK_REDACT_ENV")}
    return subprocess.run(
        [sys.executable, "-P", "-m", "headerlock", *args],
        cwd=cwd,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("listed", ["option", "env"])
def test_no_secret_reaches_a_recording(tmp_path: Path, listed: str) -> None:
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "leak.yaml").write_text(LEAKY_FIXTURE)
    (tmp_path / "hl_leaky.py").write_text(LEAKY_PLUGIN)
    env = {**SECRETS, "SHORT_ONE": "short"}
    redact = ["--redact-env", "MY_TOKEN"] if listed == "option" else []
    if listed == "env":
        env["HEADERLOCK_REDACT_ENV"] = "MY_TOKEN"
    result = cli(tmp_path, "record", *redact, **env)
    assert result.returncode == 0, result.stderr
    written = (tmp_path / "recordings" / "leak.yaml").read_text()
    assert not [name for name, value in SECRETS.items() if value in written]
    assert (
        "HEADERLOCK_API_KEY=<<secret>> OPENAI_API_KEY=<<secret>> ANTHROPIC_API_KEY=<<secret>>"
        " MY_TOKEN=<<secret>> SHORT_ONE=short" in written
    ), "short values are not secrets"
    assert 'message: "tool \\"fail\\" raised RuntimeError: denied for <<secret>>"' in written
    assert cli(tmp_path, "replay", *redact, **env).returncode == 0
    unlisted = cli(tmp_path, "replay", **{**env, "HEADERLOCK_REDACT_ENV": ""})
    assert unlisted.returncode == 1, "a replay needs the same list"


@pytest.mark.parametrize(
    ("env", "used", "said"),
    [
        (
            {"OPENAI_API_KEY": "sk-openai-0123456789"},
            "sk-openai-0123456789",
            "API key from OPENAI_API_KEY (HEADERLOCK_API_KEY is unset)",
        ),
        (
            {"HEADERLOCK_API_KEY": "hl-secret-0123456789", "OPENAI_API_KEY": "sk-other-012345"},
            "hl-secret-0123456789",
            "API key from HEADERLOCK_API_KEY",
        ),
    ],
    ids=["openai-fallback", "headerlock-key-first"],
)
def test_live_says_which_key_it_uses(
    project: Path, model_server: ModelServer, env: dict[str, str], used: str, said: str
) -> None:
    model_server.route("*/chat/completions", chat_stream(text_chunks("PONG")))
    result = cli(
        project, "record", "text-turn", "--live", HEADERLOCK_BASE_URL=model_server.base_url, **env
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [f"headerlock: live model endpoint: {said}"]
    assert model_server.hits[0].headers["authorization"] == f"Bearer {used}"
    written = (project / "recordings" / "text-turn.yaml").read_text()
    assert not any(value in written for value in env.values())


def test_a_failed_record_keeps_the_old_bytes_records_the_rest_and_exits_1(project: Path) -> None:
    assert run("record", *dirs(project))[0] == 0
    tool_turn = project / "recordings" / "tool-turn.yaml"
    before = tool_turn.read_bytes()
    fixture = project / "fixtures" / "tool-turn.yaml"
    fixture.write_text(fixture.read_text().replace("  - text: Your notes say to buy milk.\n", ""))
    (project / "recordings" / "text-turn.yaml").unlink()
    code, out = run("record", *dirs(project))
    assert code == 1, out
    assert "FAIL tool-turn (the old recording is kept)" in out
    assert "was not recorded: the model script ran out" in out
    assert tool_turn.read_bytes() == before
    assert (project / "recordings" / "text-turn.yaml").exists()  # the others still recorded


def test_record_runs_the_class_guard_and_keeps_the_old_bytes(project: Path) -> None:
    """A scenario whose header drifted from its class's pin is not recorded (exit 1), and
    the guards line never says ok while a class fails."""
    assert run("record", *dirs(project))[0] == 0
    recording = project / "recordings" / "tool-turn.yaml"
    before = recording.read_bytes()
    fixture = project / "fixtures" / "tool-turn.yaml"
    fixture.write_text(fixture.read_text().replace("Answer in one line.", "Answer at length."))
    code, out = run("record", *dirs(project))
    assert code == 1, out
    assert "FAIL tool-turn (the old recording is kept)" in out
    assert "differs from the pinned header of class 'default' (text-turn)" in out
    assert "pins fresh: ok" not in out
    assert recording.read_bytes() == before


def test_replay_no_pending_writes_no_pending_file(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("record", *dirs(project))[0] == 0
    fixture = project / "fixtures" / "text-turn.yaml"
    fixture.write_text(fixture.read_text().replace("Answer in one line.", "Answer in one word."))
    pending = project / "recordings" / "text-turn.yaml.new"
    code, out = run("replay", "--no-pending", *dirs(project))
    assert code == 1, out
    assert "FAIL text-turn" in out and "pending:" not in out
    assert not pending.exists()
    code, out = run("replay", *dirs(project))
    assert code == 1 and pending.is_file()
    with pytest.raises(SystemExit):
        main(["replay", "--help"])
    assert "--no-pending" in capsys.readouterr().out
