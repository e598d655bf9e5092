"""A header class with no pin records, and its header is locked in
``recordings/headers.lock.yaml``: a changed prompt or tool list fails the replay
naming the segment (issue 27)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs import examples
from tests.support import run_cli


def readme_project(tmp_path: Path) -> Path:
    """A project whose only fixture is the README's scenario example, verbatim."""
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "x.yaml").write_text(examples("example")["scenario"] + "\n")
    return tmp_path


def test_the_readme_scenario_records_and_replays_with_its_header_locked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = readme_project(tmp_path)
    code, out = run_cli(project, capsys, "record")
    assert code == 0, out
    lock = (project / "recordings" / "headers.lock.yaml").read_text()
    assert "You are a terse assistant." in lock and "name: todo_write" in lock
    recording = (project / "recordings" / "x.yaml").read_text()
    assert "<<system>>" in recording and "terse" not in recording
    assert "\nheaders:\n- " in recording
    code, out = run_cli(project, capsys, "replay")
    assert code == 0, out
    before = lock
    code, out = run_cli(project, capsys, "record")  # re-recording changes nothing
    assert code == 0, out
    assert (project / "recordings" / "headers.lock.yaml").read_text() == before


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        ((("terse", "brief"),), "system: 'You are a terse assistant."),
        (
            (("[todo_write, <unlisted-tools>, read]", "[read, <unlisted-tools>, todo_write]"),),
            "tool_order",
        ),
        ((("model: demo", "model: demo2"),), "config.model: 'demo' -> 'demo2'"),
        (
            ((', "headerlock.demo.tools:todos"', ""), ("[todo_write, <unlisted", "[<unlisted")),
            "tools.todo_write: removed",
        ),
    ],
    ids=["persona", "tool-order", "model", "tool-removed"],
)
def test_a_changed_header_fails_the_replay_naming_the_segment(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    edit: tuple[tuple[str, str], ...],
    expected: str,
) -> None:
    project = readme_project(tmp_path)
    assert run_cli(project, capsys, "record")[0] == 0
    fixture = project / "fixtures" / "x.yaml"
    text = fixture.read_text()
    for old, new in edit:
        assert old in text
        text = text.replace(old, new)
    fixture.write_text(text)
    recording = (project / "recordings" / "x.yaml").read_bytes()
    code, out = run_cli(project, capsys, "replay")
    assert code == 1, out
    assert "its header no longer matches the one locked in" in out, out
    assert "headers.lock.yaml" in out
    assert expected in out, out
    assert (project / "recordings" / "x.yaml").read_bytes() == recording, "nothing rewritten"


def test_a_hand_edited_lock_is_refused_by_the_guards(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = readme_project(tmp_path)
    assert run_cli(project, capsys, "record")[0] == 0
    lock = project / "recordings" / "headers.lock.yaml"
    lock.write_text(lock.read_text().replace("terse", "brief"))
    code, out = run_cli(project, capsys, "replay")
    assert code != 0, out
    assert "headers.lock.yaml" in out and "does not match its id" in out, out


def test_pytest_fixture_items_lock_and_check_the_header(pytester: pytest.Pytester) -> None:
    import headerlock.testing.plugin.items  # noqa: F401  (imported once, see test_pytest_plugin)

    pytester.makeini(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
        "testpaths = fixtures\naddopts = -p no:randomly\n"
    )
    readme_project(pytester.path)
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=2)  # the scenario, the guards
    assert (pytester.path / "recordings" / "headers.lock.yaml").is_file()
    pytester.runpytest().assert_outcomes(passed=2)
    fixture = pytester.path / "fixtures" / "x.yaml"
    fixture.write_text(fixture.read_text().replace("terse", "brief"))
    result = pytester.runpytest()
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        ["*its header no longer matches the one locked in*", "*system: 'You are a terse*"]
    )
