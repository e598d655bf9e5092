"""Record → replay round trips, pins and their guards, on a project in a temp dir."""

from __future__ import annotations

import asyncio
import re
import shutil
import textwrap
from pathlib import Path

import pytest

from headerlock.errors import MissingRecordingError, PinError, ReplayMismatch
from headerlock.testing.scenario.project import Project

BUNDLED = Path(__file__).parents[2] / "fixtures"

PLUGIN_MODULE = """
import asyncio, os
from headerlock.agent import ToolSchema

def _tool(name):
    async def plugin(ctx):
        await asyncio.sleep(float(os.environ.get(f"DELAY_{name.upper()}", "0")))
        description = os.environ.get(f"DESC_{name.upper()}", f"The {name} tool.")
        ctx.tools.register(ToolSchema(name, description, {"type": "object"}), lambda a: f"{name} ran")
    return plugin

alpha, bravo, charlie = _tool("alpha"), _tool("bravo"), _tool("charlie")
"""


def scenario_text(
    *, pin: bool = False, plugins: str = "alpha, bravo, charlie", order: str = ""
) -> str:
    return textwrap.dedent(
        f"""\
        pin: {str(pin).lower()}
        config: {{model: demo, persona: Test persona.{order}}}
        plugins: [{", ".join(f"{{module}}:{p.strip()}" for p in plugins.split(","))}]
        steps: [{{prompt: go}}]
        model: [{{tool_calls: [{{name: bravo}}]}}, {{text: done}}]
        """
    )


@pytest.fixture
def project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Project:
    module = f"hl_plugins_{request.node.name.replace('[', '_').replace(']', '_').replace('-', '_')}"
    (tmp_path / f"{module}.py").write_text(PLUGIN_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    fixtures = tmp_path / "fixtures"
    fixtures.mkdir()
    (fixtures / "pin-turn.yaml").write_text(scenario_text(pin=True).replace("{module}", module))
    (fixtures / "plain-turn.yaml").write_text(scenario_text().replace("{module}", module))
    ordered = scenario_text(order=", tool_order: [charlie, <unlisted-tools>]")
    (fixtures / "ordered-turn.yaml").write_text(ordered.replace("{module}", module))
    return Project(fixtures, tmp_path / "recordings")


def record_all(project: Project) -> dict[str, bytes]:
    for scenario in project.scenarios():
        asyncio.run(project.record(scenario))
    return {p.name: p.read_bytes() for p in sorted(project.recordings.iterdir())}


def replay_all(project: Project) -> dict[str, Exception | None]:
    outcome: dict[str, Exception | None] = {}
    for scenario in project.scenarios():
        try:
            _, output = asyncio.run(project.replay(scenario))
            asyncio.run(project.check_pin_guard(scenario, output))
            outcome[scenario.name] = None
        except (ReplayMismatch, PinError) as error:
            outcome[scenario.name] = error
    return outcome


def test_bundled_scenarios_round_trip(tmp_path: Path) -> None:
    shutil.copytree(BUNDLED, tmp_path / "fixtures")
    project = Project(tmp_path / "fixtures", tmp_path / "recordings")
    first = record_all(project)
    assert replay_all(project) == dict.fromkeys(project.scenario_names())
    asyncio.run(project.check_files())
    assert record_all(Project(project.fixtures, project.recordings)) == first, (
        "re-recording is stable"
    )
    committed = Path(__file__).parents[2] / "recordings"
    assert first == {name: (committed / name).read_bytes() for name in first}


def test_a_changed_registration_order_fails_nothing(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DELAY_ALPHA", "0.02")  # alpha registers last
    before = record_all(project)
    monkeypatch.setenv("DELAY_ALPHA", "0")
    monkeypatch.setenv("DELAY_CHARLIE", "0.02")  # now charlie registers last
    plain = project.fixtures / "plain-turn.yaml"
    text = plain.read_text()
    swapped = re.sub(
        r"(\w+):alpha, (\w+):bravo, (\w+):charlie", r"\3:charlie, \2:bravo, \1:alpha", text
    )
    assert swapped != text
    plain.write_text(swapped)
    fresh = Project(project.fixtures, project.recordings)
    assert replay_all(fresh) == dict.fromkeys(fresh.scenario_names())
    asyncio.run(fresh.check_files())
    assert record_all(fresh) == before


def test_a_changed_tool_description_fails_only_the_pin_and_the_guard(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    record_all(project)
    monkeypatch.setenv("DESC_BRAVO", "Bravo, now described differently.")
    fresh = Project(project.fixtures, project.recordings)
    outcome = replay_all(fresh)
    assert outcome["plain-turn"] is None and outcome["ordered-turn"] is None
    error = outcome["pin-turn"]
    assert isinstance(error, ReplayMismatch)
    message = str(error)
    assert (
        "events[3].data.header.tools.bravo.description: 'The bravo tool.' -> 'Bravo, now described differently.'"
        in message
    )
    assert "-      - description: The bravo tool." in message
    assert "re-record: headerlock record pin-turn" in message
    with pytest.raises(PinError, match="pin 'pin-turn' of class 'default' is stale"):
        asyncio.run(fresh.check_files())


def test_an_unpinned_tool_set_change_fails_the_pin_guard(project: Project) -> None:
    record_all(project)
    plain = project.fixtures / "plain-turn.yaml"
    plain.write_text(re.sub(r", \w+:charlie", "", plain.read_text()))
    fresh = Project(project.fixtures, project.recordings)
    scenario = fresh.scenario("plain-turn")
    _, output = asyncio.run(fresh.replay(scenario))  # <<tools>> hides the change from the recording
    with pytest.raises(PinError) as info:
        asyncio.run(fresh.check_pin_guard(scenario, output))
    assert (
        "plain-turn: request/header at seq 4 differs from the pinned header of class 'default' (pin-turn)"
        in str(info.value)
    )
    assert "tools.charlie: removed" in str(info.value)


def test_ordered_scenario_is_checked_in_its_own_order(project: Project) -> None:
    record_all(project)
    scenario = project.scenario("ordered-turn")
    _, output = asyncio.run(project.replay(scenario))
    asyncio.run(project.check_pin_guard(scenario, output))
    header = output.events[3]["data"]["header"]
    assert [t["name"] for t in header["tools"]] == ["charlie", "alpha", "bravo"]


def test_pin_count_guard(project: Project) -> None:
    record_all(project)
    plain = project.fixtures / "plain-turn.yaml"
    plain.write_text(plain.read_text().replace("pin: false", "pin: true"))
    with pytest.raises(
        PinError, match=r"header class 'default' has 2 pinned scenarios \(pin-turn, plain-turn\)"
    ):
        asyncio.run(Project(project.fixtures, project.recordings).check_files())
    for name in ("pin-turn", "plain-turn"):
        path = project.fixtures / f"{name}.yaml"
        path.write_text(path.read_text().replace("pin: true", "pin: false"))
    # no pin at all: the class is locked by recordings/headers.lock.yaml instead
    unpinned = Project(project.fixtures, project.recordings)
    for scenario in unpinned.scenarios():
        asyncio.run(unpinned.record(scenario))
    asyncio.run(Project(project.fixtures, project.recordings).check_files())
    assert (project.recordings / "headers.lock.yaml").is_file()


def test_missing_recording_names_the_command(project: Project) -> None:
    with pytest.raises(
        MissingRecordingError, match=r"record it with: headerlock record plain-turn"
    ):
        asyncio.run(project.replay(project.scenario("plain-turn")))
    assert not project.recordings.exists(), "nothing was created"


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (("model: demo", "model: drifted"), "config.model: 'demo' -> 'drifted'"),
        (("model: demo", "model: demo, temperature: 0.5"), "config.temperature: added 0.5"),
        ((", persona: Test persona.", ""), "system: removed 'Test persona.'"),
        (("plugins: [", "plugins_off: ["), "tools: removed"),
    ],
    ids=["model", "other-config-key", "empty-system", "empty-tools"],
)
def test_an_unpinned_header_that_drifted_from_its_pin_fails_the_guard(
    project: Project, edit: tuple[str, str], expected: str
) -> None:
    record_all(project)
    plain = project.fixtures / "plain-turn.yaml"
    text = plain.read_text()
    assert edit[0] in text
    text = text.replace(edit[0], edit[1], 1)
    if "plugins_off" in text:  # no tool plugins at all: an empty tool list
        text = "\n".join(line for line in text.splitlines() if "plugins_off" not in line) + "\n"
    plain.write_text(text)
    fresh = Project(project.fixtures, project.recordings)
    scenario = fresh.scenario("plain-turn")
    before = fresh.recording_path("plain-turn").read_bytes()
    with pytest.raises(PinError) as info:  # recording runs the class guard first
        asyncio.run(fresh.record(scenario))
    assert fresh.recording_path("plain-turn").read_bytes() == before  # nothing written
    message = str(info.value)
    assert "plain-turn: request/header at seq 4 differs from the pinned header" in message
    assert expected in message, message


def test_a_pin_with_an_empty_system_and_no_tools_is_a_pin(project: Project) -> None:
    for name in ("pin-turn", "plain-turn", "ordered-turn"):
        path = project.fixtures / f"{name}.yaml"
        lines = path.read_text().replace(", persona: Test persona.", "").splitlines()
        path.write_text("\n".join(line for line in lines if "plugins:" not in line) + "\n")
        path.write_text(path.read_text().replace(", tool_order: [charlie, <unlisted-tools>]", ""))
    record_all(project)
    fresh = Project(project.fixtures, project.recordings)
    assert replay_all(fresh) == dict.fromkeys(fresh.scenario_names())
    asyncio.run(fresh.check_files())
    plain = project.fixtures / "plain-turn.yaml"
    plain.write_text(plain.read_text().replace("model: demo", "model: demo, persona: Drift."))
    fresh = Project(project.fixtures, project.recordings)
    with pytest.raises(PinError, match=r"system: added 'Drift\.'"):
        asyncio.run(fresh.record(fresh.scenario("plain-turn")))
