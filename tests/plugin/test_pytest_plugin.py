"""The pytest plugin, driven through pytester."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

# Imported once here so that in-process pytester runs reuse them: re-importing PyYAML
# after a run dropped it from sys.modules leaves its C extension bound to the old module.
import headerlock.testing.plugin.items  # noqa: F401
from tests.model_server import ModelServer, chat_stream, text_chunks
from tests.support import RUN_APP_CONFTEST

ROOT = Path(__file__).parents[2]
INI_HEAD = "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
SCENARIOS = ["text-turn", "tool-turn", "ordered-turn", "error-turn"]


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI_HEAD + "testpaths = fixtures tests\naddopts = -p no:randomly\n")
    for folder in ("fixtures", "recordings"):
        (pytester.path / folder).mkdir()
        for name in SCENARIOS:
            shutil.copy(ROOT / folder / f"{name}.yaml", pytester.path / folder)
    return pytester


def test_scenarios_replay_as_items_with_a_guard(project: pytest.Pytester) -> None:
    result = project.runpytest("-v")
    result.assert_outcomes(passed=len(SCENARIOS) + 1)
    result.stdout.fnmatch_lines(
        [
            "fixtures/error-turn.yaml::replay PASSED*",
            "fixtures/text-turn.yaml::replay PASSED*",
            "fixtures::headerlock-guards PASSED*",
            f"headerlock: {len(SCENARIOS)} recordings matched",
        ]
    )


def test_missing_recording_fails_with_the_record_command_and_creates_nothing(
    project: pytest.Pytester,
) -> None:
    (project.path / "recordings" / "tool-turn.yaml").unlink()
    result = project.runpytest()
    result.assert_outcomes(passed=len(SCENARIOS), failed=1)
    result.stdout.fnmatch_lines(
        ["*scenario 'tool-turn' has no recording at recordings/tool-turn.yaml; record it with:"
         " headerlock record tool-turn   (or: pytest --snapshot-update fixtures/tool-turn.yaml)"]
    )  # fmt: skip
    assert not (project.path / "recordings" / "tool-turn.yaml").exists()


def test_snapshot_update_records_and_reports_unused(project: pytest.Pytester) -> None:
    shutil.rmtree(project.path / "recordings")
    (project.path / "recordings").mkdir()
    stale = project.path / "recordings" / "gone-turn.yaml"
    shutil.copy(ROOT / "recordings" / "tool-turn.yaml", stale)
    result = project.runpytest("--snapshot-update")
    result.assert_outcomes(passed=len(SCENARIOS) + 1)
    result.stdout.fnmatch_lines(
        [
            f"headerlock: {len(SCENARIOS)} recordings written, 0 unchanged",
            "headerlock: removed 1 unused recording: recordings/gone-turn.yaml",
        ]
    )
    assert not stale.exists()
    for name in SCENARIOS:
        written = (project.path / "recordings" / f"{name}.yaml").read_bytes()
        assert written == (ROOT / "recordings" / f"{name}.yaml").read_bytes()
    project.runpytest().assert_outcomes(passed=len(SCENARIOS) + 1)


def test_unused_recording_is_reported_without_update(project: pytest.Pytester) -> None:
    shutil.copy(
        ROOT / "recordings" / "tool-turn.yaml", project.path / "recordings" / "gone-turn.yaml"
    )
    result = project.runpytest()
    result.assert_outcomes(passed=len(SCENARIOS) + 1)
    result.stdout.fnmatch_lines(
        [
            "headerlock: 1 unused recording: recordings/gone-turn.yaml;"
            " remove with: pytest --snapshot-update"
        ]
    )
    assert result.ret == 1
    assert (project.path / "recordings" / "gone-turn.yaml").exists()
    project.runpytest("--snapshot-warn-unused").assert_outcomes(passed=len(SCENARIOS) + 1)
    assert project.runpytest("--snapshot-warn-unused").ret == 0


def test_update_never_deletes_the_recording_of_a_broken_fixture(project: pytest.Pytester) -> None:
    fixture = project.path / "fixtures" / "tool-turn.yaml"
    fixture.write_text(fixture.read_text() + "steps: [oops\n")
    result = project.runpytest("--snapshot-update")
    result.assert_outcomes(passed=len(SCENARIOS) - 1, failed=2)
    result.stdout.fnmatch_lines(["*fixtures/tool-turn.yaml:*: did not find expected ',' or ']'*"])
    assert (project.path / "recordings" / "tool-turn.yaml").exists()


def test_a_change_fails_with_a_readable_diff(project: pytest.Pytester) -> None:
    recording = project.path / "recordings" / "text-turn.yaml"
    recording.write_text(recording.read_text().replace("List the entries", "Show the entries"))
    result = project.runpytest()
    result.assert_outcomes(passed=len(SCENARIOS) - 1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*scenario 'text-turn' no longer matches recordings/text-turn.yaml",
            "*events[[]3].data.header.tools.list.description: 'Show the entries of a workspace directory.'"
            " -> 'List the entries of a workspace directory.'",
            "*if the change is intended, re-record: headerlock record text-turn*",
            "*pin 'text-turn' of class 'default' is stale*",
        ]
    )


def test_tampered_recording_fails_clearly(project: pytest.Pytester) -> None:
    recording = project.path / "recordings" / "tool-turn.yaml"
    recording.write_text(recording.read_text().replace("version: 1", "version: 9"))
    result = project.runpytest()
    result.stdout.fnmatch_lines(
        ["*recordings/tool-turn.yaml: recording format version 9 is newer*"]
    )


def test_ini_options_choose_the_directories(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        INI_HEAD
        + "testpaths = scenarios\nheaderlock_fixtures = scenarios\nheaderlock_recordings = snaps\n"
    )
    for folder, target in (("fixtures", "scenarios"), ("recordings", "snaps")):
        (pytester.path / target).mkdir()
        shutil.copy(ROOT / folder / "text-turn.yaml", pytester.path / target)
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["scenarios/text-turn.yaml::replay PASSED*"])


RECORDER_TEST = """
import asyncio
import pytest
from headerlock.agent import ToolSchema
from headerlock.runtime.adapters.scripted import ScriptedAdapter
from headerlock.runtime.app import AgentApp

DESCRIPTION = "Read a file."


def tools(ctx):
    ctx.tools.register(ToolSchema("read", DESCRIPTION), lambda a: "text")
    ctx.tools.register(ToolSchema("bash", "Run a command."), lambda a: "ok")


def run_app():
    app = AgentApp({"model": "demo", "persona": "Be brief."}, plugins=[tools],
                   adapter=ScriptedAdapter([{"tool_calls": [{"name": "read"}]}, "done"]))
    async def go():
        async with app:
            await app.run_turn("hi")
    asyncio.run(go())
    return app


@pytest.mark.headerlock_pin
def test_pinned_agent(headerlock_recorder):
    headerlock_recorder.assert_match(run_app())


def test_plain_agent(headerlock_recorder):
    headerlock_recorder.assert_match(run_app())
"""


def test_recorder_fixture_and_pin_marker(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI_HEAD + "testpaths = tests\n")
    (pytester.path / "tests").mkdir()
    test_file = pytester.path / "tests" / "test_agent.py"
    test_file.write_text(RECORDER_TEST)
    result = pytester.runpytest("--snapshot-update")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["headerlock: 2 recordings written, 0 unchanged"])
    pinned = (pytester.path / "recordings/tests/test_agent/test_pinned_agent.yaml").read_text()
    plain = (pytester.path / "recordings/tests/test_agent/test_plain_agent.yaml").read_text()
    assert "description: Read a file." in pinned and "pinned: true" in pinned
    assert 'tools: "<<tools>>"' in plain and "Read a file." not in plain
    pytester.runpytest().assert_outcomes(passed=2)
    test_file.write_text(RECORDER_TEST.replace('"Read a file."', '"Read one file."'))
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*events[[]3].data.header.tools.read.description: 'Read a file.' -> 'Read one file.'*"]
    )


def test_a_recorder_test_marked_xfail_still_fails_when_its_recording_is_missing_or_differs(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini(INI_HEAD + "testpaths = tests\n")
    (pytester.path / "tests").mkdir()
    test_file = pytester.path / "tests" / "test_agent.py"
    marked = RECORDER_TEST.replace(
        "def test_plain_agent(", "@pytest.mark.xfail\ndef test_plain_agent("
    )
    test_file.write_text(marked)
    missing = pytester.runpytest("tests/test_agent.py::test_plain_agent")
    missing.assert_outcomes(failed=1)
    missing.stdout.fnmatch_lines(["*no recording at recordings/tests/test_agent/test_plain_agent*"])
    test_file.write_text(RECORDER_TEST)
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=2)
    test_file.write_text(marked.replace('{"model": "demo"', '{"model": "demo-2"'))
    pytester.runpytest("tests/test_agent.py::test_plain_agent").assert_outcomes(failed=1)


def test_live_recording_against_a_loopback_endpoint(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, model_server: ModelServer
) -> None:
    secret = "sk-live-sentinel-42"
    model_server.route("*/chat/completions", chat_stream(text_chunks("PONG")))
    monkeypatch.setenv("HEADERLOCK_BASE_URL", model_server.base_url)
    monkeypatch.setenv("HEADERLOCK_API_KEY", secret)
    result = project.runpytest("--snapshot-update", "--headerlock-live", "fixtures/text-turn.yaml")
    result.assert_outcomes(passed=1)
    written = (project.path / "recordings" / "text-turn.yaml").read_text()
    assert written == (ROOT / "recordings" / "text-turn.yaml").read_text()
    assert secret not in written
    assert model_server.hits[0].headers["authorization"] == f"Bearer {secret}"


@pytest.mark.slow
def test_xdist_replays_with_the_same_verdicts(project: pytest.Pytester) -> None:
    recording = project.path / "recordings" / "ordered-turn.yaml"
    recording.write_text(recording.read_text().replace("Planned two steps.", "Planned 2 steps."))
    serial = project.runpytest_subprocess()
    parallel = project.runpytest_subprocess("-n", "2")
    serial.assert_outcomes(passed=len(SCENARIOS), failed=1)
    parallel.assert_outcomes(passed=len(SCENARIOS), failed=1)
    parallel.stdout.fnmatch_lines(["FAILED fixtures/ordered-turn.yaml::replay*"])


FLAKY = """\
pin: true
config: {model: demo}
plugins: [tests.flaky_plugins:alpha, tests.flaky_plugins:bravo, tests.flaky_plugins:registration_order_listener]
steps: [{prompt: go}]
model: [{text: ok}]
"""


def test_permutations_option_passes_clean_and_fails_flaky_scenarios(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest("--headerlock-permutations=4")
    result.assert_outcomes(passed=len(SCENARIOS) + 1)
    flaky = project.path / "flaky"
    (flaky / "fixtures").mkdir(parents=True)
    (flaky / "fixtures" / "flaky-turn.yaml").write_text(FLAKY)
    (flaky / "pytest.ini").write_text(INI_HEAD + "testpaths = fixtures\n")
    result = project.runpytest(
        "--rootdir",
        str(flaky),
        "-c",
        str(flaky / "pytest.ini"),
        "--snapshot-update",
        str(flaky / "fixtures"),
    )
    result.assert_outcomes(passed=2)
    result = project.runpytest(
        "--rootdir",
        str(flaky),
        "-c",
        str(flaky / "pytest.ini"),
        "--headerlock-permutations=4",
        str(flaky / "fixtures"),
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*scenario 'flaky-turn': registration order changed the recorded bytes",
            "*first order:  alpha, bravo, registration_order_listener",
            "*second order: *",
            "*events[[]3].data.header.tools order: alpha, bravo -> bravo, alpha",
        ]
    )


NAMES_TEST = """
import pytest


def test_agent(headerlock_recorder, run_app):
    headerlock_recorder.assert_match(run_app("{flavour}"))


def test_Agent(headerlock_recorder, run_app):
    headerlock_recorder.assert_match(run_app("upper {flavour}"))


@pytest.mark.parametrize("word", ["a b", "a-b", "A-b"])
def test_word(headerlock_recorder, run_app, word):
    headerlock_recorder.assert_match(run_app(word + " {flavour}"))


class TestGroup:
    def test_agent(self, headerlock_recorder, run_app):
        headerlock_recorder.assert_match(run_app("class {flavour}"))


@pytest.mark.headerlock_name("Custom name")
def test_named(headerlock_recorder, run_app):
    headerlock_recorder.assert_match(run_app("named {flavour}"))
"""


def test_python_recordings_never_share_a_file(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        INI_HEAD + "testpaths = tests\naddopts = -p no:randomly --import-mode=importlib\n"
    )
    for package in ("tests/unit", "tests/e2e"):
        (pytester.path / package).mkdir(parents=True)
        flavour = package.rsplit("/", 1)[1]
        (pytester.path / package / "test_agent.py").write_text(
            NAMES_TEST.replace("{flavour}", flavour)
        )
    (pytester.path / "tests" / "conftest.py").write_text(RUN_APP_CONFTEST)
    result = pytester.runpytest("--snapshot-update")
    result.assert_outcomes(passed=14)
    recordings = pytester.path / "recordings"
    written = sorted(p.relative_to(recordings).as_posix() for p in recordings.rglob("*.yaml"))
    per_file = [
        "+custom%20name.yaml",
        "+test+group.test_agent.yaml",
        "test_+agent.yaml",
        "test_agent.yaml",
        "test_word%5b+a-b%5d.yaml",
        "test_word%5ba%20b%5d.yaml",
        "test_word%5ba-b%5d.yaml",
    ]
    assert written == [f"tests/{d}/test_agent/{n}" for d in ("e2e", "unit") for n in per_file]
    assert len({p.name.lower() for p in (recordings / "tests/unit/test_agent").iterdir()}) == 7
    texts = {p.read_text() for p in recordings.rglob("*.yaml")}
    assert len(texts) == 14  # every test kept its own recording
    pytester.runpytest().assert_outcomes(passed=14)


CLASH_TEST = """
import pytest


@pytest.mark.headerlock_name("shared")
def test_one(headerlock_recorder, run_app):
    headerlock_recorder.assert_match(run_app("one"))


@pytest.mark.headerlock_name("shared")
def test_two(headerlock_recorder, run_app):
    headerlock_recorder.assert_match(run_app("two"))
"""


def test_a_name_clash_is_an_error_never_an_overwrite(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI_HEAD + "testpaths = tests\naddopts = -p no:randomly\n")
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "conftest.py").write_text(RUN_APP_CONFTEST)
    (pytester.path / "tests" / "test_clash.py").write_text(CLASH_TEST)
    shared = pytester.path / "recordings" / "tests" / "test_clash" / "shared.yaml"
    shared.parent.mkdir(parents=True)
    shared.write_text("old bytes\n")
    result = pytester.runpytest("--snapshot-update")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*tests/test_clash.py::test_one and tests/test_clash.py::test_two would both write"
            " recordings/tests/test_clash/shared.yaml; give one of them another name with"
            " @pytest.mark.headerlock_name(...); nothing written",
        ]
    )
    assert shared.read_text() == "old bytes\n"
