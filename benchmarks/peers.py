"""Issue 22, rows 2-5: headerlock, pytest-recording's vcrpy, cassetter and the floor.

Every arm runs in a fresh interpreter (``peer_process``): a record against the
loopback server (record cost, bytes on disk), then paired replay rounds with
the server gone (the arms rotate each round). The floor is the same SDK calls
answered by an ``httpx2.MockTransport`` with the same bytes and no recorder.
A figure is the median of per-round ratios. Per workload: headerlock over the
faster peer (goal <= 0.90x), over the floor (<= 1.15x); record cost over the
faster peer (<= 1.0x); bytes over the smaller peer (<= 1.0x); on the long
session, peak RSS over the lower peer (<= 1.1x) and microseconds per KB of
request body at 50 and 500 requests (flat: <= 1.5x, the cache report's measure).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks import profiles
from benchmarks.model import Check, Plan, measured, seconds
from benchmarks.peer_calls import Size, answer
from benchmarks.procs import env_for, run
from benchmarks.stats import run_rounds, spread
from benchmarks.wire_server import free_port, serving

ARMS = ("headerlock", "vcrpy", "cassetter", "floor")
PEERS = ("vcrpy", "cassetter")
NAMES = {"headerlock": "headerlock", "vcrpy": "pytest-recording (vcrpy)",
         "cassetter": "cassetter", "floor": "floor"}  # fmt: skip
TARGET = 22
FASTER, FLOOR, RECORD, BYTES, MEMORY, FLAT = 0.90, 1.15, 1.0, 1.0, 1.1, 1.5
Job = tuple[str, Size]
PORT_FILE = ".bench-port"
ROUNDS = 5
"""Replay rounds per workload (fewer when they pass ``plan.budget``): 20 processes each."""


def jobs(plan: Plan) -> list[Job]:
    """The workloads and their sizes (the issue's in the full run)."""
    if plan.quick:  # one size per workload: a process serves one of each (no 22-per-kb)
        return [("tools", Size(8)), ("session", Size(30)), ("stream", Size(2, 200)),
                ("gather", Size(2))]  # fmt: skip
    return [("tools", Size(40)), ("session", Size(500)), ("session", Size(50)),
            ("stream", Size(10, 2_000)), ("gather", Size(10))]  # fmt: skip


def title(job: Job) -> str:
    workload, size = job
    return {
        "tools": f"200 tools + 30 KB system, {size.size} requests",
        "session": f"one session of {size.size} growing requests",
        "stream": f"{size.size} SSE streams of {size.events:,} events",
        "gather": f"20-way asyncio.gather x {size.size} ({size.size * 20} requests)",
    }[workload]


def key(job: Job) -> str:
    return f"{job[0]}-{job[1].size}"


def _spec(batch: Sequence[Job], reps: int) -> str:
    return json.dumps([[w, s.size, s.events, reps] for w, s in batch])


def _child(
    arm: str, mode: str, folder: Path, batch: Sequence[Job], reps: int, port: int
) -> dict[str, Any]:
    """One arm's process over ``batch``; a record has its own loopback server on ``port``.

    A replay keeps the URL (cassetter matches the whole URI) with nothing listening.
    """
    url = f"http://127.0.0.1:{port}/v1"
    server = serving(answer(dict(batch)), port) if mode != "replay" else nullcontext(url)
    with server:
        command = [sys.executable, "-m", "benchmarks.peer_process", arm, mode, str(folder), url,
                   _spec(batch, reps)]  # fmt: skip
        output = run(command, folder, env=env_for(folder))[1]
    data: dict[str, Any] = json.loads(output.strip().splitlines()[-1])
    return data


def _warm(values: list[float]) -> float:
    """One process's figure: the median of its reps after the first (cold) one."""
    return spread(values[1:] if len(values) > 1 else values).median


def _batches(plan: Plan) -> list[list[Job]]:
    """Quick: the workloads in one process per arm; full: one workload per process."""
    return [jobs(plan)] if plan.quick else [[job] for job in jobs(plan)]


def _reps(plan: Plan, batch: Sequence[Job]) -> int:
    """Replays per process: the figure is the warm ones (after the first); one for long ones."""
    long = any(w == "session" and s.size >= 200 for w, s in batch)
    return 1 if long else 2 if plan.quick or any(w == "stream" for w, _ in batch) else 3


@dataclass
class _Book:
    """What the children reported, by workload key and arm."""

    folder: Path
    port: int
    record: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    replay: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    disk: dict[str, dict[str, int]] = field(default_factory=dict)
    rss: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    sent: dict[str, int] = field(default_factory=dict)
    errors: dict[str, dict[str, str]] = field(default_factory=dict)

    def arm(self, name: str, mode: str, batch: list[Job], reps: int) -> float:
        out = _child(name, mode, self.folder, batch, reps, self.port)
        for job in batch:
            k = key(job)
            if k in out.get("errors", {}):
                self.errors.setdefault(k, {})[name] = out["errors"][k]
                continue
            if k in out["record"]:
                self.record.setdefault(k, {}).setdefault(name, []).append(out["record"][k][0])
                self.disk.setdefault(k, {})[name] = out["bytes"][k]
            if k in out["times"]:
                self.replay.setdefault(k, {}).setdefault(name, []).append(_warm(out["times"][k]))
                self.rss.setdefault(k, {}).setdefault(name, []).append(out["rss_mb"])
        self.sent.update(out["sent"])
        return 0.0  # the figures are the children's own clocks, kept in the book


def peers(plan: Plan, root: Path) -> list[Check]:
    """Record each way (record cost, bytes), then replay in paired rounds."""
    folder = root / "files"
    folder.mkdir()
    book = _Book(folder, free_port())
    (folder / PORT_FILE).write_text(str(book.port), encoding="utf-8")
    for batch in _batches(plan):
        reps = _reps(plan, batch)
        if plan.quick:  # one process per arm: record, then replay (the server stays up)
            run_rounds({n: partial(book.arm, n, "both", batch, reps) for n in ARMS}, 1, warmup=0)
            continue
        record = {n: partial(book.arm, n, "record", batch, 1) for n in ARMS}
        run_rounds(record, 2, warmup=0, budget=plan.budget / 4)
        replay = {n: partial(book.arm, n, "replay", batch, reps) for n in ARMS}
        long = reps == 1  # the 500-request session: minutes a round
        run_rounds(replay, min(plan.rounds, ROUNDS), warmup=0,
                   budget=plan.budget / 2 if long else plan.budget)  # fmt: skip
    checks: list[Check] = []
    for job in jobs(plan):
        k = key(job)
        checks += _judged(job, book.replay[k], book.record[k], book.disk[k], book.errors.get(k, {}))
    return checks + _session(plan, book.replay, book.rss, book.sent)


def _ran(times: dict[str, list[float]]) -> list[str]:
    """The peers with a figure for every round headerlock ran (a peer may fail a workload)."""
    return [p for p in PEERS if len(times.get(p, ())) == len(times["headerlock"])]


def _faster(times: dict[str, list[float]]) -> list[float]:
    return [min(values) for values in zip(*(times[p] for p in _ran(times)), strict=True)]


def _per(times: dict[str, list[float]], a: str, b: Sequence[float]) -> list[float]:
    return [x / y for x, y in zip(times[a], b, strict=True)]


def _figures(times: dict[str, list[float]]) -> str:
    return ", ".join(f"{NAMES[n]} {seconds(times[n])}" for n in ARMS if n in times)


def _judged(job: Job, replay: dict[str, list[float]], record: dict[str, list[float]],
            disk: dict[str, int], errors: dict[str, str]) -> list[Check]:  # fmt: skip
    k, what = key(job), title(job)
    floor = replay["floor"]
    failed = "; ".join(f"{NAMES[n]} failed: {e}" for n, e in errors.items())
    ran = _ran(replay)
    checks = [
        measured(TARGET, f"22-{k}-peer", f"{what}: replay, headerlock / the faster peer",
                 _per(replay, "headerlock", _faster(replay)), limit=FASTER,
                 a=f"headerlock: {seconds(replay['headerlock'])}",
                 b=", ".join(f"{p} {seconds(replay[p])}" for p in ran), note=failed,
                 rounds=replay),
    ]  # fmt: skip
    for peer in ran:
        checks.append(measured(TARGET, f"22-{k}-{peer}", f"{what}: replay, headerlock / {NAMES[peer]}",
                               _per(replay, "headerlock", replay[peer]), limit=None,
                               a=f"headerlock: {seconds(replay['headerlock'])}",
                               b=f"{NAMES[peer]}: {seconds(replay[peer])}"))  # fmt: skip
    for arm in ("headerlock", *ran):
        checks.append(measured(TARGET, f"22-{k}-floor-{arm}", f"{what}: replay, {NAMES[arm]} / the floor",
                               _per(replay, arm, floor), limit=FLOOR if arm == "headerlock" else None,
                               a=f"{NAMES[arm]}: {seconds(replay[arm])}",
                               b=f"floor (MockTransport): {seconds(floor)}"))  # fmt: skip
    checks.append(measured(
        TARGET, f"22-{k}-record", f"{what}: record cost, headerlock / the faster peer",
        _per(record, "headerlock", _faster(record)), limit=RECORD, a=_figures(record),
        b="floor = the same calls to the loopback server, no recorder", rounds=record,
    ))  # fmt: skip
    smaller = min(disk[p] for p in PEERS if p in disk)
    checks.append(measured(
        TARGET, f"22-{k}-bytes", f"{what}: bytes on disk, headerlock / the smaller peer",
        [disk["headerlock"] / smaller], limit=BYTES,
        a=f"headerlock: {disk['headerlock']:,} B",
        b=", ".join(f"{p} {disk[p]:,} B" for p in PEERS if p in disk),
    ))  # fmt: skip
    return checks


def _session(plan: Plan, replay: dict[str, dict[str, list[float]]],
             rss: dict[str, dict[str, list[float]]], sent: dict[str, int]) -> list[Check]:  # fmt: skip
    sessions = sorted(s.size for w, s in jobs(plan) if w == "session")
    if len(sessions) < 2:  # quick
        sessions = [*sessions, *sessions]
    small, big = f"session-{sessions[0]}", f"session-{sessions[-1]}"
    memory = rss[big]
    lower = _faster(memory)
    mb = {n: spread(v).median for n, v in memory.items()}
    per_kb = {
        k: [t * 1e6 / (sent[k] / 1024) for t in replay[k]["headerlock"]] for k in (small, big)
    }
    per_kb_floor = {
        k: [t * 1e6 / (sent[k] / 1024) for t in replay[k]["floor"]] for k in (small, big)
    }
    us = {k: spread(v).median for k, v in per_kb.items()}
    fl = {k: spread(v).median for k, v in per_kb_floor.items()}
    checks = [
        measured(TARGET, "22-memory", f"peak RSS, replay of one session of {sessions[-1]} growing "
                 "requests, headerlock / the lower peer", _per(memory, "headerlock", lower),
                 limit=MEMORY, a=f"headerlock: {mb['headerlock']:.0f} MB",
                 b=", ".join(f"{n} {v:.0f} MB" for n, v in mb.items() if n != "headerlock"),
                 note="whole process (ru_maxrss), interpreter included"),
        measured(TARGET, "22-per-kb", f"replay time per KB of request body, {sessions[-1]} / "
                 f"{sessions[0]} growing requests (headerlock; the two sizes run in separate "
                 "batches with their own round counts: the ratio of their medians)",
                 [us[big] / us[small]], limit=FLAT,
                 a=f"{sessions[-1]}: {us[big]:.2f} us/KB ({sent[big] / 1e6:.1f} MB sent)",
                 b=f"{sessions[0]}: {us[small]:.2f} us/KB ({sent[small] / 1e6:.2f} MB sent); floor "
                 f"{fl[big]:.2f} vs {fl[small]:.2f} us/KB"),
    ]  # fmt: skip
    return checks if small != big else checks[:1]  # quick: one session size, no 22-per-kb


def profile(plan: Plan, root: Path) -> dict[str, str]:
    """cProfile of headerlock's replay process, one per workload (the files of the run)."""
    folder = root / "files"
    port = int((folder / PORT_FILE).read_text(encoding="utf-8"))
    url = f"http://127.0.0.1:{port}/v1"
    sections: dict[str, str] = {}
    for job in jobs(plan):
        args = ["benchmarks.peer_process", "headerlock", "replay", str(folder), url,
                _spec([job], 1)]  # fmt: skip
        sections[f"cProfile of headerlock's replay, {title(job)}"] = profiles.profile_process(
            folder, args, env_for(folder), restrict=profiles.OURS
        )
    return sections
