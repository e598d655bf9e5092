"""Pending files, ``headerlock review``, record modes and ignore rules in a user's project.

The project's tests call the real ``openai`` SDK; recording forwards to the loopback
model server (a live endpoint for these tests: its hits are what a paid endpoint
would bill), replay is sealed. ``headerlock review`` runs as the installed command in
the project directory, interactively through a real pseudo-terminal.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

import openai  # loaded once here: the in-process runs reuse it
import pytest

from headerlock.errors import WireMismatch
from headerlock.formats.pending import pending_path, read_pending
from headerlock.formats.wire_recording import load_wire_recording
from tests.model_server import ModelServer

AGENT = """
import os
import random

import openai
import pytest


def ask(system, prompt, **extra):
    client = openai.OpenAI(base_url=os.environ["AGENT_BASE_URL"], api_key="sk-test-not-a-real-key-0001", max_retries=0)
    messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
    first = client.chat.completions.create(model="gpt-test", messages=messages, **extra)
    messages.append({"role": "assistant", "content": first.choices[0].message.content})
    messages.append({"role": "user", "content": "and then?"})
    second = client.chat.completions.create(model="gpt-test", messages=messages, **extra)
    return [first.choices[0].message.content, second.choices[0].message.content]


@pytest.mark.headerlock_pin
@pytest.mark.headerlock_wire(header_class="alpha")
def test_alpha(headerlock_wire):
    assert len(ask(os.environ.get("ALPHA_SYSTEM", "You are alpha."), "hi alpha")) == 2


@pytest.mark.headerlock_pin
@pytest.mark.headerlock_wire(header_class="beta")
def test_beta(headerlock_wire):
    assert len(ask(os.environ.get("BETA_SYSTEM", "You are beta."), "hi beta")) == 2


@pytest.mark.headerlock_pin
@pytest.mark.headerlock_wire(header_class="seeded", ignore=os.environ.get("SEED_IGNORE", "config.seed").split(","))
def test_seeded(headerlock_wire):
    # nine digits every time: the test server counts prompt tokens by body size (a real
    # provider does not count the seed), so a shorter seed would change the response
    ask("You are seeded.", "hi", seed=random.randint(10**8, 10**9 - 1))
"""

INI = """[pytest]
testpaths = tests
addopts = -p no:randomly -p no:cacheprovider
asyncio_default_fixture_loop_scope = function
"""

ALPHA = Path("recordings", "tests", "test_agent", "test_alpha.yaml")
BETA = Path("recordings", "tests", "test_agent", "test_beta.yaml")
SEEDED = Path("recordings", "tests", "test_agent", "test_seeded.yaml")
HEADERLOCK = str(Path(sys.executable).with_name("headerlock"))


@pytest.fixture
def project(
    pytester: pytest.Pytester, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> pytest.Pytester:
    """A user's project with three pinned tests, recorded against the model server."""
    for name in ("ALPHA_SYSTEM", "BETA_SYSTEM", "SEED_IGNORE"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeini(INI)
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_agent.py").write_text(AGENT)
    model_server.script([{"text": "ok"}] * 100)
    monkeypatch.setenv("AGENT_BASE_URL", model_server.base_url)
    result = pytester.runpytest_inprocess("--snapshot-update")
    result.assert_outcomes(passed=3)
    return pytester


def review(project: pytest.Pytester, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [HEADERLOCK, "review", *args], cwd=project.path, capture_output=True, text=True, timeout=60
    )


def test_a_changed_system_prompt_is_pending_then_accepted_or_rejected(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    alpha, beta = project.path / ALPHA, project.path / BETA
    before = {p: p.read_bytes() for p in (alpha, beta)}
    monkeypatch.setenv("ALPHA_SYSTEM", "You are alpha, and brief.")
    monkeypatch.setenv("BETA_SYSTEM", "You are beta, and brief.")
    result = project.runpytest_inprocess()
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*request 1 (openai.chat) system: system*.content: 'You are alpha.' ->"
            " 'You are alpha, and brief.'",
            "*pending: recordings/tests/test_agent/test_alpha.yaml.new holds the recording this"
            " run would make; accept or reject it with: headerlock review",
            "headerlock: 2 pending changes (recordings/tests/test_agent/test_alpha.yaml.new,"
            " recordings/tests/test_agent/test_beta.yaml.new); accept or reject with:"
            " headerlock review",
        ]
    )
    assert {p: p.read_bytes() for p in before} == before  # the recordings are untouched

    listed = review(project, "--list")
    assert listed.returncode == 1, listed.stderr
    assert listed.stdout.splitlines() == [
        f"{ALPHA.as_posix()}.new: changes {ALPHA.as_posix()} (wire, 2 requests)",
        f"{BETA.as_posix()}.new: changes {BETA.as_posix()} (wire, 2 requests)",
        "2 pending changes below recordings (keep them out of git: *.yaml.new in .gitignore)",
    ]

    accepted = review(project, "--accept", ALPHA.as_posix())  # a PATH may name the recording
    assert accepted.returncode == 0, accepted.stderr
    assert accepted.stdout == f"accepted {ALPHA.as_posix()}.new -> {ALPHA.as_posix()}\n"
    assert not (project.path / f"{ALPHA}.new").exists() and alpha.read_bytes() != before[alpha]
    rejected = review(project, "--reject", f"{BETA.as_posix()}.new")
    assert rejected.returncode == 0, rejected.stderr
    assert not (project.path / f"{BETA}.new").exists() and beta.read_bytes() == before[beta]

    monkeypatch.delenv("BETA_SYSTEM")
    result = project.runpytest_inprocess()
    result.assert_outcomes(passed=3)  # alpha's new prompt is the recording now
    result.stdout.fnmatch_lines(["headerlock: 3 recordings matched"])
    assert review(project, "--list").returncode == 0


def test_accepting_keeps_the_models_replies(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, model_server: ModelServer
) -> None:
    alpha = project.path / ALPHA
    old = load_wire_recording(alpha)
    hits = len(model_server.hits)
    monkeypatch.setenv("ALPHA_SYSTEM", "You are alpha, and brief.")
    project.runpytest_inprocess("tests/test_agent.py::test_alpha").assert_outcomes(failed=1)
    assert review(project, "--accept-all").returncode == 0
    new = load_wire_recording(alpha)
    assert [e.response for e in new.requests] == [e.response for e in old.requests]
    assert [e.system for e in new.requests] != [e.system for e in old.requests]
    assert len(model_server.hits) == hits  # taking the change cost no live request


def test_a_stale_pending_file_is_refused(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALPHA_SYSTEM", "changed")
    project.runpytest_inprocess("tests/test_agent.py::test_alpha").assert_outcomes(failed=1)
    monkeypatch.delenv("ALPHA_SYSTEM")
    project.runpytest_inprocess("--snapshot-update", "tests/test_agent.py::test_alpha")
    alpha = project.path / ALPHA
    alpha.write_text(alpha.read_text() + "\n")  # changed since the pending file was written
    refused = review(project, "--accept-all")
    assert refused.returncode == 1
    assert refused.stderr.startswith(f"headerlock: {ALPHA.as_posix()}.new: stale: ")
    assert (project.path / f"{ALPHA}.new").exists()
    assert "STALE" in review(project, "--list").stdout


def test_a_green_replay_removes_a_stale_pending_file_and_no_pending_writes_none(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pending = project.path / f"{ALPHA}.new"
    monkeypatch.setenv("ALPHA_SYSTEM", "changed")
    project.runpytest_inprocess("--headerlock-no-pending").assert_outcomes(passed=2, failed=1)
    assert not pending.exists()
    project.runpytest_inprocess().assert_outcomes(passed=2, failed=1)
    assert pending.exists()
    monkeypatch.delenv("ALPHA_SYSTEM")
    project.runpytest_inprocess().assert_outcomes(passed=3)
    assert not pending.exists()


def test_review_without_a_terminal_points_to_the_flags(project: pytest.Pytester) -> None:
    done = review(project)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "headerlock: review is interactive and needs a terminal; without one use --list,"
        " --accept PATH..., --accept-all, --reject PATH... or --reject-all"
    ]
    missing = review(project, "--accept", "recordings/nope.yaml")
    assert missing.returncode == 2
    assert missing.stderr == "headerlock: recordings/nope.yaml.new: no such pending file\n"


def _read_until(
    fd: int, wanted: bytes, seen: bytearray, count: int = 1, timeout: float = 30.0
) -> None:
    end = time.monotonic() + timeout
    while seen.count(wanted) < count:
        left = end - time.monotonic()
        assert left > 0, seen.decode(errors="replace")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                chunk = b""
            assert chunk, seen.decode(errors="replace")
            seen += chunk


def _review_in_a_terminal(cwd: Path, keys: list[tuple[bytes, int, bytes]], *, code: int = 0) -> str:
    """``headerlock review`` on a pseudo-terminal in ``cwd``: for each ``(prompt, count,
    key)`` wait for ``count`` prompts, then type the key (no Enter); then wait for the
    tally and exit ``code``. The screen, with plain line breaks."""
    leader, follower = os.openpty()
    process = subprocess.Popen(
        [HEADERLOCK, "review"],
        cwd=cwd,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        close_fds=True,
    )
    os.close(follower)
    seen = bytearray()
    try:
        for prompt, count, key in keys:
            _read_until(leader, prompt, seen, count=count)
            os.write(leader, key)
        _read_until(leader, b"not reviewed", seen)
        assert process.wait(timeout=30) == code
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)
    return seen.decode().replace("\r\n", "\n")


def test_an_interactive_review_in_a_terminal_accepts_one_and_rejects_another(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    alpha, beta = project.path / ALPHA, project.path / BETA
    old_beta = beta.read_bytes()
    monkeypatch.setenv("ALPHA_SYSTEM", "You are alpha, and brief.")
    monkeypatch.setenv("BETA_SYSTEM", "You are beta, and brief.")
    project.runpytest_inprocess().assert_outcomes(passed=1, failed=2)
    prompt = b"q quit > "
    screen = _review_in_a_terminal(project.path, [(prompt, 1, b"a"), (prompt, 2, b"r")])
    assert f"[1/2] {ALPHA.as_posix()}.new: changes {ALPHA.as_posix()}" in screen
    assert (
        "cacheable prefix: first differs at request 1 (openai.chat), segment system, byte" in screen
    )
    assert "-  - content: You are alpha.\n+  - content: You are alpha, and brief." in screen
    assert f"accepted: wrote {ALPHA.as_posix()}" in screen
    assert f"rejected: removed {BETA.as_posix()}.new" in screen
    assert "review: 1 accepted, 1 rejected, 0 skipped, 0 not reviewed" in screen
    assert (
        not (project.path / f"{ALPHA}.new").exists() and not (project.path / f"{BETA}.new").exists()
    )
    assert beta.read_bytes() == old_beta
    assert (
        load_wire_recording(alpha).requests[0].system[0]["content"] == "You are alpha, and brief."
    )


def test_record_new_records_only_the_test_without_a_recording(
    project: pytest.Pytester, model_server: ModelServer
) -> None:
    alpha, beta = project.path / ALPHA, project.path / BETA
    kept = alpha.read_bytes()
    beta.unlink()
    model_server.hits.clear()
    result = project.runpytest_inprocess("--headerlock-record=new")
    result.assert_outcomes(passed=3)
    systems = {h.json()["messages"][0]["content"] for h in model_server.hits}
    assert systems == {"You are beta."} and len(model_server.hits) == 2  # only beta went live
    assert beta.is_file() and alpha.read_bytes() == kept
    result.stdout.fnmatch_lines(
        [
            "headerlock: 1 recording written, 0 unchanged",
            f"headerlock:   new: {BETA.as_posix()}",
            "headerlock: 2 recordings matched",
        ]
    )
    # the ini option says the same; with nothing missing, nothing goes live
    project.makeini(INI + "headerlock_record = new\n")
    project.runpytest_inprocess().assert_outcomes(passed=3)
    assert len(model_server.hits) == 2
    beta.unlink()
    project.runpytest_inprocess("--headerlock-record=none").assert_outcomes(passed=2, errors=1)
    bad = project.runpytest_inprocess("--headerlock-record=sometimes")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR


def test_snapshot_update_names_the_recordings_it_changed(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALPHA_SYSTEM", "You are alpha, and brief.")
    result = project.runpytest_inprocess("--snapshot-update")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            "headerlock: 1 recording written, 2 unchanged",
            f"headerlock:   changed: {ALPHA.as_posix()}",
        ]
    )


def test_a_seed_that_changes_every_run_passes_with_its_ignore_rule(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    seeded = project.path / SEEDED
    assert [e.config["seed"] for e in load_wire_recording(seeded).requests] == ["<<ignored>>"] * 2
    for _ in range(2):
        project.runpytest_inprocess("tests/test_agent.py::test_seeded").assert_outcomes(passed=1)
    before = seeded.read_bytes()
    project.runpytest_inprocess("--snapshot-update").assert_outcomes(passed=3)
    assert seeded.read_bytes() == before  # a re-record does not churn
    monkeypatch.setenv("SEED_IGNORE", "config.seed,config.sede")
    result = project.runpytest_inprocess("tests/test_agent.py::test_seeded")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*recordings/tests/test_agent/test_seeded.yaml: ignore rule matches no request of"
            " the session: 'config.sede'; a misspelled path ignores nothing*"
        ]
    )


def test_an_ini_ignore_rule_no_test_used_is_reported(project: pytest.Pytester) -> None:
    project.makeini(INI + "headerlock_ignore = config.temperature messages[*].content\n")
    result = project.runpytest_inprocess("--snapshot-update")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            "headerlock: headerlock_ignore: 'config.temperature' matched no request of this"
            " session (a misspelled path ignores nothing)"
        ]
    )
    text = (project.path / ALPHA).read_text()
    assert "hi alpha" not in text and "<<ignored>>" in text


def _partial_pending(root: Path, server: ModelServer) -> Path:
    """``root/recordings/one.yaml`` (one request) and its partial pending file: the
    replay sent a second request nothing recorded could answer."""
    from headerlock.testing.wire.lock import lock

    (root / "pytest.ini").write_text("[pytest]\n")
    path = root / "recordings" / "one.yaml"
    path.parent.mkdir()
    server.script([{"text": "ok"}])
    ask = [{"role": "user", "content": "hi"}]
    client = openai.OpenAI(base_url=server.base_url, api_key="sk-test-0001", max_retries=0)
    with lock(path, mode="record"):
        client.chat.completions.create(model="gpt-test", messages=ask)  # type: ignore[arg-type]
    client = openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="sk-0001", max_retries=0)
    with pytest.raises(WireMismatch), lock(path, pending=True):  # noqa: PT012
        client.chat.completions.create(model="gpt-test", messages=ask)  # type: ignore[arg-type]
        with pytest.raises(openai.BadRequestError):
            client.chat.completions.create(model="gpt-test", messages=ask * 2)  # type: ignore[arg-type]
    assert read_pending(pending_path(path)).partial is not None
    return path


def test_a_partial_pending_file_is_refused_not_accepted(
    tmp_path: Path, model_server: ModelServer
) -> None:
    path = _partial_pending(tmp_path, model_server)
    before = path.read_bytes()
    shown = "recordings/one.yaml.new"
    listed = subprocess.run(
        [HEADERLOCK, "review", "--list"], cwd=tmp_path, capture_output=True, text=True
    )
    assert listed.returncode == 1
    assert listed.stdout.startswith(
        f"{shown}: changes recordings/one.yaml (wire, 1 request; PARTIAL, cannot be accepted:"
        " request 2 (openai.chat)"
    )
    for args in (["--accept", "recordings/one.yaml"], ["--accept-all"]):
        refused = subprocess.run(
            [HEADERLOCK, "review", *args], cwd=tmp_path, capture_output=True, text=True
        )
        assert refused.returncode == 1
        assert refused.stdout == ""
        assert len(refused.stderr.splitlines()) == 1
        assert refused.stderr.startswith(f"headerlock: {shown}: partial: request 2 (openai.chat)")
        assert "re-record that test instead" in refused.stderr
        assert path.read_bytes() == before and pending_path(path).is_file()
    screen = _review_in_a_terminal(tmp_path, [(b"q quit > ", 1, b"a")], code=1)  # refused
    assert f"  not accepted: {shown}: partial: request 2 (openai.chat)" in screen
    assert "review: 0 accepted, 0 rejected, 1 skipped, 0 not reviewed" in screen
    assert path.read_bytes() == before and pending_path(path).is_file()


def test_review_without_a_recordings_directory_has_nothing_pending(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    for args in (["--list"], ["--accept-all"], ["--reject-all"]):
        done = subprocess.run(
            [HEADERLOCK, "review", *args], cwd=tmp_path, capture_output=True, text=True
        )
        assert (done.returncode, done.stderr) == (0, "")
        assert done.stdout.endswith(" pending changes below recordings (no such directory)\n")
