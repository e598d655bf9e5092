"""Updates are transactions: a failed, stopped, narrowed or interrupted run never deletes
or overwrites a good recording (pytester, in a user's own project layout)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# Imported once here so that in-process pytester runs reuse them (see test_pytest_plugin).
import headerlock.testing.plugin.items  # noqa: F401
from tests.model_server import ModelServer, json_answer
from tests.support import RUN_APP_CONFTEST

ROOT = Path(__file__).parents[2]
INI_HEAD = "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
HEADERLOCK = str(Path(sys.executable).with_name("headerlock"))
SCENARIOS = ["text-turn", "tool-turn", "ordered-turn", "error-turn"]


AGENT_TESTS = """
import os
import pytest


def test_alpha(headerlock_recorder, run_app):
    headerlock_recorder.assert_match(run_app(os.environ.get("ALPHA_WORD", "alpha")))
    assert not os.environ.get("ALPHA_FAILS"), "alpha failed after assert_match"


@pytest.mark.slow
def test_beta(headerlock_recorder, run_app):
    headerlock_recorder.assert_match(run_app("beta"))


@pytest.mark.skipif(bool(os.environ.get("SKIP_GAMMA")), reason="skipped today")
def test_gamma(headerlock_recorder, run_app):
    headerlock_recorder.assert_match(run_app("gamma"))
"""

INI = INI_HEAD + "testpaths = fixtures tests\naddopts = -p no:randomly\nmarkers = slow\n"
ORPHANS = ("recordings/gone-turn.yaml", "recordings/tests/test_agent/test_gone.yaml")


@pytest.fixture(autouse=True)
def switches_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    """The switches the project's tests read start unset."""
    for name in ("ALPHA_WORD", "ALPHA_FAILS", "SKIP_GAMMA"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """fixtures/, recordings/ (all recorded), tests/ and an ini; plus two unused recordings."""
    pytester.makeini(INI)
    for folder in ("fixtures", "recordings"):
        (pytester.path / folder).mkdir()
        for name in SCENARIOS:
            shutil.copy(ROOT / folder / f"{name}.yaml", pytester.path / folder)
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "conftest.py").write_text(RUN_APP_CONFTEST)
    (pytester.path / "tests" / "test_agent.py").write_text(AGENT_TESTS)
    pytester.runpytest("--snapshot-update", "tests").assert_outcomes(passed=3)
    for orphan in ORPHANS:
        shutil.copy(pytester.path / "recordings/tests/test_agent/test_beta.yaml", orphan)
    return pytester


def files(project: pytest.Pytester) -> dict[str, bytes]:
    """Every file under recordings/, by path."""
    root = project.path / "recordings"
    return {p.relative_to(project.path).as_posix(): p.read_bytes() for p in root.rglob("*.yaml")}


def add_failing_scenario(project: pytest.Pytester) -> bytes:
    """``a-turn`` (collected first): its model script runs out. Returns its old recording."""
    fixture = (ROOT / "fixtures" / "tool-turn.yaml").read_text()
    fixture = fixture.replace("  - text: Your notes say to buy milk.\n", "")
    (project.path / "fixtures" / "a-turn.yaml").write_text(fixture)
    old = (ROOT / "recordings" / "tool-turn.yaml").read_bytes().replace(b"tool-turn", b"a-turn")
    (project.path / "recordings" / "a-turn.yaml").write_bytes(old)
    return old


def test_a_full_green_update_removes_the_unused_recordings(project: pytest.Pytester) -> None:
    before = files(project)
    result = project.runpytest("--snapshot-update")
    result.assert_outcomes(passed=len(SCENARIOS) + 1 + 3)
    result.stdout.fnmatch_lines(
        [
            "headerlock: 0 recordings written, 7 unchanged",
            "headerlock: removed 2 unused recordings: recordings/gone-turn.yaml,"
            " recordings/tests/test_agent/test_gone.yaml",
        ]
    )
    assert files(project) == {k: v for k, v in before.items() if k not in ORPHANS}


@pytest.mark.parametrize("stop", [[], ["-x"], ["--maxfail=1"]], ids=["all", "x", "maxfail"])
def test_a_failed_update_deletes_and_overwrites_nothing(
    project: pytest.Pytester, stop: list[str]
) -> None:
    old = add_failing_scenario(project)
    before = files(project)
    result = project.runpytest("--snapshot-update", *stop)
    assert result.ret == 1
    result.assert_outcomes(failed=1, passed=0 if stop else len(SCENARIOS) + 1 + 3)
    result.stdout.fnmatch_lines(
        [
            "*scenario 'a-turn' was not recorded: the model script ran out at turn 1, step 2:"
            " the run asked for reply 2, the script has 1",
            "*kept recordings/a-turn.yaml: this test failed, so its recording was not updated",
            "headerlock: kept recordings/a-turn.yaml: fixtures/a-turn.yaml::replay failed,"
            " so it was not updated",
            "headerlock: * 1 item failed (fixtures/a-turn.yaml::replay)",
        ]
    )
    assert files(project) == before
    assert (project.path / "recordings" / "a-turn.yaml").read_bytes() == old


def test_a_failing_live_endpoint_keeps_the_recording(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, model_server: ModelServer
) -> None:
    before = files(project)
    model_server.route("*/chat/completions", json_answer({"error": {"message": "bad key"}}, 401))
    monkeypatch.setenv("HEADERLOCK_BASE_URL", model_server.base_url)
    monkeypatch.setenv("HEADERLOCK_API_KEY", "sk-test")
    result = project.runpytest("--snapshot-update", "--headerlock-live", "fixtures/text-turn.yaml")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*scenario 'text-turn' was not recorded: the live model endpoint failed at turn 1,"
            " step 1: the model endpoint answered HTTP 401: bad key*",
            "*kept recordings/text-turn.yaml*",
        ]
    )
    assert files(project) == before


def test_a_failed_python_test_keeps_its_recording(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = files(project)
    monkeypatch.setenv("ALPHA_WORD", "changed")
    monkeypatch.setenv("ALPHA_FAILS", "1")
    result = project.runpytest("--snapshot-update", "tests")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*alpha failed after assert_match*",
            "*kept recordings/tests/test_agent/test_alpha.yaml: this test failed,"
            " so its recording was not updated",
        ]
    )
    assert files(project) == before
    monkeypatch.delenv("ALPHA_FAILS")
    project.runpytest("--snapshot-update", "tests").assert_outcomes(passed=3)
    after = files(project)
    assert (
        after["recordings/tests/test_agent/test_alpha.yaml"]
        != before["recordings/tests/test_agent/test_alpha.yaml"]
    )


RECORDER = "recordings/tests/test_agent/test_beta.yaml"


def test_record_new_records_a_recorder_test_only_when_its_recording_is_missing(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project.path / RECORDER).unlink()
    monkeypatch.setenv("ALPHA_WORD", "changed")  # alpha has a recording: replayed, not redone
    before = files(project)
    result = project.runpytest("--headerlock-record=new", "--headerlock-no-pending", "tests")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([f"headerlock:   new: {RECORDER}"])
    after = files(project)
    assert RECORDER in after and {k: after[k] for k in before} == before


def test_a_recorder_mismatch_is_pending_until_reviewed(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    alpha = project.path / "recordings/tests/test_agent/test_alpha.yaml"
    pending = alpha.with_name(alpha.name + ".new")
    before = alpha.read_bytes()
    monkeypatch.setenv("ALPHA_WORD", "changed")
    project.runpytest("--headerlock-no-pending", "tests").assert_outcomes(passed=2, failed=1)
    assert not pending.exists()
    result = project.runpytest("tests")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            f"*pending: {pending.relative_to(project.path).as_posix()} holds the recording"
            " this run would make; accept or reject it with: headerlock review",
            "headerlock: 1 pending change (recordings/tests/test_agent/test_alpha.yaml.new);"
            " accept or reject with: headerlock review",
        ]
    )
    assert alpha.read_bytes() == before and pending.is_file()
    monkeypatch.delenv("ALPHA_WORD")
    project.runpytest("tests").assert_outcomes(passed=3)
    assert not pending.exists()  # a green replay removed the stale pending file
    monkeypatch.setenv("ALPHA_WORD", "changed")
    project.runpytest("tests").assert_outcomes(passed=2, failed=1)
    accepted = subprocess.run(
        [HEADERLOCK, "review", "--accept-all"], cwd=project.path, capture_output=True, text=True
    )
    assert accepted.returncode == 0, accepted.stderr
    project.runpytest("tests").assert_outcomes(passed=3)


MANY = """
import os
import pytest


@pytest.mark.parametrize("n", range(12))
def test_many(headerlock_recorder, run_app, n):
    headerlock_recorder.assert_match(run_app(os.environ.get("ALPHA_WORD", "many")))
    assert not os.environ.get("ALPHA_FAILS"), "many failed after assert_match"
"""


def test_the_removed_and_kept_summary_lines_name_at_most_ten_paths(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    orphans = project.path / "recordings" / "tests" / "test_agent"
    for n in range(12):
        shutil.copy(orphans / "test_beta.yaml", orphans / f"test_orphan_{n:02}.yaml")
    result = project.runpytest("--snapshot-update")
    line = next(s for s in result.stdout.lines if s.startswith("headerlock: removed "))
    assert line.startswith("headerlock: removed 14 unused recordings: recordings/gone-turn.yaml,")
    assert line.count("recordings/") == 10 and line.endswith(", and 4 more")
    (project.path / "tests" / "test_many.py").write_text(MANY)
    project.runpytest("--snapshot-update", "tests/test_many.py").assert_outcomes(passed=12)
    monkeypatch.setenv("ALPHA_WORD", "changed")
    monkeypatch.setenv("ALPHA_FAILS", "1")
    result = project.runpytest("--snapshot-update", "tests/test_many.py")
    result.assert_outcomes(failed=12)
    kept = [s for s in result.stdout.lines if s.startswith("headerlock: kept ")]
    assert len(kept) == 10
    result.stdout.fnmatch_lines(
        [
            "headerlock: kept recordings/tests/test_many/test_many%5b0%5d.yaml:"
            " tests/test_many.py::test_many[[]0[]] failed, so it was not updated",
            "headerlock: and 2 more kept: their tests failed, so they were not updated",
        ]
    )


TEARDOWN_FAILS = """
import pytest


@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown broke")


def test_alpha(headerlock_recorder, run_app, broken_teardown):
    headerlock_recorder.assert_match(run_app("changed"))
"""


def test_a_teardown_error_keeps_the_recording(project: pytest.Pytester) -> None:
    before = files(project)
    (project.path / "tests" / "test_agent.py").write_text(TEARDOWN_FAILS)
    result = project.runpytest("--snapshot-update", "tests")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*teardown broke*"])
    assert files(project) == before


@pytest.mark.parametrize(
    "narrowing",
    [
        ["-k", "text or alpha"],
        ["-m", "not slow"],
        ["fixtures/text-turn.yaml", "tests/test_agent.py::test_alpha"],
        ["--deselect", "fixtures/tool-turn.yaml::replay"],
        ["fixtures"],
    ],
    ids=["k", "m", "node-ids", "deselect", "one-directory"],
)
def test_a_narrowed_update_removes_nothing(project: pytest.Pytester, narrowing: list[str]) -> None:
    before = files(project)
    result = project.runpytest("--snapshot-update", *narrowing)
    assert result.ret == 0
    if narrowing == ["fixtures"]:  # the fixtures ran whole: their orphan goes, not the tests'
        assert files(project) == {k: v for k, v in before.items() if k != ORPHANS[0]}
        return
    result.stdout.fnmatch_lines(["headerlock: * not selected (-k, -m, --deselect or node ids)"])
    assert files(project) == before


def test_last_failed_removes_nothing(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALPHA_FAILS", "1")
    project.runpytest().assert_outcomes(passed=len(SCENARIOS) + 1 + 2, failed=1)
    monkeypatch.delenv("ALPHA_FAILS")
    before = files(project)
    result = project.runpytest("--snapshot-update", "--lf")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["headerlock: no unused recording removed: --lf narrows the run"])
    assert files(project) == before


def test_a_skipped_test_keeps_its_recording(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKIP_GAMMA", "1")
    result = project.runpytest("--snapshot-update")
    result.assert_outcomes(passed=len(SCENARIOS) + 1 + 2, skipped=1)
    assert (project.path / "recordings/tests/test_agent/test_gamma.yaml").exists()
    assert not any((project.path / orphan).exists() for orphan in ORPHANS)


INTERRUPT = """
def test_zz_interrupt():
    raise KeyboardInterrupt
"""


def test_an_interrupted_update_removes_nothing(project: pytest.Pytester) -> None:
    (project.path / "tests" / "test_zz.py").write_text(INTERRUPT)
    before = files(project)
    result = project.runpytest_subprocess("--snapshot-update")  # Ctrl-C: not in-process
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["headerlock: *: the session was interrupted"])
    assert files(project) == before


def test_collect_only_removes_nothing(project: pytest.Pytester) -> None:
    before = files(project)
    project.runpytest("--snapshot-update", "--collect-only")
    assert files(project) == before


def test_an_ini_comment_is_an_error_not_a_silent_miss(project: pytest.Pytester) -> None:
    project.makeini(INI + "headerlock_fixtures = fixtures        # defaults\n")
    before = files(project)
    result = project.runpytest("--snapshot-update")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*headerlock_fixtures = 'fixtures        # defaults': ini values cannot carry inline"
            " comments; put the comment on a line of its own"
        ]
    )
    assert files(project) == before
    project.makeini(INI + "headerlock_fixtures = scenarios\n")
    result = project.runpytest("--snapshot-update")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*headerlock_fixtures = 'scenarios': no such directory*"])
    assert files(project) == before


def test_fixtures_that_were_not_collected_lose_no_recording(project: pytest.Pytester) -> None:
    project.makeini(INI.replace("testpaths = fixtures tests", "testpaths = tests"))
    before = files(project)
    result = project.runpytest("--snapshot-update")
    result.assert_outcomes(passed=3)
    assert files(project) == {k: v for k, v in before.items() if k != ORPHANS[1]}


@pytest.mark.slow
def test_parallel_update_writes_and_removes_once(project: pytest.Pytester) -> None:
    (project.path / "recordings" / "tool-turn.yaml").unlink()
    (project.path / "recordings/tests/test_agent/test_beta.yaml").unlink()
    before = files(project)
    result = project.runpytest_subprocess("-n", "2", "--snapshot-update")
    result.assert_outcomes(passed=len(SCENARIOS) + 1 + 3)
    result.stdout.fnmatch_lines(
        [
            "headerlock: 2 recordings written, 5 unchanged",
            "headerlock: removed 2 unused recordings: recordings/gone-turn.yaml,"
            " recordings/tests/test_agent/test_gone.yaml",
        ]
    )
    after = files(project)
    assert after["recordings/tool-turn.yaml"] == (ROOT / "recordings/tool-turn.yaml").read_bytes()
    assert set(after) == (set(before) - set(ORPHANS)) | {
        "recordings/tool-turn.yaml",
        "recordings/tests/test_agent/test_beta.yaml",
    }
    for orphan in ORPHANS:
        shutil.copy(project.path / "recordings/tests/test_agent/test_beta.yaml", orphan)
    add_failing_scenario(project)
    before = files(project)
    result = project.runpytest_subprocess("-n", "2", "--snapshot-update")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["headerlock: * 1 item failed (fixtures/a-turn.yaml::replay)"])
    assert files(project) == before


def _answers(*kinds: str) -> list[dict[str, object]]:
    return [
        {"type": kind, "data": {"turn": 1, "step": i + 1, "message": "boom"}}
        for i, kind in enumerate(kinds)
    ]


def test_a_recording_run_whose_model_failed_is_refused() -> None:
    from headerlock.errors import RecordingRunError
    from headerlock.runtime.adapters.scripted import Reply
    from headerlock.runtime.driver import ModelSource
    from headerlock.testing.scenario.run_check import check_recording_run, model_failure

    script = ModelSource(replies=(Reply("a"), Reply("b", error="scripted")))
    ok = _answers("assistant/message", "assistant/error")
    assert model_failure(script, ok) is None
    out = _answers("assistant/message", "assistant/error", "assistant/error")
    assert model_failure(script, out) == (
        "the model script ran out at turn 1, step 3: the run asked for reply 3, the script has 2"
    )
    early = _answers("assistant/error")
    assert model_failure(script, early) == "the model failed at turn 1, step 1: boom"
    live = ModelSource(live=True)
    assert model_failure(live, _answers("assistant/message")) is None
    assert model_failure(live, early) == "the live model endpoint failed at turn 1, step 1: boom"
    with pytest.raises(RecordingRunError, match="scenario 'x' was not recorded: the live"):
        check_recording_run("x", live, early)


def test_the_books_travel_between_workers() -> None:
    from headerlock.testing.plugin.ledger import Ledger, Space
    from headerlock.testing.plugin.unused import Outcome, session_problem

    one = Ledger(spaces={"m": Space("module", "tests/test_a", ["a", "b"])}, selected={"a", "b"})
    one.collected = {"a", "b"}
    one.claim("/r/a.yaml", "a")
    two = Ledger.from_data(one.to_data())
    assert two == one
    other = Ledger(spaces={"m": Space("module", "tests/test_a", ["a"])})
    two.merge(other)
    assert two.spaces["m"].items is None  # the workers disagree: not whole
    green = {"a": Outcome(finished=True), "b": Outcome(finished=True)}
    assert session_problem(one, green, exitstatus=0) is None
    assert session_problem(one, {"a": Outcome(finished=True)}, exitstatus=0) == (
        "1 selected item did not run to the end (b; -x, --maxfail or a stop)"
    )
    assert session_problem(one, green, exitstatus=0, lost_workers=["gw1: crashed"]) == (
        "a pytest-xdist worker went down (gw1: crashed)"
    )
    one.collected.add("c")
    assert session_problem(one, green, exitstatus=0) == (
        "1 collected item was not selected (-k, -m, --deselect or node ids)"
    )


def test_a_relative_recording_path_is_keyed_from_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from headerlock.testing.plugin.updates import _key

    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "a")
    monkeypatch.chdir(tmp_path / "a")
    assert _key(Path("x.yaml")) == str((tmp_path / "a" / "x.yaml").resolve())
    monkeypatch.chdir(tmp_path / "b")  # the same relative path, another file
    assert _key(Path("x.yaml")) == str((tmp_path / "b" / "x.yaml").resolve())
    monkeypatch.chdir(tmp_path / "link")  # through a link: the file it leads to
    assert _key(Path("x.yaml")) == str((tmp_path / "a" / "x.yaml").resolve())
