"""One record vocabulary (issue 26 item 2) and the marker's keywords as ``lock()``'s
(item 3): ``none | new | all`` (aliases ``replay``, ``record``) on ``lock(mode=...)``,
the ``headerlock_wire`` marker's ``mode=``, ``--headerlock-record``, the ini key
``headerlock_record`` and ``headerlock record --record``; a bad name or keyword is one
line, from any of them, naming where, the keyword and what is valid."""

from __future__ import annotations

from pathlib import Path

import openai  # noqa: F401  (loaded once here: the in-process runs reuse it)
import pytest

from headerlock.errors import ConfigError
from headerlock.testing.plugin.options import record_mode_option as option_mode
from headerlock.testing.wire.lock import lock
from headerlock.testing.wire.record_mode import ALIASES, RECORD_MODES, record_mode
from tests.wire.agents import CLOSED

VALID = "expected a record mode: none, new or all (aliases: replay = none, record = all)"

AGENT = f'''
import openai
import pytest


@pytest.mark.headerlock_wire({{marker}})
def test_agent(headerlock_wire):
    client = openai.OpenAI(base_url="{CLOSED}", api_key="sk-test-not-a-real-key-0001", max_retries=0)
    reply = client.chat.completions.create(model="gpt-test", messages=[{{{{"role": "user", "content": "x"}}}}])
    assert reply.choices[0].message.content == "hi"
'''
SCRIPT = 'script=[{"text": "hi"}]'
RECORDING = ("recordings", "tests", "test_agent", "test_agent.yaml")


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(
        "[pytest]\ntestpaths = tests\naddopts = --import-mode=importlib -p no:randomly\n"
    )
    (pytester.path / "tests").mkdir()
    return pytester


def write_test(project: pytest.Pytester, marker: str) -> None:
    (project.path / "tests" / "test_agent.py").write_text(AGENT.format(marker=marker))


@pytest.mark.parametrize("name", [*RECORD_MODES, *ALIASES])
def test_every_place_takes_the_same_names(name: str, tmp_path: Path) -> None:
    """The option's check and lock()'s are the one function: what one takes, all take."""
    mode = record_mode(name)
    assert option_mode(name) == mode
    action = {"none": "replay", "new": "new", "all": "record"}[mode]
    assert lock(tmp_path / "x.yaml", mode=name).mode == action  # type: ignore[arg-type]


def test_a_bad_mode_name_is_one_line_listing_the_valid_names_everywhere(
    project: pytest.Pytester, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ConfigError) as raised:
        lock(tmp_path / "x.yaml", mode="live")  # type: ignore[arg-type]
    assert str(raised.value) == f"lock(): mode = 'live': {VALID}"

    write_test(project, SCRIPT)
    option = project.runpytest_inprocess("--headerlock-record=live")
    assert option.ret == pytest.ExitCode.USAGE_ERROR
    option.stderr.fnmatch_lines([f"*argument --headerlock-record: 'live': {VALID}"])

    project.makeini("[pytest]\ntestpaths = tests\nheaderlock_record = live\n")
    ini = project.runpytest_inprocess()
    assert ini.ret == pytest.ExitCode.USAGE_ERROR
    ini.stderr.fnmatch_lines([f"*headerlock: headerlock_record = 'live': {VALID}"])

    project.makeini("[pytest]\ntestpaths = tests\n")
    write_test(project, f'mode="live", {SCRIPT}')
    marker = project.runpytest_inprocess()
    marker.assert_outcomes(errors=1)
    marker.stdout.fnmatch_lines(
        [
            "ConfigError: tests/test_agent.py::test_agent: @pytest.mark.headerlock_wire:"
            f" mode = 'live': {VALID}"
        ]
    )

    from headerlock.cli import main

    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        main(["record", "--record", "live"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.startswith(f"headerlock: --record: 'live': {VALID} (see")


def test_the_aliases_record_and_replay_and_snapshot_update_still_conflicts(
    project: pytest.Pytester,
) -> None:
    write_test(project, SCRIPT)
    recorded = project.runpytest_inprocess("--headerlock-record=record")
    recorded.assert_outcomes(passed=1)
    assert project.path.joinpath(*RECORDING).is_file()
    replayed = project.runpytest_inprocess("--headerlock-record=replay")
    replayed.assert_outcomes(passed=1)
    replayed.stdout.fnmatch_lines(["headerlock: 1 recording matched"])
    both = project.runpytest_inprocess("--snapshot-update", "--headerlock-record=replay")
    assert both.ret == pytest.ExitCode.USAGE_ERROR
    both.stderr.fnmatch_lines(["*--snapshot-update and --headerlock-record=none contradict*"])


def test_the_markers_mode_flows_into_lock_and_the_command_line_wins(
    project: pytest.Pytester,
) -> None:
    """``mode="new"`` on the marker records the missing recording in a plain run, then
    replays it; an explicit ``--headerlock-record=none`` overrides the marker."""
    write_test(project, f'mode="new", {SCRIPT}')
    path = project.path.joinpath(*RECORDING)
    explicit = project.runpytest_inprocess("--headerlock-record=none")
    explicit.assert_outcomes(errors=1)
    explicit.stdout.fnmatch_lines(["*MissingRecordingError: no wire recording at*"])
    assert not path.exists()
    first = project.runpytest_inprocess()
    first.assert_outcomes(passed=1)
    first.stdout.fnmatch_lines(["headerlock: 1 recording written, 0 unchanged"])
    assert path.is_file()
    again = project.runpytest_inprocess()
    again.assert_outcomes(passed=1)
    again.stdout.fnmatch_lines(["headerlock: 1 recording matched"])


@pytest.mark.parametrize(
    ("marker", "line"),
    [
        (
            f"scripts=[], {SCRIPT}",
            "unknown keyword 'scripts'; expected one of allow_hosts, header_class,"
            " http_headers, ignore, mode, record_errors, redact, redact_env, script",
        ),
        (
            f'allow_hosts="localhost", {SCRIPT}',
            "allow_hosts must be a list of host names, got 'localhost'",
        ),
        (f"record_errors=1, {SCRIPT}", "record_errors must be True or False, got 1"),
        (f"pin=True, {SCRIPT}", "pin is not set here; @pytest.mark.headerlock_pin sets it"),
        ('script="hi"', "script must be a list of replies (text, tool calls), got 'hi'"),
    ],
    ids=["unknown", "allow_hosts", "record_errors", "pin", "script"],
)
def test_a_bad_marker_keyword_is_one_line_naming_the_test_and_the_keyword(
    project: pytest.Pytester, marker: str, line: str
) -> None:
    write_test(project, marker)
    result = project.runpytest_inprocess("--snapshot-update")
    result.assert_outcomes(errors=1)
    where = "tests/test_agent.py::test_agent: @pytest.mark.headerlock_wire"
    result.stdout.fnmatch_lines([f"ConfigError: {where}: {line}"])
    out = result.stdout.str()
    assert "Traceback" not in out and "def test_agent" not in out
    assert not project.path.joinpath(*RECORDING).exists()


def test_lock_and_the_marker_say_the_same_of_a_bad_value(project: pytest.Pytester) -> None:
    """One check: ``lock()`` called directly names itself where the marker names the test."""
    with pytest.raises(ConfigError) as raised:
        lock(None, mode="all", allow_hosts="localhost")
    assert str(raised.value) == "lock(): allow_hosts must be a list of host names, got 'localhost'"
    with pytest.raises(ConfigError) as raised:
        lock(None, mode="all", ignore="config.seed")
    assert str(raised.value) == "lock(): ignore is a list of paths, got 'config.seed'"
