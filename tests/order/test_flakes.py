"""``headerlock flakes`` in subprocesses, on clean and deliberately flaky scenarios."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def flakes(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "headerlock", "flakes", "--fixtures", str(tmp_path / "fixtures"),
         "--recordings", str(tmp_path / "recordings"), *args],
        capture_output=True, text=True, timeout=300, check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'src'}"},
    )  # fmt: skip


def write_scenario(tmp_path: Path, name: str, extra_plugin: str | None) -> None:
    plugins = [
        "tests.flaky_plugins:alpha",
        "tests.flaky_plugins:bravo",
        "tests.flaky_plugins:charlie",
    ]
    if extra_plugin:
        plugins.append(f"tests.flaky_plugins:{extra_plugin}")
    (tmp_path / "fixtures").mkdir(exist_ok=True)
    (tmp_path / "fixtures" / f"{name}.yaml").write_text(
        textwrap.dedent(
            f"""\
            config: {{model: demo, persona: Be brief.}}
            plugins: [{", ".join(plugins)}]
            steps: [{{prompt: go}}]
            model: [{{text: ok}}]
            """
        )
    )


def test_clean_scenarios_report_one_recording_each(tmp_path: Path) -> None:
    write_scenario(tmp_path, "clean", None)
    result = flakes(tmp_path, "--runs", "4")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "headerlock flakes: 1 scenarios x 4 runs in fresh processes"
    assert lines[1].split() == ["scenario", "runs", "distinct", "first", "differing", "path"]
    assert lines[3].split() == ["clean", "4", "1", "-"]
    assert "progress: 4/4 runs" in result.stderr


@pytest.mark.parametrize(
    ("plugin", "difference"),
    [
        ("hash_seed_section", "events[3].data.header.system: 'Be brief.\\n\\nAreas: "),
        (
            "registration_order_listener",
            "events[3].data.header.tools order: alpha, bravo, charlie -> ",
        ),
    ],
)
def test_flaky_scenarios_are_caught(tmp_path: Path, plugin: str, difference: str) -> None:
    write_scenario(tmp_path, "clean", None)
    write_scenario(tmp_path, "flaky", plugin)
    result = flakes(tmp_path, "--runs", "4")
    assert result.returncode == 1, result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines()[3:5]}
    assert rows["clean"].split()[:4] == ["clean", "4", "1", "-"]
    flaky = rows["flaky"].split(maxsplit=3)
    assert flaky[:2] == ["flaky", "4"]
    assert int(flaky[2]) >= 2
    assert flaky[3].startswith(difference)
    assert "flaky: " in result.stdout and "distinct recordings" in result.stdout
    assert "  #1: seed=0 order=alpha, bravo, charlie, " in result.stdout


def test_bad_input_exits_2(tmp_path: Path) -> None:
    write_scenario(tmp_path, "clean", None)
    result = flakes(tmp_path, "missing")
    assert result.returncode == 2
    assert "missing.yaml: no such fixture" in result.stderr


def test_every_run_starts_from_a_fresh_process_state(tmp_path: Path) -> None:
    # Two scenarios share a plugin module that counts its loads: one worker per hash
    # seed serves both, and each run must still see a fresh process (count 1).
    from headerlock.testing.order.flakes import hunt
    from headerlock.testing.scenario.project import Project

    write_scenario(tmp_path, "first", "counting_section")
    write_scenario(tmp_path, "second", "counting_section")
    project = Project(tmp_path / "fixtures", tmp_path / "recordings")
    reports = hunt(project, ["first", "second"], runs=2, jobs=1)
    for report in reports:
        assert len(report.runs) == 2
        for run in report.runs:
            assert "Loaded 1 time(s) in this process." in run.output
            assert run.output.startswith("a plugin writing to stdout\n")  # as a process prints it
        assert [run.seed for run in report.runs] == [0, 1]


def test_a_failing_run_names_its_scenario_and_seed(tmp_path: Path) -> None:
    write_scenario(tmp_path, "broken", "failing_plugin_module_missing")
    (tmp_path / "fixtures" / "broken.yaml").write_text(
        (tmp_path / "fixtures" / "broken.yaml")
        .read_text()
        .replace("tests.flaky_plugins:failing_plugin_module_missing", "tests.flaky_plugins:alpha")
    )
    (tmp_path / "recordings").mkdir()
    (tmp_path / "recordings" / "broken.yaml").write_text("not: a recording\n")
    result = flakes(tmp_path, "--runs", "2")
    assert result.returncode == 2
    assert "headerlock: run of 'broken' (seed 0) failed with exit 2: headerlock: " in result.stderr
