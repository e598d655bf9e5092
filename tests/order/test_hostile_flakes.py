"""Hostile corpus, ``headerlock flakes`` (issue 19): every run is bounded in time (its whole
process group ends at ``--timeout``, even when it forked a child that keeps the pipe open),
``--jobs`` is capped at the machine's cores, ``--runs`` is bounded, and Ctrl-C ends it with
one line and exit 130."""

from __future__ import annotations

import os
import time
from functools import partial
from pathlib import Path

import pytest

from tests import docs
from tests.hostile import alive, cli, interrupt, one_line_error, start_cli, wait_for, write

HANGING = """\
import os, time

def hangs(ctx):
    if not os.environ.get("HX_HANG"):
        return
    child = os.fork()
    if child == 0:  # a child that keeps every inherited pipe open
        with open("grandchild", "w") as marker:
            marker.write(str(os.getpid()))
        time.sleep(1000)
        os._exit(0)
    with open("run", "w") as marker:
        marker.write(str(os.getpid()))
    time.sleep(1000)

def fine(ctx):
    pass
"""


def project(root: Path, plugin: str) -> Path:
    return write(
        root,
        {
            "plug.py": HANGING,
            "fixtures/case.yaml": f"""\
                config: {{model: demo}}
                plugins: [plug:{plugin}]
                steps: [{{prompt: go}}]
                model: [{{text: ok}}]
                """,
        },
    )


def pid_in(path: Path) -> int:
    return int(path.read_text())


def ended(pid: int) -> bool:
    return not alive(pid)


def test_a_hanging_run_and_its_forked_child_end_at_the_timeout(tmp_path: Path) -> None:
    root = project(tmp_path, "hangs")
    started = time.monotonic()
    result = cli(root, "flakes", "--runs", "1", "--timeout", "3", HX_HANG="1", timeout=60)
    took = time.monotonic() - started
    assert took < 3 + 5, f"flakes took {took:.1f}s against a 3s timeout"
    assert result.returncode == 2, result.stdout + result.stderr
    line = one_line_error_or_progress(result)
    assert "run of 'case' (seed 0) did not finish within 3s (--timeout)" in line
    for marker in ("run", "grandchild"):
        pid = pid_in(root / marker)
        wait_for(partial(ended, pid), timeout=5, what=f"the {marker} to end")


def one_line_error_or_progress(result: object) -> str:
    """The one ``headerlock:`` error line (progress lines aside)."""
    import subprocess

    assert isinstance(result, subprocess.CompletedProcess)
    lines = [line for line in result.stderr.splitlines() if not line.startswith("progress:")]
    kept = subprocess.CompletedProcess(
        result.args, result.returncode, result.stdout, "\n".join(lines)
    )
    return one_line_error(kept)


def test_ctrl_c_ends_flakes_with_one_line_exit_130_and_no_process_left(tmp_path: Path) -> None:
    root = project(tmp_path, "hangs")
    process = start_cli(root, "flakes", "--runs", "1", "--timeout", "60", HX_HANG="1")
    wait_for(lambda: (root / "grandchild").exists() and (root / "run").exists(), what="the run")
    code, out, err, took = interrupt(process)
    assert code == 130, (out, err)
    assert "Traceback" not in out + err
    lines = [line for line in err.splitlines() if not line.startswith("progress:")]
    assert len(lines) == 1 and lines[0].startswith("headerlock: interrupted"), err
    assert took < 5
    for marker in ("run", "grandchild"):
        pid = pid_in(root / marker)
        wait_for(partial(ended, pid), timeout=5, what=f"the {marker} to end")


def test_jobs_are_capped_at_the_machines_cores_and_it_says_so(tmp_path: Path) -> None:
    root = project(tmp_path, "fine")
    cores = os.cpu_count() or 1
    result = cli(root, "flakes", "--runs", "2", "--jobs", str(cores + 22))
    assert result.returncode == 0, result.stdout + result.stderr
    said = [line for line in result.stderr.splitlines() if "--jobs" in line]
    assert said == [
        f"headerlock: --jobs {cores + 22} is more than the {cores} cores of this machine;"
        f" running {cores} at a time"
    ], result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--runs", "100000000"], "--runs: must be at most 10000, got 100000000"),
        (["--runs", "0"], "--runs: must be at least 1, got 0"),
        (["--runs", "many"], "--runs: expected a whole number, got 'many'"),
        (["--jobs", "0"], "--jobs: must be at least 1, got 0"),
        (["--timeout", "0"], "--timeout: must be a positive finite number of seconds, got '0'"),
        (["--timeout", "-5"], "--timeout: must be a positive finite number of seconds, got '-5'"),
        (["--timeout", "nan"], "--timeout: must be a positive finite number of seconds, got 'nan'"),
        (["--timeout", "inf"], "--timeout: must be a positive finite number of seconds, got 'inf'"),
    ],
)
def test_bad_flakes_bounds_are_one_line_errors(
    tmp_path: Path, args: list[str], message: str
) -> None:
    root = project(tmp_path, "fine")
    started = time.monotonic()
    result = cli(root, "flakes", *args, timeout=60)
    assert time.monotonic() - started < 10
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in one_line_error(result)
    assert "MemoryError" not in result.stderr


def test_the_flakes_defaults_are_documented() -> None:
    from headerlock.cli import build_parser
    from headerlock.testing.order.flakes import MAX_RUNS, RUN_TIMEOUT

    args = build_parser().parse_args(["flakes"])
    assert (args.timeout, args.runs, args.jobs) == (RUN_TIMEOUT, 6, 2) == (300.0, 6, 2)
    readme = docs.text()
    assert "--timeout SECONDS" in readme and "default 300" in readme
    assert f"at most {MAX_RUNS}" in readme


def test_tasks_are_built_lazily(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch of runs is made only when a process is free to take it."""
    from headerlock.testing.order.flakes import seed_batches
    from headerlock.testing.scenario.project import Project

    root = project(tmp_path, "fine")
    monkeypatch.syspath_prepend(str(root))
    batches = seed_batches(Project(root / "fixtures", root / "recordings"), ["case"], runs=10_000)
    first = next(batches)
    assert [(index, name) for index, name, _ in first[1]] == [(0, "case")]
    assert first[0] == 0
    assert next(batches)[0] == 1  # the next seed's batch is made now, not before
