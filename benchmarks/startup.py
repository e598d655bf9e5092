"""Target 1: the start-up tax of the pytest plugin on an unrelated one-test run."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from benchmarks import profiles
from benchmarks.model import Check, Plan, measured, seconds
from benchmarks.procs import env_for, pytest_command, run
from benchmarks.projects import PYTEST_INI, startup_project
from benchmarks.stats import ratios, run_rounds
from benchmarks.wire_server import free_port, serving

MINIMAL = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
DEPENDENCIES = ("-p", "syrupy", "-p", "_hypothesis_pytestplugin")
"""The pytest plugins of headerlock's own dependencies (syrupy, Hypothesis)."""
PLUGIN = ("-p", "headerlock.testing.plugin.hooks")
GOAL = 1.10
WIRE_TEST = """
import os, httpx2, pytest

{marker}def test_one({fixture}):
    reply = httpx2.post(os.environ["BENCH_BASE_URL"] + "/chat/completions", json={{"n": 1}})
    assert reply.status_code == 200
"""
WIRE_ARMS = {
    "headerlock_wire": ((*DEPENDENCIES, *PLUGIN, "test_hl.py"), ("--snapshot-update",)),
    "pytest-recording": (("-p", "pytest_recording.plugin", "test_vcr.py"),
                         ("--record-mode=once",)),
    "cassetter": (("-p", "cassetter.pytest_plugin", "test_cst.py"), ("--record-mode=once",)),
}  # fmt: skip
"""Each arm's replay arguments and what records it (autoload off: only that plugin, and
headerlock's dependencies' plugins, which its record flag ``--snapshot-update`` is from)."""


def wire_startup(plan: Plan, root: Path) -> list[Check]:
    """Issue 22: a one-test run with the wire fixture in use vs pytest-recording's (and
    cassetter's): one recorded request replayed, only that recorder's plugin loaded."""
    project = root / "wire-startup"
    project.mkdir()
    (project / "pytest.ini").write_text(PYTEST_INI)
    (project / "test_hl.py").write_text(WIRE_TEST.format(marker="", fixture="headerlock_wire"))
    for name in ("vcr", "cst"):
        (project / f"test_{name}.py").write_text(
            WIRE_TEST.format(marker="@pytest.mark.vcr\n", fixture="")
        )
    arms = dict(WIRE_ARMS)
    if plan.quick:
        del arms["cassetter"]
    port = free_port()
    env = env_for(project, {**MINIMAL, "BENCH_BASE_URL": f"http://127.0.0.1:{port}/v1"})
    with serving(port=port):
        for args, record in arms.values():
            run(pytest_command(*args, *record, cache=True), project, env=env)

    def arm(name: str) -> float:
        return run(pytest_command(*arms[name][0], cache=True), project, env=env)[0]

    times = run_rounds(
        {name: partial(arm, name) for name in arms}, plan.startup_rounds, warmup=plan.warmup
    )
    checks = [measured(
        22, "22-startup", "one-test run replaying one request, the wire fixture in use vs "
        "pytest-recording's (only that plugin loaded)",
        ratios(times, "headerlock_wire", "pytest-recording"), limit=GOAL,
        a=f"headerlock_wire: {seconds(times['headerlock_wire'])}",
        b=f"pytest-recording: {seconds(times['pytest-recording'])}", rounds=times,
        note="PYTEST_DISABLE_PLUGIN_AUTOLOAD=1",
    )]  # fmt: skip
    if "cassetter" in times:
        checks.append(measured(
            22, "22-startup-cassetter", "the same, the wire fixture vs cassetter's marker",
            ratios(times, "headerlock_wire", "cassetter"), limit=None,
            a=f"headerlock_wire: {seconds(times['headerlock_wire'])}",
            b=f"cassetter: {seconds(times['cassetter'])}",
        ))  # fmt: skip
    return checks


def _commands() -> dict[str, tuple[list[str], dict[str, str]]]:
    return {
        "installed": (pytest_command("test_one.py", cache=True), {}),
        "no_headerlock": (pytest_command("-p", "no:headerlock", "test_one.py", cache=True), {}),
        "minimal": (pytest_command(*DEPENDENCIES, *PLUGIN, "test_one.py", cache=True), MINIMAL),
        "minimal_without": (pytest_command(*DEPENDENCIES, "test_one.py", cache=True), MINIMAL),
    }


def startup(plan: Plan, root: Path) -> list[Check]:
    """One-test pytest runs in fresh interpreters: with the plugin vs without, two setups."""
    project = startup_project(root / "startup")
    commands = {name: (cmd, env_for(project, extra)) for name, (cmd, extra) in _commands().items()}
    if plan.quick:  # the plugin set of this venv only
        del commands["minimal"], commands["minimal_without"]

    def arm(name: str) -> float:
        command, env = commands[name]
        return run(command, project, env=env)[0]

    times = run_rounds(
        {name: partial(arm, name) for name in commands}, plan.startup_rounds, warmup=plan.warmup
    )
    checks = [
        measured(
            1, "1a", "one-test pytest run, headerlock installed vs -p no:headerlock (this venv: "
            "10 pytest plugins)", ratios(times, "installed", "no_headerlock"), limit=GOAL,
            a=f"installed: {seconds(times['installed'])}",
            b=f"-p no:headerlock: {seconds(times['no_headerlock'])}",
            rounds=times,
        ),
    ]  # fmt: skip
    checks += wire_startup(plan, root)
    if "minimal" in times:
        checks.append(measured(
            1, "1b", "one-test pytest run, only headerlock's plugin and its dependencies' "
            "(syrupy, hypothesis) vs those without it", ratios(times, "minimal", "minimal_without"),
            limit=GOAL, a=f"with headerlock: {seconds(times['minimal'])}",
            b=f"without: {seconds(times['minimal_without'])}",
            note="PYTEST_DISABLE_PLUGIN_AUTOLOAD=1: a fresh project's plugin set",
        ))  # fmt: skip
    return checks


def profile(plan: Plan, root: Path) -> dict[str, str]:
    """What the plugin adds at start: the imports it pulls in, and its own functions."""
    project = root / "startup"
    commands = _commands()
    env = env_for(project)
    with_plugin = profiles.imports(commands["installed"][0], project, env)
    without = profiles.imports(commands["no_headerlock"][0], project, env)
    minimal_env = env_for(project, MINIMAL)
    minimal = profiles.imports(commands["minimal"][0], project, minimal_env)
    minimal_without = profiles.imports(commands["minimal_without"][0], project, minimal_env)
    args = commands["installed"][0][2:]
    return {
        "imports only the plugin pulls in (this venv; -X importtime, cumulative)": (
            profiles.import_diff(with_plugin, without)
        ),
        "imports only the plugin pulls in (minimal plugin set)": (
            profiles.import_diff(minimal, minimal_without)
        ),
        "cProfile of the one-test run": (
            profiles.profile_process(project, args, env, restrict=profiles.OURS)
        ),
    }
