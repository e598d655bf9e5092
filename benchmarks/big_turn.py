"""Target 4c: one turn of 100,000 tool calls replayed (load + run + compare) in a fresh process.

A ladder of doubling sizes runs first. When it shows the full size cannot
finish in reasonable time or memory, the figure is its extrapolation (labelled
so) instead of a run that would take an hour or exhaust the machine's memory.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.model import NOT_MET, Check, Plan, measured, seconds
from benchmarks.procs import RunFailed, env_for, run
from benchmarks.stats import run_rounds
from benchmarks.workloads import EVENTS_PER_CALL, long_session, recording_of

LADDER = (1_250, 2_500, 5_000, 10_000, 20_000, 40_000, 80_000)
STEP_BUDGET = 60.0
"""A ladder step slower than this ends the ladder."""
CAP_MB = 8192
"""Address-space cap of a replay process (``RLIMIT_AS``): a runaway run fails, not the machine."""
TIMEOUT = 900.0
GOAL_SECONDS, GOAL_CALLS = 20.0, 100_000


@dataclass(frozen=True, slots=True)
class Outcome:
    """One run: its size, seconds and peak RSS, or why it did not finish."""

    calls: int
    seconds: float
    rss_mb: float
    failure: str = ""

    def text(self) -> str:
        done = f"{self.seconds:.1f} s, {self.rss_mb:.0f} MB"
        return f"{self.calls:,}: " + (f"{self.failure} after {done}" if self.failure else done)


class Turn:
    """One turn of ``calls`` tool calls on disk: its fixture and its (unpinned) recording."""

    def __init__(self, root: Path, calls: int) -> None:
        self.calls = calls
        self.fixtures = root / f"calls-{calls}" / "fixtures"
        self.fixtures.mkdir(parents=True)
        (self.fixtures / "bench.yaml").write_text(
            'config: {model: bench, persona: "Benchmark persona.\\nTwo lines.", '
            f"max_steps: {calls + 2}}}\nplugins: [benchmarks.workloads:nine_tools]\n"
            "steps: [{prompt: run the benchmark}]\n"
        )
        self.path = root / f"calls-{calls}" / "bench.yaml"
        self.path.write_text(recording_of(long_session(calls), pinned=False).to_text())
        self.bytes = self.path.stat().st_size

    def run(self, mode: str) -> Outcome:
        """One fresh process: ``replay`` (load + run + compare) or ``c_loader`` (parse only)."""
        command = [sys.executable, "-m", "benchmarks.big_turn_process", mode, str(self.fixtures),
                   str(self.path), str(CAP_MB)]  # fmt: skip
        root = self.path.parent
        try:
            _, output = run(command, root, env=env_for(root), timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            return Outcome(self.calls, TIMEOUT, math.nan, "timed out")
        except RunFailed as error:
            return Outcome(self.calls, math.nan, math.nan, f"failed ({str(error)[-300:]})")
        result: dict[str, Any] = json.loads(output.strip().splitlines()[-1])
        return Outcome(self.calls, result["seconds"], result["max_rss_mb"], result["failure"])


def _quadratic(steps: list[Outcome], calls: int) -> float | None:
    """Seconds at ``calls`` from ``a*n + b*n**2`` through the last two finished steps."""
    done = [s for s in steps if not s.failure]
    if len(done) < 2:
        return None
    (n1, t1), (n2, t2) = [(s.calls, s.seconds) for s in done[-2:]]
    b = (t2 - t1 * n2 / n1) / (n2 * n2 - n1 * n2)
    a = (t1 - b * n1 * n1) / n1
    return a * calls + b * calls * calls


def _predict(steps: list[Outcome], calls: int) -> tuple[float, float, float]:
    """Seconds and MB at ``calls`` from the last two finished steps, and the time exponent."""
    done = [s for s in steps if not s.failure]
    if len(done) >= 2:
        a, b = done[-2], done[-1]
        k = math.log(b.seconds / a.seconds) / math.log(b.calls / a.calls)
        m = math.log(b.rss_mb / a.rss_mb) / math.log(b.calls / a.calls)
    else:
        b, k, m = done[-1], 1.0, 1.0
    scale = calls / b.calls
    return b.seconds * scale**k, b.rss_mb * scale**m, k


def check(plan: Plan, root: Path) -> Check:
    """The ladder, then the full size (paired with the C loader) if the ladder allows it."""
    target = plan.calls
    goal = GOAL_SECONDS * min(1.0, target / GOAL_CALLS)
    what = (f"replay of one turn of {target:,} tool calls ({target * EVENTS_PER_CALL:,} events),"
            " load + run + compare, fresh process")  # fmt: skip
    steps: list[Outcome] = []
    for calls in (c for c in LADDER if c < target):
        steps.append(Turn(root, calls).run("replay"))
        if steps[-1].failure or steps[-1].seconds > STEP_BUDGET:
            break
    ladder = "ladder: " + "; ".join(s.text() for s in steps) if steps else ""
    if steps and not any(not s.failure for s in steps):
        return Check(4, "4c", what, f"< {goal:g} s", " s", NOT_MET, note=ladder, clear=True)
    if steps:
        time_at, mb_at, k = _predict(steps, target)
        if time_at > TIMEOUT / 2 or mb_at > CAP_MB / 2 or steps[-1].failure:
            return measured(
                4, "4c", what, [time_at], limit=goal, unit=" s (extrapolated)", goal=f"< {goal:g} s",
                a=f"extrapolated: {time_at:.0f} s (time ~ n^{k:.2f}; a*n + b*n^2 gives "
                f"{_quadratic(steps, target) or math.nan:.0f} s), {mb_at / 1024:.1f} GB peak RSS",
                b="not run at full size (the ladder predicts more than half the timeout or cap)",
                note=ladder,
            )  # fmt: skip
    turn = Turn(root, target)
    outcomes: dict[str, list[Outcome]] = {"replay": [], "c_loader": []}

    def arm(mode: str) -> float:
        outcomes[mode].append(turn.run(mode))
        if outcomes[mode][-1].failure:
            raise RuntimeError(outcomes[mode][-1].text())
        return outcomes[mode][-1].seconds

    try:
        times = run_rounds({m: partial(arm, m) for m in outcomes}, plan.rounds, warmup=0,
                           budget=plan.budget)  # fmt: skip
    except RuntimeError as error:
        return Check(4, "4c", what, f"< {goal:g} s", " s", NOT_MET, clear=True,
                     note=f"{error}; {ladder}")  # fmt: skip
    rss = max(o.rss_mb for o in outcomes["replay"])
    return measured(
        4, "4c", what, times["replay"], limit=goal, unit=" s", goal=f"< {goal:g} s",
        a=f"replay: {seconds(times['replay'])}, peak RSS {rss:.0f} MB",
        b=f"C loader alone: {seconds(times['c_loader'])}",
        note=f"file {turn.bytes / 2**20:.1f} MB (over the reader's 32 MiB limit at 100,000"
        f" calls: parsed from text); {ladder}", rounds=times,
    )  # fmt: skip
