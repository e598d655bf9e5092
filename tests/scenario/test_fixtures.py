"""Scenario fixtures: validation errors name the file, the key and the line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from headerlock.agent import TOOL_ORDER_REST, validate_tool_order
from headerlock.errors import ScenarioError, ToolOrderError
from headerlock.testing.scenario.fixtures import load_scenario, parse_scenario

GOOD = """\
app: spine
pin: false
config:
  model: demo
  persona: Be brief.
  tool_order: [todo_write, <unlisted-tools>]
plugins: ["headerlock.demo.tools:files", "headerlock.demo.tools:todos"]
steps:
  - prompt: Hi
model:
  - text: PONG
  - tool_calls: [{name: read, arguments: {path: notes.txt}}]
"""


def test_a_good_fixture(tmp_path: Path) -> None:
    scenario = parse_scenario(GOOD, tmp_path / "good.yaml")
    assert scenario.name == "good"
    assert scenario.tool_order == ["todo_write", TOOL_ORDER_REST]
    assert scenario.plugins == ("headerlock.demo.tools:files", "headerlock.demo.tools:todos")
    assert scenario.prompts == ("Hi",)
    assert scenario.model is not None and scenario.model[1].tool_calls[0].name == "read"


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            ("pin: false", "pin: maybe"),
            "bad.yaml:2: pin: Input should be a valid boolean (got 'maybe')",
        ),
        (("pin: false", "pinned: true"), "bad.yaml:2: pinned: unknown key 'pinned'"),
        (
            ("app: spine", "app: web"),
            "bad.yaml:1: app: unknown app 'web'; drivers: acp, spine, stdio, wire",
        ),
        (("  model: demo", "  modle: demo"), "bad.yaml:4: config.modle: unknown key 'modle'"),
        (
            ("  persona: Be brief.", "  persona: 3"),
            "bad.yaml:5: config.persona: Input should be a valid string (got 3)",
        ),
        (
            ('"headerlock.demo.tools:todos"', '"headerlock.demo.tools:nope"'),
            "bad.yaml:7: plugins.1: plugin 'headerlock.demo.tools:nope': 'headerlock.demo.tools' has no attribute 'nope'",
        ),
        (("  - prompt: Hi", "  - say: Hi"), "bad.yaml:9: steps.0.say: unknown key 'say'"),
        (("  - text: PONG", "  - txt: PONG"), "bad.yaml:11: model[0]: unknown key 'txt'"),
        (
            ("steps:\n  - prompt: Hi\n", "steps: []\n"),
            "bad.yaml:8: steps: List should have at least 1 item after validation, not 0 (got [])",
        ),
    ],
)
def test_errors_name_file_key_and_line(
    tmp_path: Path, edit: tuple[str, str], expected: str
) -> None:
    path = tmp_path / "bad.yaml"
    with pytest.raises(ScenarioError) as info:
        parse_scenario(GOOD.replace(*edit), path)
    assert str(info.value) == f"{tmp_path}/{expected}"


def test_missing_required_key(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="steps: missing required key"):
        parse_scenario("app: spine\n", tmp_path / "x.yaml")


@pytest.mark.parametrize(
    ("tool_order", "message"),
    [
        ("bash", "tool_order must be a list of tool names, got str"),
        ("[bash]", 'tool_order must contain the "<unlisted-tools>" rest entry'),
        ("[]", 'tool_order must contain the "<unlisted-tools>" rest entry'),
        (
            "[<unlisted-tools>, <unlisted-tools>]",
            'tool_order lists "<unlisted-tools>" more than once',
        ),
        ("[1, <unlisted-tools>]", r"tool_order[0] must be a tool name (string), got 1"),
    ],
)
def test_tool_order_shape_errors_are_scenario_errors_worded_as_the_tool_order_rules(
    tmp_path: Path, tool_order: str, message: str
) -> None:
    text = GOOD.replace("[todo_write, <unlisted-tools>]", tool_order)
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, tmp_path / "t.yaml")
    assert message in str(info.value)
    assert info.value.line == 6
    assert info.value.key == "config.tool_order"
    # A file error (path, key, line), worded exactly as the shared tool_order rules word it.
    assert not isinstance(info.value, ToolOrderError)
    with pytest.raises(ToolOrderError) as rule:
        validate_tool_order(yaml.safe_load(tool_order))
    assert info.value.reason == str(rule.value)


@pytest.mark.parametrize("name", ["UPPER", "a b", ".hidden", "x" * 101])
def test_bad_scenario_names(tmp_path: Path, name: str) -> None:
    with pytest.raises(ScenarioError, match="scenario name"):
        parse_scenario(GOOD, tmp_path / f"{name}.yaml")


def test_files_must_stay_in_the_workspace(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="must stay inside the workspace"):
        parse_scenario(GOOD + "files:\n  ../x.txt: hi\n", tmp_path / "f.yaml")


def test_empty_and_non_mapping_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    with pytest.raises(ScenarioError, match=r"empty\.yaml: file is empty"):
        load_scenario(empty)
    with pytest.raises(ScenarioError, match="a scenario is a mapping, got list"):
        parse_scenario("- a\n", tmp_path / "list.yaml")


def test_match_is_refused_where_replies_go_in_order_and_read_in_app_wire(tmp_path: Path) -> None:
    """A spine agent takes its replies in order: a `match:` there is an error at its line
    that says where it applies; an `app: wire` fixture keeps it on the reply."""
    text = GOOD.replace("  - text: PONG\n", "  - text: PONG\n    match: {user: Hi}\n")
    path = tmp_path / "m.yaml"
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, path)
    assert str(info.value) == (
        f"{path}:12: model[0].match: only applies to `app: wire` fixtures and wire scripts"
        " (script=, the headerlock_wire marker), where it says which of an agent's concurrent"
        " requests a reply answers; app 'spine' answers its requests in order"
    )
    path.write_text(text)
    with pytest.raises(ScenarioError, match=r"m\.yaml:12: model\[0\]\.match: only applies"):
        load_scenario(path)
    wire = "app: wire\nconfig: {entry: 'agent:run'}\nsteps: [{prompt: Hi}]\nmodel:\n"
    wire += "  - {text: PONG, match: {user: Hi, tool_result: read}}\n  - PANG\n"
    scenario = parse_scenario(wire, tmp_path / "w.yaml")
    assert scenario.model is not None
    assert [r.match for r in scenario.model] == [{"user": "Hi", "tool_result": "read"}, None]
