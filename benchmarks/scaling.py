"""Target 4: load + normalize + compare from 100 to 100,000 events, memory, 100k tool calls."""

from __future__ import annotations

import gc
import time
import traceback
import tracemalloc
from functools import partial
from pathlib import Path

from benchmarks import big_turn, profiles
from benchmarks.big_turn_process import phases, replay
from benchmarks.model import ERROR, Check, Plan, measured, missing
from benchmarks.stats import ratios, run_rounds
from benchmarks.workloads import EVENTS_PER_CALL, long_session, recording_of
from headerlock.formats.recording import Recording, load_recording
from headerlock.formats.scrub import scrub_events
from headerlock.testing.scenario.replay import assert_recordings_match

REFERENCE = 1_000
TRACED_UP_TO = 10_000


class Sized:
    """A recording of about ``size`` events on disk, with the raw run it came from."""

    def __init__(self, root: Path, size: int) -> None:
        self.events = long_session(max(1, (size - 8) // EVENTS_PER_CALL))
        self.path = root / f"load-{size}.yaml"
        self.path.write_text(recording_of(self.events, pinned=False).to_text())
        self.bytes = self.path.stat().st_size

    def load_normalize_compare(self) -> None:
        """What a replay does around the agent run: load, scrub the new run, compare bytes."""
        expected = load_recording(self.path)
        actual = Recording(
            expected.scenario, expected.app, False, expected.header_class, scrub_events(self.events)
        )
        assert_recordings_match(expected, actual, path=self.path, subject="bench", command="-")

    def per_event(self) -> float:
        started = time.perf_counter()
        self.load_normalize_compare()
        return (time.perf_counter() - started) / len(self.events)

    def peak(self) -> int:
        """Peak traced bytes of one ``load_normalize_compare``."""
        gc.collect()
        tracemalloc.start()
        try:
            self.load_normalize_compare()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()


def _us(values: list[float]) -> str:
    return f"{sorted(values)[len(values) // 2] * 1e6:.1f} us/event"


def scaling(plan: Plan, root: Path) -> list[Check]:
    """Per-event time at each size in alternating rounds; peak memory once per size."""
    sized = {size: Sized(root, size) for size in plan.sizes}
    big = max(plan.sizes)
    arms = {str(size): recording.per_event for size, recording in sized.items()}
    times = run_rounds(arms, plan.rounds, budget=plan.budget)
    label = f"{big:,}"
    checks = [
        measured(
            4, "4a", f"load + normalize + compare, time per event at {label} / at {REFERENCE:,}"
            " events", ratios(times, str(big), str(REFERENCE)), limit=1.5,
            a=f"{label}: {_us(times[str(big)])}", b=f"{REFERENCE:,}: {_us(times[str(REFERENCE)])}",
            note="all sizes: " + ", ".join(f"{s:,}: {_us(times[str(s)])}" for s in plan.sizes),
            rounds=times,
        )
    ]  # fmt: skip
    peaks = {size: recording.peak() for size, recording in sized.items()}
    checks.append(measured(
        4, "4b", f"peak memory / file size, load + normalize + compare of {label} events",
        [peaks[big] / sized[big].bytes], limit=10.0,
        a=f"peak {peaks[big] / 2**20:.1f} MB (tracemalloc)", b=f"file {sized[big].bytes / 2**20:.2f} MB",
        note="one run (deterministic); all sizes: " + ", ".join(
            f"{s:,}: {peaks[s] / sized[s].bytes:.0f}x" for s in plan.sizes),
    ))  # fmt: skip
    try:
        checks.append(big_turn.check(plan, root / "calls"))
    except Exception as error:  # keep 4a and 4b
        checks.append(missing(4, "4c", "replay of one turn of tool calls", "< 20 s", ERROR,
                              "".join(traceback.format_exception_only(error))[-1500:]))  # fmt: skip
    return checks


def profile(plan: Plan, root: Path) -> dict[str, str]:
    """cProfile of load + normalize + compare at the largest size, GC's share, the replay."""
    big = Sized(root, max(plan.sizes))
    timings = []
    for paused in (False, True, False, True):
        gc.collect()
        if paused:
            gc.disable()
        started = time.perf_counter()
        big.load_normalize_compare()
        timings.append((paused, time.perf_counter() - started))
        gc.enable()
    gc_lines = [f"{'GC paused ' if p else 'GC enabled'}: {t:.2f} s" for p, t in timings]
    sizes = [c for c in (2_500, 5_000, 10_000, 20_000) if c <= plan.calls] or [plan.calls]
    turns = [big_turn.Turn(root / "profile", c) for c in sizes]
    return {
        f"load + normalize + compare of {len(big.events):,} events, GC on vs paused": (
            "\n".join(gc_lines) + "\n"
        ),
        f"cProfile of load + normalize + compare, {len(big.events):,} events": (
            profiles.profile_call(big.load_normalize_compare)
        ),
        "replay of a turn of tool calls, by phase: seconds / peak traced MB (traced up to"
        f" {TRACED_UP_TO:,} calls)": _phases(turns),
        f"cProfile of the replay of {turns[-1].calls:,} tool calls (load + run + compare)": (
            profiles.profile_call(partial(replay, turns[-1].fixtures, turns[-1].path))
        ),
    }


def _phases(turns: list[big_turn.Turn]) -> str:
    """Each phase's seconds and peak memory at growing sizes: which one is superlinear."""
    lines = []
    for turn in turns:
        gc.collect()
        took = phases(turn.fixtures, turn.path, traced=False)
        peak: dict[str, float] = {}
        if turn.calls <= TRACED_UP_TO:  # tracing triples the time
            gc.collect()
            peak = phases(turn.fixtures, turn.path, traced=True)
        cells = "; ".join(
            f"{k} {took[k]:.2f} s" + (f" / {peak[k]:.0f} MB" if k in peak else "") for k in took
        )
        lines.append(f"{turn.calls:>6,} calls ({turn.bytes / 2**20:.1f} MB file): {cells}")
    return "\n".join(lines) + "\n"
