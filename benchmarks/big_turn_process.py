"""``python -m benchmarks.big_turn_process replay|c_loader FIXTURES RECORDING CAP_MB``: one timed run.

Prints one JSON line: ``seconds`` (from reading the file to the comparison),
``max_rss_mb`` and ``failure`` ("" when the run finished). ``c_loader`` only
parses the file with PyYAML's C loader. The address space is capped at
``CAP_MB``, so a runaway run ends in ``MemoryError`` instead of exhausting the machine.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

import yaml


def replay(fixtures: Path, path: Path) -> tuple[object, ...]:
    """Parse and validate ``path``, replay scenario ``bench`` against it, compare the bytes;
    returns what the run built (the expected and actual recordings, the run's output)."""
    from headerlock.formats.recording import parse_recording
    from headerlock.runtime.aio import run_sync
    from headerlock.testing.scenario.project import Project
    from headerlock.testing.scenario.replay import assert_recordings_match, replay_scenario

    scenario = Project(fixtures, fixtures.parent / "no-recordings").scenario("bench")
    expected = parse_recording(path.read_text(encoding="utf-8"), path=str(path))
    actual, output = run_sync(replay_scenario(scenario, expected))
    assert_recordings_match(expected, actual, path=path, subject="bench", command="-")
    return expected, actual, output


def phases(fixtures: Path, path: Path, *, traced: bool) -> dict[str, float]:
    """Seconds (or, ``traced``, peak traced MB) of each phase of ``replay``."""
    import tracemalloc

    from headerlock.formats.recording import parse_recording
    from headerlock.runtime.aio import run_sync
    from headerlock.testing.scenario.project import Project
    from headerlock.testing.scenario.replay import assert_recordings_match, replay_scenario

    scenario = Project(fixtures, fixtures.parent / "no-recordings").scenario("bench")
    figures: dict[str, float] = {}
    if traced:
        tracemalloc.start()
    mark = time.perf_counter()

    def done(phase: str) -> None:
        nonlocal mark
        if traced:
            figures[phase] = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.reset_peak()
        else:
            figures[phase] = time.perf_counter() - mark
        mark = time.perf_counter()

    try:
        text = path.read_text(encoding="utf-8")
        expected = parse_recording(text, path=str(path))
        done("parse + validate")
        actual, _ = run_sync(replay_scenario(scenario, expected))
        done("run + normalize")
        assert_recordings_match(expected, actual, path=path, subject="bench", command="-")
        done("compare")
    finally:
        if traced:
            tracemalloc.stop()
    return figures


def c_loader(path: Path) -> None:
    """Parse ``path`` with the C loader, nothing else."""
    yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)


def peak_rss_mb() -> float:
    """This process's peak resident set (``VmHWM``). Not ``ru_maxrss``: Linux carries
    that over from the parent at ``exec``, so a child would report the runner's peak."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str]) -> int:
    mode, fixtures, path, cap_mb = argv[0], Path(argv[1]), Path(argv[2]), int(argv[3])
    cap = cap_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    failure = ""
    started = time.perf_counter()
    try:
        if mode == "replay":
            replay(fixtures, path)
        else:
            c_loader(path)
    except MemoryError:
        failure = f"out of memory at the {cap_mb} MB cap"
    elapsed = time.perf_counter() - started
    print(json.dumps({"seconds": elapsed, "max_rss_mb": peak_rss_mb(), "failure": failure}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
