"""The output the docs show is what headerlock prints: each ``console`` or ``text``
block marked ``<!-- example: NAME -->`` is produced here by the run the page describes
and compared line by line (``fnmatch`` patterns only where the docs' numbers are a
run's own: timings, hashes of a tmp path)."""

from __future__ import annotations

import io
import os
import re
from dataclasses import replace
from pathlib import Path

import pytest

from headerlock.cli import main
from tests import docs

EXAMPLES = docs.examples("example")


def _shown(name: str) -> tuple[list[str], list[str]]:
    """An example's commands (``$ `` dropped) and the output lines after the first."""
    lines = EXAMPLES[name].splitlines()
    return [line[2:] for line in lines if line.startswith("$ ")], [
        line for line in lines if not line.startswith("$ ")
    ]


def _literal(line: str) -> str:
    """``line`` as an ``fnmatch`` pattern that matches only itself."""
    return re.sub(r"([*?\[])", r"[\1]", line)


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


# -- cache.md --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "file"), [("cache-cli", "agent.yaml"), ("cache-models", "models.yaml")]
)
def test_the_cache_reports_shown_are_what_headerlock_cache_prints(
    name: str, file: str, model_server: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("google.genai")
    from tests.wire.cache.corpus import Req, base, planted, record

    if name == "cache-cli":
        reqs = planted("tools-reordered", "openai.chat")
    else:  # the third request on gpt-4o-mini, then a new conversation on it
        reqs = base("openai.chat")
        reqs = [*reqs[:2], replace(reqs[2], model="gpt-4o-mini"), Req(model="gpt-4o-mini")]
    monkeypatch.chdir(tmp_path)
    record(model_server, "openai.chat", reqs, Path("recordings") / file)  # type: ignore[arg-type]
    (command,), output = _shown(name)
    assert command == f"headerlock cache recordings/{file}"
    code, out = _cli(*command.split()[1:])
    assert out.splitlines() == output
    assert code == 1  # a finding


# -- order.md, wire.md, pytest.md: what a check raises -----------------------------------


def test_the_script_race_shown_is_what_the_lock_raises(tmp_path: Path) -> None:
    openai = pytest.importorskip("openai")
    import threading

    from headerlock import wire
    from headerlock.wire import ScriptAmbiguityError

    client = openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="sk-test", max_retries=0)
    peru_sent, started, done = threading.Event(), threading.Barrier(2), threading.Barrier(2)

    def ask(question: str, after: threading.Event | None) -> None:
        started.wait(10)  # both threads live the whole time: they ran at the same time
        if after is not None:
            after.wait(10)
        messages = [{"role": "user", "content": question}]
        client.chat.completions.create(model="gpt-4.1-mini", messages=messages)
        peru_sent.set()
        done.wait(10)

    script = [{"text": "Lima"}, {"text": "Paris"}]
    threads = [
        threading.Thread(target=ask, args=("capital of Peru?", None)),
        threading.Thread(target=ask, args=("capital of France?", peru_sent)),
    ]
    record = wire.lock(tmp_path / "race.yaml", mode="record", script=script)

    def both() -> None:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    with pytest.raises(ScriptAmbiguityError) as caught, record:
        both()
    assert str(caught.value) == EXAMPLES["script-race"]
    assert not (tmp_path / "race.yaml").exists()


def test_the_other_http_mismatch_shown_is_what_a_replay_raises(
    model_server: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    openai = pytest.importorskip("openai")
    from headerlock import wire
    from headerlock.wire import WireMismatch
    from tests.model_server import ModelServer, json_answer

    assert isinstance(model_server, ModelServer)
    model_server.script([{"text": "ok"}])
    vector = {"object": "list", "model": "emb", "data": [{"index": 0, "embedding": [0.5]}]}
    model_server.route("/v1/embeddings", json_answer(vector))
    client = openai.OpenAI(base_url=model_server.base_url, api_key="sk-test", max_retries=0)

    def agent(text: str) -> None:
        client.embeddings.create(model="emb", input=text, encoding_format="float")
        client.chat.completions.create(
            model="gpt-4.1-mini", messages=[{"role": "user", "content": text}]
        )

    monkeypatch.chdir(tmp_path)
    path = "recordings/tests/test_agent/test_embed.yaml"
    with wire.lock(path, mode="record"):
        agent("the cat sat on the mat")
    with pytest.raises(WireMismatch) as caught, wire.lock(path):
        agent("the dog sat on the mat")
    shown = EXAMPLES["other-http-mismatch"].splitlines()
    assert str(caught.value).splitlines()[: len(shown)] == shown


# -- pytest.md: the class guard ----------------------------------------------------------

PINNED_CLASS = """
import openai
import pytest

client = openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="sk-test", max_retries=0)


def search(kind):
    params = {"type": "object", "properties": {"q": {"type": kind}}}
    return [{"type": "function", "function": {"name": "search", "parameters": params}}]


def ask(system, tools=None):
    messages = [{"role": "system", "content": system}, {"role": "user", "content": "go"}]
    extra = {} if tools is None else {"tools": tools}
    client.chat.completions.create(model="gpt-4.1-mini", messages=messages, **extra)


@pytest.mark.headerlock_pin
@pytest.mark.headerlock_wire(script=[{"text": "plan"}, {"text": "done"}])
def test_pinned(headerlock_wire):
    ask("You plan.")  # the planner, then the executor: the pin holds both headers
    ask("You execute.", search("string"))


@pytest.mark.headerlock_wire(script=[{"text": "done"}])
def test_execute(headerlock_wire):
    ask("You execute.", search("integer"))
"""


def test_the_class_guard_failure_shown_is_what_pytest_prints(pytester: pytest.Pytester) -> None:
    pytest.importorskip("openai")
    pytester.makeini("[pytest]\n")
    pytester.mkpydir("tests")
    (pytester.path / "tests" / "test_agent.py").write_text(PINNED_CLASS, encoding="utf-8")
    result = pytester.runpytest_inprocess("--snapshot-update", "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    shown = EXAMPLES["class-guard-failure"].splitlines()
    patterns = [_literal(line).replace("; ...", ";*") for line in shown]
    result.stdout.fnmatch_lines(patterns, consecutive=True)


# -- ci.md: a scenario that no longer matches ----------------------------------------------


def test_the_scenario_mismatch_shown_is_what_pytest_prints(pytester: pytest.Pytester) -> None:
    (ini,) = [b.code for b in docs.blocks() if b.lang == "ini" and "testpaths" in b.code]
    pytester.makeini(ini)  # the page's own configuration
    for folder in ("tests", "fixtures"):
        pytester.mkdir(folder)
    fixture = docs.ROOT / "fixtures" / "text-turn.yaml"
    (pytester.path / "fixtures" / "text-turn.yaml").write_bytes(fixture.read_bytes())
    pytester.runpytest_inprocess("--snapshot-update", "-p", "no:randomly").assert_outcomes(passed=2)
    recording = pytester.path / "recordings" / "text-turn.yaml"
    now = "Read a UTF-8 text file from the workspace."
    assert recording.read_text("utf-8").count(now) == 1
    recording.write_text(recording.read_text("utf-8").replace(now, "Read a file."), "utf-8")
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    result.assert_outcomes(failed=2)  # the scenario, and the guard of its stale pin
    shown = EXAMPLES["scenario-mismatch"].splitlines()
    result.stdout.fnmatch_lines([_literal(line) for line in shown], consecutive=True)


# -- review.md: a real session -------------------------------------------------------------


def _transcript(name: str) -> list[tuple[str, list[str]]]:
    """A console example as (command, the output lines shown after it)."""
    steps: list[tuple[str, list[str]]] = []
    for line in EXAMPLES[name].splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def _on_a_terminal(argv: list[str], cwd: Path, keys: str) -> str:
    """Run ``argv`` on a pseudo-terminal, typing each of ``keys`` at a prompt ending in
    ``> ``; everything it printed, with the terminal's line endings undone."""
    import select
    import subprocess
    import sys

    main_fd, child_fd = os.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", *argv], cwd=cwd, stdin=child_fd, stdout=child_fd, stderr=child_fd
    )
    os.close(child_fd)
    seen, typed = b"", 0
    try:
        while select.select([main_fd], [], [], 60)[0]:
            try:
                chunk = os.read(main_fd, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
            if seen.endswith(b"> ") and typed < len(keys):
                os.write(main_fd, keys[typed].encode())
                typed += 1
    finally:
        os.close(main_fd)
        assert process.wait(60) == 0, seen
    return seen.decode().replace("\r\n", "\n")


def test_the_review_session_shown_is_what_a_user_sees(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("openai")
    for name in ("CI", "BUILD_NUMBER"):  # on CI pytest prints whole summary lines
        monkeypatch.delenv(name, raising=False)
    pytester.mkpydir("tests")
    agent = "@pytest.mark.headerlock_pin\n@pytest.mark.headerlock_wire("
    test = EXAMPLES["pytest"].replace("@pytest.mark.headerlock_wire(", agent)
    path = pytester.path / "tests" / "test_agent.py"
    path.write_text(test, encoding="utf-8")
    pytester.runpytest_inprocess("--snapshot-update").assert_outcomes(passed=1)
    changed = '"You are terse. Answer in English."'
    path.write_text(test.replace('"You are terse."', changed), encoding="utf-8")
    for command, shown in _transcript("review-session"):
        argv = command.split()
        if argv[0] == "pytest":
            lines = pytester.runpytest_inprocess(*argv[1:]).stdout.lines
            patterns = [re.sub(r" in \d+\.\d+s$", " in *s", _literal(line)) for line in shown]
            assert fnmatch_all(lines, patterns), "\n".join(lines)
        elif argv[1:] == ["review"]:
            keys = "".join(line[-1] for line in shown if line.endswith("quit > " + line[-1:]))
            assert _on_a_terminal(["headerlock", "review"], pytester.path, keys) == "\n".join(
                [*shown, ""]
            )
        else:
            code, out = _cli(*argv[1:])
            assert out.splitlines() == shown
            assert code == (1 if "1 pending change" in out else 0)  # the page's exit codes


def fnmatch_all(lines: list[str], patterns: list[str]) -> bool:
    import fnmatch

    return len(lines) == len(patterns) and all(map(fnmatch.fnmatchcase, lines, patterns))


# -- order.md: headerlock flakes (fresh processes: slow) -----------------------------------

SET_AGENT = """
import httpx
import pytest

NAMES = ["search", "fetch", "summarize", "translate", "classify"]
TOOLS = {
    n: {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
    for n in NAMES
}


def agent(names):
    tools = [TOOLS[n] for n in set(names)]  # the flake: a set's order moves with the hash seed
    body = {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "hi"}],
            "tools": tools}
    httpx.post("http://127.0.0.1:9/v1/chat/completions", json=body).raise_for_status()


@pytest.mark.headerlock_wire(script=[{"text": "done"}])
def test_set_tools(headerlock_wire):
    agent(NAMES)
"""

SCENARIO = """\
config: {{model: demo, persona: Be brief.}}
plugins: [{plugins}]
steps: [{{prompt: go}}]
model: [{{text: ok}}]
"""


def _flakes(cwd: Path, command: str) -> tuple[int, str]:
    import subprocess
    import sys

    from headerlock.runtime.plugins import subprocess_env

    argv = [sys.executable, "-m", *command.split()]
    env = {
        **subprocess_env(),
        "PYTHONPATH": os.pathsep.join([str(docs.ROOT), str(docs.ROOT / "src")]),
    }
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    return done.returncode, done.stdout


@pytest.mark.slow
def test_the_flakes_report_on_pytest_tests_shown_is_what_it_prints(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.mkdir("tests")
    (pytester.path / "tests" / "test_agent.py").write_text(SET_AGENT, encoding="utf-8")
    command, shown = EXAMPLES["flakes-tests-command"], EXAMPLES["flakes-tests"]
    code, out = _flakes(pytester.path, command)
    assert out.splitlines() == shown.splitlines()
    assert code == 1  # a flake


@pytest.mark.slow
def test_the_flakes_report_on_scenarios_shown_is_what_it_prints(tmp_path: Path) -> None:
    clean = [
        "tests.flaky_plugins:alpha",
        "tests.flaky_plugins:bravo",
        "tests.flaky_plugins:charlie",
    ]
    (tmp_path / "fixtures").mkdir()
    for name, extra in (
        ("clean-turn", []),
        ("racy-turn", ["registration_order_listener"]),
        ("seeded-turn", ["hash_seed_section"]),
    ):
        plugins = ", ".join([*clean, *(f"tests.flaky_plugins:{p}" for p in extra)])
        (tmp_path / "fixtures" / f"{name}.yaml").write_text(SCENARIO.format(plugins=plugins))
    command, shown = EXAMPLES["flakes-scenarios-command"], EXAMPLES["flakes-scenarios"]
    code, out = _flakes(tmp_path, command)
    assert out.splitlines() == shown.splitlines()
    assert code == 1  # a flake
