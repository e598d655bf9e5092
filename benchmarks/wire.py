"""Target 2: wire replay of a 2-request OpenAI-SDK agent vs pytest-recording (vcrpy)."""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path

import headerlock
from benchmarks import profiles
from benchmarks.model import UNAVAILABLE, Check, Plan, measured, missing, seconds
from benchmarks.procs import env_for, pytest_command, pytest_timed, run
from benchmarks.projects import wire_project
from benchmarks.stats import ratios, run_rounds
from benchmarks.wire_server import serving

CLOSED = "http://127.0.0.1:9/v1"
"""Replays point the agent here: a request that leaks out fails its test."""
OWN_RECORDINGS = ("-o", "headerlock_recordings=scenario-recordings")
"""The ``app: wire`` scenarios keep their recordings apart from the fixture's."""
ARGS = {
    "headerlock_wire": ("tests/test_hl.py",),
    "vcrpy": ("tests/test_vcr.py", "--record-mode=none"),
    "app_wire": ("fixtures", *OWN_RECORDINGS),
}
WHAT = "wire replay, {n} tests of a 2-request OpenAI-SDK agent"


def fixture_available() -> bool:
    """Whether headerlock defines the ``headerlock_wire`` pytest fixture yet."""
    package = Path(headerlock.__file__).parent
    pattern = re.compile(r"def headerlock_wire\s*\(")
    return any(pattern.search(p.read_text(encoding="utf-8")) for p in package.rglob("*.py"))


def _record(project: Path, names: list[str]) -> None:
    """Record what the arms replay: cassettes and wire recordings against a local server."""
    with serving() as url:
        env = env_for(project, {"BENCH_BASE_URL": url})
        run(pytest_command("tests/test_vcr.py", "--record-mode=once"), project, env=env)
        if "headerlock_wire" in names:
            run(pytest_command("tests/test_hl.py", "--snapshot-update"), project, env=env)
    if "app_wire" in names:  # a scripted model: no server
        env = env_for(project, {"BENCH_BASE_URL": CLOSED})
        run(pytest_command("fixtures", "--snapshot-update", *OWN_RECORDINGS), project, env=env)


def wire(plan: Plan, root: Path) -> list[Check]:
    """Record once against a local server, then replay each way with the server gone."""
    project = root / "wire"
    n = plan.wire_tests
    wire_project(project, n)
    available = fixture_available()
    names = ["vcrpy", *(["headerlock_wire"] if available else [])]
    if not plan.quick or not available:
        names.append("app_wire")
    _record(project, names)
    env = env_for(project, {"BENCH_BASE_URL": CLOSED})
    session: dict[str, list[float]] = {name: [] for name in names}

    def arm(name: str) -> float:
        wall, inside = pytest_timed(project, *ARGS[name], env=env)
        session[name].append(inside)
        return wall

    times = run_rounds(
        {name: partial(arm, name) for name in names}, plan.rounds, warmup=plan.warmup
    )
    inside = {name: values[plan.warmup :] for name, values in session.items()}
    vcr = f"pytest-recording: {seconds(times['vcrpy'])}"
    checks: list[Check] = []
    if available:
        checks.append(measured(
            2, "2", f"{WHAT.format(n=n)}: headerlock_wire vs pytest-recording (whole run)",
            ratios(times, "headerlock_wire", "vcrpy"), limit=1.0,
            a=f"headerlock_wire: {seconds(times['headerlock_wire'])}", b=vcr,
            rounds={**times, **{f"{k}_session": v for k, v in inside.items()}},
        ))  # fmt: skip
    else:
        checks.append(missing(
            2, "2", f"{WHAT.format(n=n)}: headerlock_wire vs pytest-recording", "<= 1x",
            UNAVAILABLE, f"no headerlock_wire fixture in src/ yet; pytest-recording alone: "
            f"{seconds(times['vcrpy'])} for {n} tests",
        ))  # fmt: skip
    for name in ("headerlock_wire", "app_wire"):
        if name in inside:
            checks.append(measured(
                2, f"2-{name}", f"{WHAT.format(n=n)}: {name} vs pytest-recording, collection to"
                " session end (no start-up)", ratios(inside, name, "vcrpy"), limit=None,
                a=f"{name}: {seconds([t / n for t in inside[name]])}/test",
                b=f"pytest-recording: {seconds([t / n for t in inside['vcrpy']])}/test",
                note="context" + ("; app: wire is the scenario path (scripted model, session-log"
                                  " compare, guards)" if name == "app_wire" else ""),
            ))  # fmt: skip
    return checks


def profile(plan: Plan, root: Path) -> dict[str, str]:
    """cProfile of a headerlock replay run (the fixture when it exists, else app: wire)."""
    project = root / "wire"
    env = env_for(project, {"BENCH_BASE_URL": CLOSED})
    sections: dict[str, str] = {}
    for name in ("headerlock_wire", "app_wire", "vcrpy"):
        if name == "headerlock_wire" and not fixture_available():
            continue
        args = pytest_command(*ARGS[name])[2:]
        ours = None if name == "vcrpy" else profiles.OURS
        sections[f"cProfile of the {name} replay run"] = profiles.profile_process(
            project, args, env, restrict=ours
        )
    return sections
