"""The results: ``results.json`` (machine, versions, every check) and the tables."""

from __future__ import annotations

import datetime
import os
import platform
import re
import sys
from collections.abc import Sequence
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

from benchmarks.model import CONTEXT, ERROR, MET, NOT_MET, UNAVAILABLE, Check, Plan

README = Path(__file__).parent / "README.md"
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"
LIBRARIES = ("headerlock", "pytest", "syrupy", "PyYAML", "hypothesis", "openai", "httpx2",
             "vcrpy", "pytest-recording", "cassetter", "pytest-xdist", "pydantic", "deepdiff")  # fmt: skip
TARGETS = {
    1: "Start-up tax: one-test run with the plugin <= 1.10x without",
    2: "Wire replay: headerlock_wire <= 1.0x pytest-recording",
    3: "Scenario replay per test <= 2.0x a syrupy amber assert",
    4: "Linear loads to 100k events, peak memory <= 10x file, 100k tool calls < 20 s",
    5: "pytest -n 2 >= 1.6x serial; flakes <= 0.15 s per run",
    6: "Permutation checks >= 500 orders/s",
    0: "Earlier targets (before issue 14), kept as regression figures",
    20: "Cache report: time per request flat from 10 to 1,000 requests (<= 1.5x)",
    22: "Issue 22: replay <= 0.90x the faster peer and <= 1.15x the floor; record <= 1.0x; "
    "bytes <= the smaller peer; memory <= 1.1x; start-up <= 1.10x; -n 2 >= 1.5x",
    31: "Issue 31: record time per step at 32,000 / 1,000 steps <= 1.3x; a mismatching"
    " replay <= 1.5x a matching one",
}


def versions() -> dict[str, str | None]:
    """Installed versions of the libraries the figures depend on."""
    found: dict[str, str | None] = {}
    for name in LIBRARIES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def machine() -> dict[str, Any]:
    """CPU count, platform and load: the context every figure was measured in."""
    return {
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "libyaml": bool(getattr(yaml, "__with_libyaml__", False)),
        "load_average": list(os.getloadavg()),
    }


def target_verdict(checks: Sequence[Check]) -> str:
    """One verdict from a target's judged checks."""
    statuses = {c.status for c in checks if c.status != CONTEXT}
    for status in (ERROR, NOT_MET, UNAVAILABLE):
        if status in statuses:
            return status
    return MET if statuses == {MET} else CONTEXT


def results(
    plan: Plan, checks: Sequence[Check], seconds: float, load_before: list[float]
) -> dict[str, Any]:
    """Everything ``results.json`` holds."""
    targets = {}
    for number, title in TARGETS.items():
        mine = [c for c in checks if c.target == number]
        if mine:
            targets[str(number)] = {"title": title, "verdict": target_verdict(mine),
                                    "checks": [c.key for c in mine]}  # fmt: skip
    return {
        "generated": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": " ".join(["python -m benchmarks", *sys.argv[1:]]),
        "quick": plan.quick,
        "seconds": round(seconds, 1),
        "machine": {**machine(), "load_average_before": load_before},
        "versions": versions(),
        "plan": asdict(plan),
        "targets": targets,
        "checks": [c.to_json() for c in checks],
    }


def spread_text(check: Check) -> str:
    """``IQR 1.0-1.2, range 0.9-1.3, n=7`` (or why there is no figure)."""
    value = check.value
    if value is None:
        return check.note
    digits = 3 if abs(value.median) < 10 else 1
    fmt = f"{{:.{digits}f}}"
    return (f"IQR {fmt.format(value.q1)}-{fmt.format(value.q3)}, range {fmt.format(value.low)}-"
            f"{fmt.format(value.high)}, n={value.n}")  # fmt: skip


def table(checks: Sequence[Check]) -> list[str]:
    """A markdown table: one row per check."""
    rows = [("#", "what", "median", "spread of the per-round values", "goal", "verdict",
             "A (headerlock)", "B (baseline)")]  # fmt: skip
    rows += [
        (c.key, c.what, c.shown(), spread_text(c), c.goal, c.verdict(), c.a, c.b) for c in checks
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["| " + " | ".join(r[i].ljust(widths[i]) for i in range(len(r))) + " |" for r in rows]
    lines.insert(1, "| " + " | ".join("-" * w for w in widths) + " |")
    return lines


PEER_COLUMNS = (
    ("peer", "hl / faster peer (<= 0.90x)"), ("vcrpy", "hl / pytest-recording"),
    ("cassetter", "hl / cassetter"), ("floor-headerlock", "hl / floor (<= 1.15x)"),
    ("floor-vcrpy", "pytest-recording / floor"), ("floor-cassetter", "cassetter / floor"),
    ("record", "record: hl / faster peer (<= 1.0x)"), ("bytes", "bytes: hl / smaller peer (<= 1.0x)"),
)  # fmt: skip
"""Issue 22's side-by-side table: the check keys ``22-<row>-<column>``."""


def peer_table(checks: Sequence[Check]) -> list[str]:
    """Issue 22's workloads side by side: one row per workload, medians (verdicts marked)."""
    found = {c.key: c for c in checks if c.target == 22}
    rows_keys = [k[3:-5] for k in found if k.endswith("-peer")]
    if not rows_keys:
        return []
    header = ("workload", *(title for _, title in PEER_COLUMNS))
    rows = [header]
    for row in rows_keys:
        cells = [found[f"22-{row}-peer"].what.split(":")[0]]
        for column, _ in PEER_COLUMNS:
            check = found.get(f"22-{row}-{column}")
            mark = {NOT_MET: " **NOT MET**", MET: " met"}.get(check.status, "") if check else ""
            cells.append(f"{check.shown()}{mark}" if check else "-")
            if check is not None and column == "bytes":
                cells[-1] += f" ({check.a.split(': ')[-1]} vs {check.b})"
        rows.append(tuple(cells))
    lines = ["| " + " | ".join(r) + " |" for r in rows]
    lines.insert(1, "| " + " | ".join("---" for _ in header) + " |")
    return lines


def summary(data: dict[str, Any]) -> list[str]:
    """One line per target: its verdict."""
    return [f"- target {n}: **{t['verdict']}** ({t['title']})" for n, t in data["targets"].items()]


def update_readme(data: dict[str, Any], checks: Sequence[Check], path: Path = README) -> bool:
    """Replace the generated block of ``path`` (between the markers); False if it has none."""
    if not path.exists():
        return False
    text = path.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        return False
    m = data["machine"]
    only = re.search(r"--only[ =](\S+)", str(data.get("command", "")))
    run = "Last full run" if only is None else f"Last run of {only.group(1)} only"
    lines = [
        BEGIN,
        f"{run}: {data['generated']}, {data['seconds']:.0f} s; {m['python']}, "
        f"{m['cpu_count']} cores, {m['platform']}; load average {m['load_average_before'][0]:.1f}"
        f" before, {m['load_average'][0]:.1f} after.",
        "",
        *summary(data),
        "",
        *peer_table(checks),
        "",
        *table(checks),
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in data["versions"].items()) + ".",
        END,
    ]
    before, rest = text.split(BEGIN, 1)
    after = rest.split(END, 1)[1]
    path.write_text(before + "\n".join(lines) + after, encoding="utf-8")
    return True


def console(checks: Sequence[Check]) -> list[str]:
    """The table for the terminal: key, median, spread, goal, verdict, what."""
    return [
        f"{c.key:>14}  {c.shown():>16}  {c.goal:>14}  {c.verdict():<22} {c.what}"
        + (f"\n{'':>16}{spread_text(c)}; A {c.a}; B {c.b}" if c.value else f"\n{'':>16}{c.note}")
        for c in checks
    ]
