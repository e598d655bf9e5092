"""Paired measurement: alternating rounds, per-round ratios, medians and spreads.

Every figure of the suite comes from ``run_rounds``: each round runs every arm
once, and the order rotates by one arm per round (A B, B A, A B, ...), so a
machine that slows down or speeds up during the run weighs on both arms alike.
A ratio is computed per round, then summarized by its median and spread.
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

Arm = Callable[[], float]
"""One measurement: runs the workload once and returns its seconds."""


@dataclass(frozen=True, slots=True)
class Spread:
    """The median of some per-round values, their quartiles and extremes."""

    median: float
    q1: float
    q3: float
    low: float
    high: float
    n: int

    def text(self, digits: int = 2) -> str:
        """``1.23 (IQR 1.20-1.25, range 1.10-1.40, n=7)``."""
        f = f"{{:.{digits}f}}"
        return (
            f"{f.format(self.median)} (IQR {f.format(self.q1)}-{f.format(self.q3)},"
            f" range {f.format(self.low)}-{f.format(self.high)}, n={self.n})"
        )


def quantile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile of ``values`` with linear interpolation (numpy's default)."""
    if not values:
        raise ValueError("quantile of no values")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def spread(values: Sequence[float]) -> Spread:
    """Median, quartiles and extremes of ``values`` (at least one)."""
    return Spread(
        median=quantile(values, 0.5),
        q1=quantile(values, 0.25),
        q3=quantile(values, 0.75),
        low=min(values),
        high=max(values),
        n=len(values),
    )


def rotation(names: Sequence[str], round_index: int) -> list[str]:
    """The order of the arms in round ``round_index``: rotated by one each round."""
    shift = round_index % len(names)
    return [*names[shift:], *names[:shift]]


def run_rounds(
    arms: Mapping[str, Arm],
    rounds: int,
    *,
    warmup: int = 1,
    budget: float | None = None,
    on_round: Callable[[int, dict[str, float]], None] | None = None,
) -> dict[str, list[float]]:
    """Seconds per arm and round; ``warmup`` rounds are run first and dropped.

    With a ``budget`` (seconds), no round starts once the measured rounds have
    used it up: fewer rounds (at least one) for workloads that take minutes.
    """
    if rounds < 1 or not arms:
        raise ValueError("need at least one round and one arm")
    names = list(arms)
    times: dict[str, list[float]] = {name: [] for name in names}
    started = time.perf_counter()
    for index in range(warmup + rounds):
        if index == warmup:
            started = time.perf_counter()
        elif index > warmup and budget is not None and time.perf_counter() - started > budget:
            break
        measured: dict[str, float] = {}
        for name in rotation(names, index):
            gc.collect()
            measured[name] = arms[name]()
        if index >= warmup:
            for name in names:
                times[name].append(measured[name])
            if on_round is not None:
                on_round(index - warmup, measured)
    return times


def ratios(times: Mapping[str, Sequence[float]], a: str, b: str) -> list[float]:
    """Per-round ``a / b``."""
    return [x / y for x, y in zip(times[a], times[b], strict=True)]


def net_ratios(
    times: Mapping[str, Sequence[float]], a: str, b: str, floor: str, *, minimum: float = 1e-3
) -> list[float]:
    """Per-round ``(a - floor) / (b - floor)``: the ratio of what each arm adds to ``floor``."""
    return [
        max(x - f, minimum) / max(y - f, minimum)
        for x, y, f in zip(times[a], times[b], times[floor], strict=True)
    ]


def judge(values: Spread, limit: float, *, at_most: bool) -> tuple[bool, bool]:
    """``(met, clear)``: the median against ``limit``; clear when the whole IQR agrees."""
    if at_most:
        return values.median <= limit, values.q3 <= limit or values.q1 > limit
    return values.median >= limit, values.q1 >= limit or values.q3 < limit
