"""Fresh-interpreter runs: pytest and the headerlock command, timed from outside."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TIMEOUT = 1800.0


class RunFailed(RuntimeError):
    """A workload process exited with an unexpected code."""


def env_for(root: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a workload process: ``root`` and the repo importable.

    Bytecode caching is left on (a developer's machine caches pytest's assertion
    rewrites); with ``PYTHONDONTWRITEBYTECODE=1`` every process recompiles them.
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTEST_ADDOPTS", None)
    env["PYTHONPATH"] = os.pathsep.join([str(root), str(REPO), str(REPO / "src")])
    env.update(extra or {})
    return env


def run(
    command: Sequence[str],
    root: Path,
    *,
    env: Mapping[str, str] | None = None,
    ok: Sequence[int] = (0,),
    timeout: float = TIMEOUT,
) -> tuple[float, str]:
    """Run ``command`` in ``root``; returns its wall seconds and its output."""
    started = time.perf_counter()
    result = subprocess.run(
        list(command),
        cwd=root,
        env=dict(env) if env is not None else env_for(root),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )
    elapsed = time.perf_counter() - started
    output = result.stdout + result.stderr
    if result.returncode not in ok:
        raise RunFailed(
            f"{' '.join(command[1:])} exited {result.returncode} in {root}:\n{output[-3000:]}"
        )
    return elapsed, output


NO_CASSETTER = ("-p", "no:cassetter")
"""cassetter and pytest-recording both define ``--record-mode``: one at a time."""
CASSETTER = ("-p", "no:recording", "-p", "cassetter")
"""After ``NO_CASSETTER``: cassetter's plugin instead of pytest-recording's."""


def pytest_command(*args: str, cache: bool = False) -> list[str]:
    """``python -m pytest -q ...`` (without the cache plugin unless ``cache``).

    cassetter's plugin is left out (it clashes with pytest-recording's); a
    cassetter run passes ``CASSETTER`` among ``args`` to swap them.
    """
    return [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        *(() if cache else ("-p", "no:cacheprovider")),
        *NO_CASSETTER,
        *args,
    ]


def pytest(
    root: Path, *args: str, env: Mapping[str, str] | None = None, ok: Sequence[int] = (0,)
) -> float:
    """Wall seconds of one pytest run in ``root``."""
    return run(pytest_command(*args), root, env=env, ok=ok)[0]


def pytest_timed(
    root: Path, *args: str, env: Mapping[str, str], ok: Sequence[int] = (0,)
) -> tuple[float, float]:
    """Wall seconds of one pytest run, and its seconds from collection to session finish."""
    target = root / ".bench-timing"
    target.unlink(missing_ok=True)
    command = pytest_command("-p", "benchmarks.timing_plugin", *args)
    wall = run(command, root, env={**env, "BENCH_TIMING": str(target)}, ok=ok)[0]
    return wall, float(target.read_text(encoding="utf-8"))
