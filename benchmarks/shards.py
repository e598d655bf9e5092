"""Sharded CI at scale: a 10,000-test suite split over 10 jobs, each writing a usage
manifest; how large the manifests are and how long ``headerlock unused`` takes to merge
them (``python -m benchmarks.shards [--tests N] [--jobs K] [--rounds R]``).

The suite is generated: 100 test files of ``N/100`` tests, each test using one
recording (``recordings/tests/test_mNN/test_tNNNN.yaml``, a small valid recording),
plus one orphan recording per file; the manifests are built as the plugin builds them
(``Manifest``, written by ``write_manifest``). The merge runs the real command
(reading, checking, merging, the checkout's listing, finding the unused ones).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from headerlock.formats.manifest import (
    Manifest,
    SpaceEntry,
    digest_lines,
    recordings_listing,
    write_manifest,
)
from headerlock.testing.plugin.shards import unused_command

RECORDING = "version: 1\nscenario: bench\napp: python\nevents: []\n"
FILES = 100
WRITES: list[float] = []
"""Seconds each manifest took to build and write (what a job adds at its end)."""


def suite(root: Path, tests: int) -> tuple[list[str], dict[str, str], list[SpaceEntry]]:
    """Write the recordings; the node ids, each one's recording, and the owner spaces."""
    ids: list[str] = []
    recording_of: dict[str, str] = {}
    spaces = []
    per_file = tests // FILES
    for f in range(FILES):
        module = f"tests/test_m{f:02d}.py"
        folder = root / "recordings" / "tests" / f"test_m{f:02d}"
        folder.mkdir(parents=True)
        items = []
        for t in range(per_file):
            nodeid = f"{module}::test_case_{t:04d}[variant-{t % 7}]"
            name = f"test_case_{t:04d}[variant-{t % 7}].yaml"
            (folder / name).write_text(RECORDING)
            ids.append(nodeid)
            items.append(nodeid)
            recording_of[nodeid] = f"recordings/tests/test_m{f:02d}/{name}"
        (folder / "test_orphan.yaml").write_text(RECORDING)
        spaces.append(SpaceEntry(module, "module", f"tests/test_m{f:02d}", tuple(items)))
    return ids, recording_of, spaces


def manifests(root: Path, tests: int, jobs: int) -> list[Path]:
    """Write the jobs' manifests (a pytest-split of ``tests`` over ``jobs``)."""
    ids, recording_of, spaces = suite(root, tests)
    listing = recordings_listing(root / "recordings")
    paths = []
    for job in range(jobs):
        mine = ids[job::jobs]
        manifest = Manifest(
            headerlock="bench",
            recordings="recordings",
            fixtures="fixtures",
            listing={"count": len(listing), "sha256": digest_lines(listing)},
            collected=tuple(ids),
            spaces=tuple(spaces),
            selection={"splits": jobs, "group": job + 1, "workers": 2},
            interrupted=False,
            exitstatus=0,
            lost_workers=(),
            tests=dict.fromkeys(mine, "passed"),
            used={recording_of[i]: (i,) for i in mine},
            skipped={},
        )
        path = root / "ci" / f"job-{job + 1}" / "headerlock-manifest.json"
        started = time.perf_counter()
        write_manifest(path, manifest)
        WRITES.append(time.perf_counter() - started)
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=10_000)
    parser.add_argument("--jobs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="headerlock-shards-") as temp:
        root = Path(temp)
        started = time.perf_counter()
        paths = manifests(root, args.tests, args.jobs)
        built = time.perf_counter() - started
        sizes = [p.stat().st_size for p in paths]
        times = []
        cpu = []
        lines: list[str] = []
        code = None
        for _ in range(args.rounds):
            lines.clear()
            started, used = time.perf_counter(), time.process_time()
            code = unused_command(paths, root=root, remove_them=False, say=lines.append)
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - used)
        assert code == 1 and sum(line.startswith("unused:") for line in lines) == FILES, lines
        print(f"{args.tests} tests, {args.jobs} jobs (suite and manifests built in {built:.1f}s)")
        print(
            f"manifest size: {statistics.median(sizes) / 1024:.0f} KiB per job (min"
            f" {min(sizes) / 1024:.0f}, max {max(sizes) / 1024:.0f}), {sum(sizes) / 1024:.0f} KiB"
            f" in all; each written in {statistics.median(WRITES) * 1000:.0f} ms (median)"
        )
        print(
            f"merge (headerlock unused, {FILES} unused found): median"
            f" {statistics.median(times):.3f}s, min {min(times):.3f}s, max {max(times):.3f}s"
            f" over {args.rounds} rounds (CPU time: median {statistics.median(cpu):.3f}s;"
            " wall time counts a loaded machine's waits)"
        )


if __name__ == "__main__":
    main()
