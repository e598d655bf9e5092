"""What the suite reports: one ``Check`` per figure, with its verdict against a goal."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from benchmarks.stats import Spread, judge, spread

MET, NOT_MET, CONTEXT, UNAVAILABLE, ERROR = (
    "met",
    "not met",
    "context",
    "not available yet",
    "error",
)


@dataclass(slots=True)
class Check:
    """One figure: its per-round values summarized, the goal and the verdict."""

    target: int
    key: str
    what: str
    goal: str
    unit: str
    status: str
    value: Spread | None = None
    clear: bool | None = None
    a: str = ""
    b: str = ""
    note: str = ""
    rounds: dict[str, list[float]] = field(default_factory=dict)

    @property
    def met(self) -> bool | None:
        """True or False for a judged figure, None otherwise."""
        return {MET: True, NOT_MET: False}.get(self.status)

    def shown(self) -> str:
        """The figure with its unit, e.g. ``1.23x``, ``0.412 s``, ``2,780 s``."""
        if self.value is None:
            return "-"
        middle = self.value.median
        if self.unit == "x":
            return f"{middle:.2f}x"
        return f"{middle:,.0f}{self.unit}" if abs(middle) >= 100 else f"{middle:.3g}{self.unit}"

    def verdict(self) -> str:
        """``met``, ``NOT MET``, ``met (borderline)``, ... for the table."""
        if self.status == NOT_MET:
            return "NOT MET" + ("" if self.clear else " (borderline)")
        if self.status == MET and not self.clear:
            return "met (borderline)"
        return self.status

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["met"] = self.met
        data["verdict"] = self.verdict()
        return data


def measured(
    target: int,
    key: str,
    what: str,
    values: Sequence[float],
    *,
    limit: float | None,
    at_most: bool = True,
    unit: str = "x",
    goal: str = "",
    a: str = "",
    b: str = "",
    note: str = "",
    rounds: Mapping[str, Sequence[float]] | None = None,
) -> Check:
    """A check judged on the median of ``values`` (``limit`` None: context only)."""
    summary = spread(values)
    if limit is None:
        status, clear = CONTEXT, None
    else:
        met, clear = judge(summary, limit, at_most=at_most)
        status = MET if met else NOT_MET
    if not goal and limit is not None:
        goal = f"{'<=' if at_most else '>='} {limit:g}{unit}"
    return Check(
        target, key, what, goal or "-", unit, status, summary, clear, a, b, note,
        {k: [round(v, 6) for v in vs] for k, vs in (rounds or {}).items()},
    )  # fmt: skip


def missing(target: int, key: str, what: str, goal: str, status: str, note: str) -> Check:
    """A check that could not be measured (``UNAVAILABLE`` or ``ERROR``), with why."""
    return Check(target, key, what, goal, "", status, note=note)


def seconds(values: Sequence[float]) -> str:
    """``1.234 s`` or ``12.3 ms``: the median of ``values``."""
    middle = spread(values).median
    if middle >= 1:
        return f"{middle:.3f} s"
    return f"{middle * 1000:.1f} ms" if middle >= 1e-3 else f"{middle * 1e6:.1f} us"


@dataclass(frozen=True, slots=True)
class Plan:
    """Sizes and round counts of one run: full, or ``--quick`` (a CI smoke run)."""

    quick: bool
    profiles: bool
    rounds: int = 7
    """Measured rounds per figure (each runs every arm once)."""
    warmup: int = 1
    """Rounds run first and dropped (quick: none; its recording runs warm the caches)."""
    startup_rounds: int = 15
    process_rounds: int = 7
    """Rounds of the figures whose every arm is a whole pytest run (quick: one, a smoke)."""
    wire_tests: int = 1_000
    scenarios: int = 200
    sizes: tuple[int, ...] = (100, 1_000, 10_000, 100_000)
    calls: int = 100_000
    orders: int = 200
    flake_runs: int = 6
    budget: float = 300.0
    """Seconds after which a figure whose rounds take minutes stops adding rounds."""

    @classmethod
    def make(cls, *, quick: bool, profiles: bool) -> Plan:
        """The full plan (the issue's sizes, >= 7 rounds) or the quick one."""
        if not quick:
            return cls(quick, profiles)
        return cls(
            quick, profiles, rounds=3, warmup=0, startup_rounds=2, process_rounds=1,
            wire_tests=10, scenarios=10,
            sizes=(100, 1_000, 10_000), calls=500, orders=50, flake_runs=2, budget=15.0,
        )  # fmt: skip
