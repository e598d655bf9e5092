"""Guarded by default: an unpinned ``headerlock_wire`` test locks its header.

A user's project as the README's pytest section shows it (``tests/test_agent.py``, no
pin, no ini keys), its agents on the real ``openai`` and ``anthropic`` SDKs at the
loopback model server. ``--snapshot-update`` records each test and writes every
distinct header once to ``recordings/tests/test_agent/headers.lock.yaml``; a replay in
which one part of the header changed (an environment variable the agent reads) fails
naming the segment once, and a changed ``user-agent`` does not.
"""

from __future__ import annotations

import io
import os
from typing import Any

import anthropic  # noqa: F401  (imported once: in-process runs reuse the SDKs)
import openai  # noqa: F401
import pytest

import headerlock.testing.plugin.wire_fixture  # noqa: F401  (loaded once: in-process runs reuse it)
from headerlock.formats.header_lock import load_lock
from headerlock.formats.wire_recording import load_wire_recording
from tests.model_server import ModelServer

AGENT = """
import os

import anthropic
import openai

SYSTEM = "You are terse.\\nAnswer in one line."


def tools():
    listed = [
        {
            "type": "function",
            "function": {
                "name": "search",
                "description": os.environ.get("AGENT_DESCRIPTION", "Search the notes."),
                "parameters": {
                    "type": "object",
                    "properties": {"q": {"type": os.environ.get("AGENT_PARAM_TYPE", "string")}},
                },
            },
        }
    ]
    if os.environ.get("AGENT_EXTRA_TOOL"):
        listed.append({"type": "function", "function": {"name": "fetch", "parameters": {}}})
    return listed


def ask(prompt):
    client = openai.OpenAI(
        base_url=os.environ["AGENT_BASE_URL"],
        api_key="sk-test-not-a-real-key-0001",
        max_retries=0,
        default_headers={"user-agent": os.environ.get("AGENT_UA", "agent/1.0")},
        default_query={"api-version": os.environ.get("AGENT_API_VERSION", "2024-10-21")},
    )
    reply = client.chat.completions.create(
        model=os.environ.get("AGENT_MODEL", "gpt-test"),
        messages=[
            {"role": "system", "content": os.environ.get("AGENT_SYSTEM", SYSTEM)},
            {"role": "user", "content": prompt},
        ],
        tools=tools(),
    )
    return reply.choices[0].message.content


def ask_claude(prompt):
    client = anthropic.Anthropic(
        base_url=os.environ["AGENT_BASE_URL"].removesuffix("/v1"),
        api_key="sk-ant-test-not-a-real-key-0001",
        max_retries=0,
        default_headers={"anthropic-beta": os.environ.get("AGENT_BETA", "tools-2024-04-04")},
    )
    reply = client.messages.create(
        model="claude-test", max_tokens=64, system=SYSTEM,
        messages=[{"role": "user", "content": prompt}],
    )
    return reply.content[0].text
"""

TESTS = """
from agent import ask, ask_claude


def test_one(headerlock_wire):
    assert ask("one") == "ok"


def test_two(headerlock_wire):
    assert ask("two") == "ok"


def test_three(headerlock_wire):
    assert ask("three") == "ok"


def test_claude(headerlock_wire):
    assert ask_claude("hi") == "ok"
"""

INI = """[pytest]
pythonpath = tests
addopts = -p no:randomly -p no:cacheprovider
asyncio_default_fixture_loop_scope = function
"""

VARIABLES = (
    "AGENT_DESCRIPTION", "AGENT_PARAM_TYPE", "AGENT_EXTRA_TOOL", "AGENT_UA", "AGENT_API_VERSION",
    "AGENT_MODEL", "AGENT_SYSTEM", "AGENT_BETA",
)  # fmt: skip
LOCK = ("recordings", "tests", "test_agent", "headers.lock.yaml")


@pytest.fixture
def project(
    pytester: pytest.Pytester, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> pytest.Pytester:
    """The user's project, recorded: four unpinned tests, one header lock."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    pytester.makeini(INI)
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "agent.py").write_text(AGENT)
    (pytester.path / "tests" / "test_agent.py").write_text(TESTS)
    model_server.script([{"text": "ok"}] * 200)
    monkeypatch.setenv("AGENT_BASE_URL", model_server.base_url)
    if not _RECORDED:  # recorded once: every test starts from the same files
        result = pytester.runpytest_inprocess("--snapshot-update")
        assert result.ret == pytest.ExitCode.OK, result.stdout.str()
        for path in sorted((pytester.path / "recordings").rglob("*.yaml")):
            _RECORDED[path.relative_to(pytester.path).as_posix()] = path.read_bytes()
    for name, data in _RECORDED.items():
        (pytester.path / name).parent.mkdir(parents=True, exist_ok=True)
        (pytester.path / name).write_bytes(data)
    return pytester


_RECORDED: dict[str, bytes] = {}


def test_the_lock_holds_each_header_once_and_recordings_refer_to_it(
    project: pytest.Pytester,
) -> None:
    lock = load_lock(project.path.joinpath(*LOCK))
    assert len(lock.headers) == 2  # the openai agent's header (three tests) and claude's
    chat = next(h for h in lock.headers.values() if h["api"] == "openai.chat")
    assert chat["config"] == {"model": "gpt-test"}
    assert chat["query"] == {"api-version": "2024-10-21"}
    assert "http" not in chat  # user-agent and x-stainless-* are never locked
    claude = next(h for h in lock.headers.values() if h["api"] == "anthropic.messages")
    assert claude["http"]["anthropic-beta"] == "tools-2024-04-04"
    recording = load_wire_recording(project.path / "recordings/tests/test_agent/test_one.yaml")
    entry = recording.requests[0]
    assert entry.header in lock.headers and entry.system == "<<system>>"
    assert "model" not in entry.config  # in the header, once


def test_an_unchanged_replay_is_green_with_no_unchecked_line(project: pytest.Pytester) -> None:
    result = project.runpytest_inprocess()
    result.assert_outcomes(passed=4)
    assert "headerlock: unchecked" not in result.stdout.str()


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("AGENT_SYSTEM", "You are terse.\nAnswer in two lines.", ["system:", "*-Answer in one line.", "*+Answer in two lines."]),
        ("AGENT_DESCRIPTION", "Search every note.", ["tools: search changed: search.function.description: 'Search the notes.' -> 'Search every note.'"]),
        ("AGENT_PARAM_TYPE", "integer", ["tools: search changed: search.function.parameters.properties.q.type: 'string' -> 'integer'"]),
        ("AGENT_EXTRA_TOOL", "1", ["tools: added fetch"]),
        ("AGENT_MODEL", "gpt-test-2", ["config.model: 'gpt-test' -> 'gpt-test-2'"]),
        ("AGENT_API_VERSION", "2025-01-01", ["query*api-version*: '2024-10-21' -> '2025-01-01'"]),
    ],
)  # fmt: skip
def test_a_changed_header_fails_the_replay_naming_the_segment_once(
    project: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    value: str,
    expected: list[str],
) -> None:
    monkeypatch.setenv(variable, value)
    result = project.runpytest_inprocess("tests/test_agent.py::test_one")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*does not match the recording (1 difference):",
            "*header of request 1 (openai.chat) differs from the locked one (*):",
            *(f"*{line}" for line in expected),
        ]
    )
    assert "headerlock: unchecked" not in result.stdout.str()


def test_a_changed_anthropic_beta_header_fails_and_a_user_agent_does_not(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_UA", "agent/2.0")
    project.runpytest_inprocess().assert_outcomes(passed=4)
    monkeypatch.setenv("AGENT_BETA", "tools-2025-01-01")
    result = project.runpytest_inprocess("tests/test_agent.py::test_claude")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*header of request 1 (anthropic.messages) differs from the locked one (http; *):",
            "*http*anthropic-beta*: 'tools-2024-04-04' -> 'tools-2025-01-01'",
        ]
    )


def _texts(project: pytest.Pytester) -> str:
    files = sorted((project.path / "recordings").rglob("*"))
    return "\n".join(p.read_text() for p in files if p.is_file())


def test_a_new_prompt_shared_by_three_tests_is_written_once_and_review_accepts_it_once(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from headerlock.cli import main

    monkeypatch.setenv("AGENT_SYSTEM", "You are terse.\nAnswer in Esperanto.")
    result = project.runpytest_inprocess("tests/test_agent.py")
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines(
        [
            "headerlock: header changed: recordings/tests/test_agent/headers.lock.yaml: * ->"
            " * (system): 3 tests (tests/test_agent.py::test_one, tests/test_agent.py::test_three,"
            " tests/test_agent.py::test_two); accept it: headerlock review*"
        ]
    )
    directory = project.path / "recordings" / "tests" / "test_agent"
    pending = sorted(p.name for p in directory.glob("*.new"))
    assert pending == [
        "headers.lock.yaml.new", "test_one.yaml.new", "test_three.yaml.new", "test_two.yaml.new"
    ]  # fmt: skip
    assert _texts(project).count("Answer in Esperanto.") == 1  # the pending lock only
    old = (directory / "test_one.yaml").read_text().splitlines()
    new = (directory / "test_one.yaml.new").read_text().splitlines()[2:]  # after the comments
    assert [(a, b) for a, b in zip(old, new, strict=True) if a != b] == [
        (a, b) for a, b in zip(old, new, strict=True) if a.startswith("  header: ")
    ]  # the recordings' pending files differ only in their header ids
    monkeypatch.chdir(project.path)
    listed = io.StringIO()
    assert main(["review", "--list"], out=listed) == 1
    assert (
        "recordings/tests/test_agent/headers.lock.yaml.new: changes"
        " recordings/tests/test_agent/headers.lock.yaml (header lock, 3 headers)"
    ) in listed.getvalue()  # the old ones and the new one: its recordings refer to it
    assert main(["review", "--accept-all"], out=io.StringIO()) == 0
    project.runpytest_inprocess().assert_outcomes(passed=4)
    assert _texts(project).count("Answer in Esperanto.") == 1
    lock = load_lock(directory / "headers.lock.yaml")
    assert len(lock.headers) == 2  # the new one and the unchanged test's: the old one is gone


@pytest.mark.slow
def test_snapshot_update_writes_the_new_header_once_and_drops_the_old(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_SYSTEM", "You are terse.\nAnswer in Latin.")
    result = project.runpytest_inprocess("--snapshot-update", "-n", "2")
    result.assert_outcomes(passed=4)
    assert _texts(project).count("Answer in Latin.") == 1
    assert "Answer in one line." in _texts(project)  # claude's header keeps its own prompt
    lock = load_lock(project.path.joinpath(*LOCK))
    assert len(lock.headers) == 2  # the old openai header was dropped
    project.runpytest_inprocess().assert_outcomes(passed=4)


def test_a_failed_record_leaves_the_lock_as_it_was(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = project.path.joinpath(*LOCK)
    before = lock.read_bytes()
    monkeypatch.setenv("AGENT_SYSTEM", "You are terse.\nAnswer in Latin.")
    source = project.path / "tests" / "test_agent.py"
    source.write_text(TESTS.replace('ask("one") == "ok"', 'ask("one") == "not ok"'))
    result = project.runpytest_inprocess("--snapshot-update", "tests/test_agent.py::test_one")
    result.assert_outcomes(failed=1)
    assert lock.read_bytes() == before


LEGACY = """
from agent import ask


def test_old(headerlock_wire):
    assert ask("old") == "ok"
"""


def test_a_recording_from_before_header_locks_fails_with_the_command_that_adds_them(
    project: pytest.Pytester,
) -> None:
    from headerlock import wire

    (project.path / "tests" / "test_legacy.py").write_text(LEGACY)
    agent: dict[str, Any] = {}
    exec(AGENT, agent)  # the user's agent, as the legacy recording was made
    path = project.path / "recordings" / "tests" / "test_legacy" / "test_old.yaml"
    with wire.lock(path, mode="record", script=[{"text": "ok"}]):  # no header lock: old style
        agent["ask"]("old")
    assert "header:" not in path.read_text()
    result = project.runpytest_inprocess("tests/test_legacy.py")
    result.assert_outcomes(errors=1)  # as a missing recording: the test cannot start
    result.stdout.fnmatch_lines(
        [
            "*recordings/tests/test_legacy/test_old.yaml: the recording predates header locks"
            " (its requests keep no header id), so its system prompt and tools would go"
            " unchecked; add them with: pytest --snapshot-update tests/test_legacy.py::test_old"
        ]
    )
    project.runpytest_inprocess("--snapshot-update", "tests/test_legacy.py").assert_outcomes(
        passed=1
    )
    project.runpytest_inprocess("tests/test_legacy.py").assert_outcomes(passed=1)


def test_the_lock_follows_every_change_of_its_recordings(tmp_path: Any) -> None:
    """The ids each recording refers to are read once per version of the file (merging
    the lock after every test read every recording again: quadratic), and a replaced,
    edited, removed or added recording is read again."""
    from headerlock.formats.header_lock import references_in

    one, two = tmp_path / "one.yaml", tmp_path / "two.yaml"
    one.write_text('requests:\n- method: POST\n  header: "aaaaaaaaaaaa"\n', encoding="utf-8")
    assert references_in(tmp_path) == {"aaaaaaaaaaaa"}
    replaced = tmp_path / "one.yaml.tmp"
    replaced.write_text('requests:\n- method: POST\n  header: "bbbbbbbbbbbb"\n', encoding="utf-8")
    replaced.replace(one)  # as atomic writes do: a new file of the same size
    assert references_in(tmp_path) == {"bbbbbbbbbbbb"}
    with one.open("r+", encoding="utf-8") as edited:  # in place, same size
        edited.seek(len('requests:\n- method: POST\n  header: "'))
        edited.write("cccccccccccc")
    later = one.stat().st_mtime_ns + 1_000_000_000  # an edit a moment later (the clock
    os.utime(one, ns=(later, later))  # ticks coarser than this test runs)
    assert references_in(tmp_path) == {"cccccccccccc"}
    two.write_text('requests:\n- method: POST\n  header: "dddddddddddd"\n', encoding="utf-8")
    assert references_in(tmp_path) == {"cccccccccccc", "dddddddddddd"}
    one.unlink()
    assert references_in(tmp_path) == {"dddddddddddd"}


def _counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[str]:
    """Count the calls of ``module.name`` (each call's first argument, as text)."""
    calls: list[str] = []
    original = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(str(args[0]) if args else "")
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_an_update_reads_the_directory_once_and_locks_each_written_file_once(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 31: each test's update reads no other recording (merging after every test read
    the whole directory: quadratic) and takes one lock per file it writes; the headers no
    recording refers to any more still leave the lock, once the updates end."""
    from headerlock.formats import header_lock, write_lock

    scans = _counting(monkeypatch, header_lock, "references_in")
    locks = _counting(monkeypatch, write_lock, "recording_lock")
    monkeypatch.setenv("AGENT_SYSTEM", "You are terse.\nAnswer in Latin.")
    project.runpytest_inprocess("--snapshot-update").assert_outcomes(passed=4)
    assert len(scans) == 1  # at the end, not once per test
    written = [p for p in locks if not p.endswith("headers.lock.yaml")]
    assert len(written) == 3  # the three openai recordings; claude's is unchanged
    assert len(locks) - len(written) == 3 + 1  # each written with its headers, then the prune
    lock = load_lock(project.path.joinpath(*LOCK))
    assert len(lock.headers) == 2  # the old openai header was dropped
    assert _texts(project).count("Answer in Latin.") == 1
    project.runpytest_inprocess().assert_outcomes(passed=4)


def test_an_unchanged_update_takes_no_lock_per_test(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from headerlock.formats import write_lock

    before = project.path.joinpath(*LOCK).read_bytes()
    locks = _counting(monkeypatch, write_lock, "recording_lock")
    project.runpytest_inprocess("--snapshot-update").assert_outcomes(passed=4)
    assert len(locks) == 1  # the lock's prune once the updates end; no test wrote a file
    assert project.path.joinpath(*LOCK).read_bytes() == before


def test_a_lock_missing_a_header_gets_it_back_from_an_unchanged_recording(
    project: pytest.Pytester,
) -> None:
    lock = project.path.joinpath(*LOCK)
    before = lock.read_bytes()
    lock.unlink()
    project.runpytest_inprocess("--snapshot-update").assert_outcomes(passed=4)
    assert lock.read_bytes() == before


def test_an_update_whose_writes_all_fail_leaves_the_header_lock_as_it_was(
    project: pytest.Pytester,
) -> None:
    lock = project.path.joinpath(*LOCK)
    before = lock.read_bytes()
    recordings = [p for p in lock.parent.glob("*.yaml") if p != lock]
    assert recordings
    outside = [project.path / f"outside-{p.name}" for p in recordings]
    for path, target in zip(recordings, outside, strict=True):  # a link is not written through
        target.write_text("not a recording\n")
        path.unlink()
        path.symlink_to(target)
    result = project.runpytest_inprocess("--snapshot-update")
    assert result.ret != 0 and "is a symbolic link" in result.stdout.str()
    assert lock.read_bytes() == before  # its headers were not pruned by the failed update
    assert all(target.read_text() == "not a recording\n" for target in outside)
