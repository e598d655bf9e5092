"""Issue 22, row 1: 1,000 tests x 2 chat requests, whole pytest runs, four ways.

headerlock_wire, pytest-recording (vcrpy), cassetter and the floor (no recorder:
the agent's client gets the server's bytes from a MockTransport); the record
cost and bytes on disk of each recorder; and ``pytest -n 2`` on the
headerlock_wire tests against the serial run.
"""

from __future__ import annotations

import re
import shutil
from functools import partial
from pathlib import Path

import headerlock
from benchmarks import profiles
from benchmarks.model import UNAVAILABLE, Check, Plan, measured, missing, seconds
from benchmarks.procs import CASSETTER, env_for, pytest_command, pytest_timed, run
from benchmarks.projects import wire_project
from benchmarks.stats import ratios, run_rounds
from benchmarks.wire_server import free_port, serving

CLOSED = "http://127.0.0.1:9/v1"
"""The ``app: wire`` scenarios' agent points here (a scripted model answers)."""
OWN_RECORDINGS = ("-o", "headerlock_recordings=scenario-recordings")
"""The ``app: wire`` scenarios keep their recordings apart from the fixture's."""
ARGS = {
    "headerlock_wire": ("tests/test_hl.py",),
    "vcrpy": ("tests/test_vcr.py", "--record-mode=none"),
    "cassetter": (*CASSETTER, "cst", "--record-mode=none"),
    "floor": ("floor",),
    "xdist": ("-n", "2", "tests/test_hl.py"),
    "app_wire": ("fixtures", *OWN_RECORDINGS),
}
RECORD = {
    "headerlock_wire": ("tests/test_hl.py", "--snapshot-update"),
    "vcrpy": ("tests/test_vcr.py", "--record-mode=all"),
    "cassetter": (*CASSETTER, "cst", "--record-mode=all"),
}
FILES = {"headerlock_wire": "recordings", "vcrpy": "tests/cassettes", "cassetter": "cst/cassettes"}
NAMES = {"headerlock_wire": "headerlock_wire", "vcrpy": "pytest-recording",
         "cassetter": "cassetter", "floor": "floor", "xdist": "headerlock_wire -n 2"}  # fmt: skip
WHAT = "wire replay, {n} tests x 2 chat requests (OpenAI SDK), whole pytest run"
URL_FILE = ".bench-url"
FASTER, FLOOR, RECORD_GOAL, BYTES, XDIST = 0.90, 1.15, 1.0, 1.0, 1.5


def fixture_available() -> bool:
    """Whether headerlock defines the ``headerlock_wire`` pytest fixture yet."""
    package = Path(headerlock.__file__).parent
    pattern = re.compile(r"def headerlock_wire\s*\(")
    return any(pattern.search(p.read_text(encoding="utf-8")) for p in package.rglob("*.py"))


def _bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _faster(times: dict[str, list[float]]) -> list[float]:
    return [min(v, c) for v, c in zip(times["vcrpy"], times["cassetter"], strict=True)]


def _over(times: dict[str, list[float]], a: str, b: list[float]) -> list[float]:
    return [x / y for x, y in zip(times[a], b, strict=True)]


def wire(plan: Plan, root: Path) -> list[Check]:
    """Record each way against a local server (timed), then replay with the server gone."""
    project = root / "wire"
    n = plan.wire_tests
    wire_project(project, n)
    if not fixture_available():
        return [missing(22, "22-run-peer", WHAT.format(n=n), "<= 0.9x", UNAVAILABLE,
                        "no headerlock_wire fixture in src/ yet")]  # fmt: skip
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"  # replays keep it (cassetter matches the URI)
    (project / URL_FILE).write_text(url, encoding="utf-8")
    env = env_for(project, {"BENCH_BASE_URL": url})

    def record(name: str) -> float:
        shutil.rmtree(project / FILES[name], ignore_errors=True)
        with serving(port=port):
            return run(pytest_command(*RECORD[name]), project, env=env)[0]

    recorded = run_rounds({name: partial(record, name) for name in RECORD},
                          1 if plan.quick else 2, warmup=0)  # fmt: skip
    disk = {name: _bytes(project / folder) for name, folder in FILES.items()}
    floor_env = {**env, "BENCH_FLOOR": "1"}

    def arm(name: str) -> float:
        return pytest_timed(project, *ARGS[name], env=floor_env if name == "floor" else env)[0]

    names = ["headerlock_wire", "vcrpy", "cassetter", "floor", *([] if plan.quick else ["xdist"])]
    times = run_rounds({name: partial(arm, name) for name in names}, plan.process_rounds,
                       warmup=plan.warmup, budget=plan.budget)  # fmt: skip
    what = WHAT.format(n=n)
    shown = {name: f"{NAMES[name]}: {seconds(times[name])}" for name in names}
    xdist = [] if plan.quick else [measured(
        22, "22-xdist", f"pytest -n 2 vs serial, {n} headerlock_wire tests (speed-up)",
        ratios(times, "headerlock_wire", "xdist"), limit=XDIST, at_most=False,
        a=shown["xdist"], b=f"serial: {seconds(times['headerlock_wire'])}",
    )]  # fmt: skip
    checks = [measured(
        22, "22-run-peer", f"{what}: headerlock_wire / the faster peer",
        _over(times, "headerlock_wire", _faster(times)), limit=FASTER, a=shown["headerlock_wire"],
        b=f"{shown['vcrpy']}, {shown['cassetter']}", rounds=times,
    )]  # fmt: skip
    for peer in ("vcrpy", "cassetter"):
        checks.append(measured(22, f"22-run-{peer}", f"{what}: headerlock_wire / {NAMES[peer]}",
                               ratios(times, "headerlock_wire", peer), limit=None,
                               a=shown["headerlock_wire"], b=shown[peer]))  # fmt: skip
    for name in ("headerlock_wire", "vcrpy", "cassetter"):
        checks.append(measured(
            22, f"22-run-floor-{name}", f"{what}: {NAMES[name]} / the floor",
            ratios(times, name, "floor"), limit=FLOOR if name == "headerlock_wire" else None,
            a=shown[name], b=f"floor (MockTransport, no recorder): {seconds(times['floor'])}",
        ))  # fmt: skip
    checks += [
        measured(22, "22-run-record", f"{what}: record cost, headerlock_wire / the faster peer",
                 _over(recorded, "headerlock_wire", _faster(recorded)), limit=RECORD_GOAL,
                 a=f"headerlock_wire: {seconds(recorded['headerlock_wire'])}",
                 b=f"pytest-recording {seconds(recorded['vcrpy'])}, cassetter "
                 f"{seconds(recorded['cassetter'])} (whole recording runs)", rounds=recorded),
        measured(22, "22-run-bytes", f"{what}: bytes on disk, headerlock_wire / the smaller peer",
                 [disk["headerlock_wire"] / min(disk["vcrpy"], disk["cassetter"])], limit=BYTES,
                 a=f"headerlock_wire: {disk['headerlock_wire']:,} B",
                 b=f"pytest-recording {disk['vcrpy']:,} B, cassetter {disk['cassetter']:,} B"),
    ]  # fmt: skip
    return checks + xdist


def profile(plan: Plan, root: Path) -> dict[str, str]:
    """cProfile of the headerlock_wire, pytest-recording and cassetter replay runs."""
    project = root / "wire"
    env = env_for(project, {"BENCH_BASE_URL": (project / URL_FILE).read_text(encoding="utf-8")})
    sections: dict[str, str] = {}
    for name in ("headerlock_wire", "vcrpy", "cassetter"):
        args = pytest_command(*ARGS[name])[2:]
        ours = profiles.OURS if name == "headerlock_wire" else None
        sections[f"cProfile of the {name} replay run"] = profiles.profile_process(
            project, args, env, restrict=ours
        )
    return sections
