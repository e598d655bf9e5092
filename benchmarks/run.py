"""The benchmark runner. Each row: our figure, the baseline's, the ratio, the target.

Baselines are measured in the same process and run, so the ratios hold on a
noisy machine. ``--quick`` shrinks the workloads for a CI smoke run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import timeit
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml
from syrupy.extensions.amber.serializer import AmberDataSerializer

from benchmarks.workloads import (
    policy_for,
    recording_of,
    scenario_project,
    session_events,
    tool_set,
    tools_plugin,
)
from headerlock import Context, SystemPrompt, ToolRegistry, order_tools
from headerlock.formats.recording import load_recording, save_recording
from headerlock.formats.scrub import scrub_events
from headerlock.formats.strict_yaml import YAML_C, dumps
from headerlock.runtime.aio import run_sync
from headerlock.testing.order_check import check_scenario_orders
from headerlock.testing.project import Project
from headerlock.testing.replay import replay_scenario
from headerlock.testing.run import ModelSource
from headerlock.testing.scenarios import parse_fixture as parse_scenario

RESULTS = Path(__file__).parent / "results.json"
CLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
CDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


@dataclass
class Row:
    """One line of the table."""

    what: str
    ours: str
    baseline: str
    ratio: float | None
    target: str
    met: bool | None


def per_call(fn: Callable[[], Any], *, budget: float) -> float:
    """Seconds per call: the best of 5 repeats, each about ``budget / 5`` long."""
    number = 1
    while True:
        elapsed = timeit.timeit(fn, number=number)
        if elapsed >= budget / 5 or number >= 1_000_000:
            break
        number *= 2 if elapsed <= 0 else max(2, int(budget / 5 / elapsed) + 1)
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms"


def bench_ordering(sizes: Sequence[int], budget: float) -> tuple[list[Row], dict[str, float]]:
    rows: list[Row] = []
    at: dict[str, float] = {}
    for n in sizes:
        baseline, plain, listed, assemble = _ordering_figures(n, budget)
        at[f"order_tools/{n}"] = plain
        at[f"order_tools+policy/{n}"] = listed
        for label, value in (
            ("order_tools", plain),
            ("order_tools + tool_order", listed),
            ("assemble() + tool_order", assemble),
        ):
            ratio = value / baseline
            target = "<= 5x at 1,000 tools" if n == 1000 else "-"
            rows.append(
                Row(f"{label}, {n:,} tools", ms(value), f"sorted(): {ms(baseline)}", ratio, target,
                    ratio <= 5 if n == 1000 else None)
            )  # fmt: skip
    if 1000 in sizes and 10000 in sizes:
        # Growth is a ratio of two small timings: take the best of three
        # interleaved rounds, so one noisy round does not decide it.
        for _ in range(2):
            for n in (1000, 10000):
                base, plain, listed, _ = _ordering_figures(n, budget)
                at[f"sorted/{n}"] = min(at.get(f"sorted/{n}", base), base)
                at[f"order_tools/{n}"] = min(at[f"order_tools/{n}"], plain)
                at[f"order_tools+policy/{n}"] = min(at[f"order_tools+policy/{n}"], listed)
        base_growth = at["sorted/10000"] / at["sorted/1000"]
        for key in ("order_tools", "order_tools+policy"):
            growth = at[f"{key}/10000"] / at[f"{key}/1000"]
            rows.append(
                Row(f"{key} growth 1,000 -> 10,000 tools", f"{growth:.1f}x",
                    f"sorted() in the same rounds: {base_growth:.1f}x", growth, "<= 15x", growth <= 15)
            )  # fmt: skip
    return rows, at


def _ordering_figures(n: int, budget: float) -> tuple[float, float, float, float]:
    """Seconds per call: sorted() by name, order_tools, with a tool_order, assemble()."""
    tools = tool_set(n)
    policy = policy_for(tools)
    baseline = per_call(lambda: sorted(tools, key=lambda t: t.name), budget=budget)
    plain = per_call(lambda: order_tools(tools), budget=budget)
    listed = per_call(lambda: order_tools(tools, policy), budget=budget)
    ctx = Context()
    ctx.provide("tools", ToolRegistry())
    asyncio.run(ctx.plugin(tools_plugin(tools)))
    prompt = SystemPrompt(ctx, persona="p", tool_order=policy)
    loop = asyncio.new_event_loop()
    assemble = per_call(lambda: loop.run_until_complete(prompt.assemble()), budget=budget)
    loop_only = per_call(lambda: loop.run_until_complete(_noop()), budget=budget)
    loop.close()
    return baseline, plain, listed, max(assemble - loop_only, 0.0)


async def _noop() -> None:
    return None


def bench_serialization(events: list[dict[str, Any]], budget: float) -> list[Row]:
    recording = recording_of(events, pinned=False)
    data = recording.to_data()

    def ours() -> str:
        scrubbed = scrub_events(events, workspace="/nowhere")
        return dumps({**data, "events": scrubbed})

    ours_t = per_call(ours, budget=budget)
    c_dump = per_call(
        lambda: yaml.dump(data, Dumper=CDumper, sort_keys=True, default_flow_style=False,
                          allow_unicode=True, width=2**31 - 1),
        budget=budget,
    )  # fmt: skip
    amber = per_call(lambda: AmberDataSerializer.serialize(data), budget=budget)
    label = f"scrub + canonical YAML, {len(events):,} events"
    dumper = "C dumper" if YAML_C else "pure dumper (no libyaml)"
    return [
        Row(label, ms(ours_t), f"yaml.dump {dumper}: {ms(c_dump)}", ours_t / c_dump, "<= 1.5x",
            ours_t / c_dump <= 1.5),
        Row(label, ms(ours_t), f"syrupy amber: {ms(amber)}", ours_t / amber, "< 1x (faster)",
            ours_t < amber),
    ]  # fmt: skip


def bench_replay(events: list[dict[str, Any]], budget: float, root: Path) -> list[Row]:
    project_root = root / "replay"
    project_root.mkdir()
    (project_root / "fixtures").mkdir()
    steps = sum(1 for e in events if e["type"] == "step/start")
    fixture = project_root / "fixtures" / "long-turn.yaml"
    fixture.write_text(
        'pin: true\nconfig: {model: bench, persona: "Benchmark persona.\\nTwo lines.", '
        f"max_steps: {steps + 1}}}\nplugins: [benchmarks.workloads:nine_tools]\n"
        "steps: [{prompt: run the benchmark}]\nmodel: []\n"
    )
    scenario = parse_scenario(fixture.read_text(), fixture)
    path = project_root / "recordings" / "long-turn.yaml"
    save_recording(recording_of(events), path)
    text = path.read_text()

    def ours() -> None:
        recording = load_recording(path)
        run_sync(replay_scenario(scenario, recording))

    ours_t = per_call(ours, budget=budget)
    c_load = per_call(lambda: yaml.load(text, Loader=CLoader), budget=budget)
    return [
        Row(f"load + replay one recording, {len(events):,} events", ms(ours_t),
            f"C loader: {ms(c_load)}", ours_t / c_load, "<= 3x", ours_t / c_load <= 3),
    ]  # fmt: skip


def bench_permutations(budget: float, count: int) -> list[Row]:
    text = (
        "config: {model: bench}\n"
        "plugins: [" + ", ".join(f"benchmarks.workloads:tool_{i}" for i in range(9)) + "]\n"
        "steps: [{prompt: go}]\nmodel: [{tool_calls: [{name: t3}]}, {text: done}]\n"
    )
    scenario = parse_scenario(text, Path("nine-tools.yaml"))
    model = ModelSource(replies=scenario.model)
    started = time.perf_counter()
    ran = run_sync(check_scenario_orders(scenario, model, count))
    per_permutation = (time.perf_counter() - started) / ran
    from headerlock.testing.run import run_scenario

    plain = per_call(lambda: run_sync(run_scenario(scenario, model)), budget=budget)
    rate = 1 / per_permutation
    return [
        Row("permutation check, 9-tool scenario", f"{rate:.0f} orders/s ({ms(per_permutation)} each)",
            f"plain run: {ms(plain)}", per_permutation / plain, ">= 200 orders/s", rate >= 200),
    ]  # fmt: skip


def bench_memory(root: Path, target_events: int) -> list[Row]:
    events = session_events(target_events)
    path = root / "memory.yaml"
    save_recording(recording_of(events), path)
    size = path.stat().st_size
    steps = sum(1 for e in events if e["type"] == "step/start")
    fixture = root / "memory-turn.yaml"
    fixture.write_text(
        'pin: true\nconfig: {model: bench, persona: "Benchmark persona.\\nTwo lines.", '
        f"max_steps: {steps + 1}}}\nplugins: [benchmarks.workloads:nine_tools]\n"
        "steps: [{prompt: run the benchmark}]\nmodel: []\n"
    )
    scenario = parse_scenario(fixture.read_text(), fixture)
    text = path.read_text()
    tracemalloc.start()
    yaml.load(text, Loader=CLoader)
    _, loader_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    tracemalloc.start()
    recording = load_recording(path)
    run_sync(replay_scenario(scenario, recording))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    ratio = peak / size
    return [
        Row(f"peak memory replaying {len(events):,} events", f"{peak / 2**20:.1f} MB",
            f"file: {size / 2**20:.2f} MB", ratio, "<= 10x file size", ratio <= 10),
        Row(f"peak memory replaying {len(events):,} events", f"{peak / 2**20:.1f} MB",
            f"C loader alone: {loader_peak / 2**20:.1f} MB", peak / loader_peak, "(context)", None),
    ]  # fmt: skip


PLAIN_SYRUPY = """
import pathlib, yaml, pytest
FILES = sorted(pathlib.Path(__file__).parent.parent.joinpath("recordings").glob("*.yaml"))

@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_plain(path, snapshot):
    assert snapshot == yaml.load(path.read_text(), Loader=yaml.CSafeLoader)["events"]
"""


def _pytest(root: Path, *args: str) -> float:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), *sys.path]))
    # Let pytest cache its assertion rewrites, as on a developer's machine;
    # without that every process (and xdist worker) recompiles its plugins.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=root, env=env, capture_output=True, text=True, check=False, timeout=1800,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    if result.returncode not in (0, 5):
        raise RuntimeError(f"pytest {' '.join(args)} failed:\n{result.stdout[-3000:]}")
    return elapsed


def bench_pytest(root: Path, count: int) -> list[Row]:
    project_root = root / "pytest"
    scenario_project(project_root, count)
    (project_root / "pytest.ini").write_text("[pytest]\ntestpaths = fixtures\n")
    sys.path.insert(0, str(project_root))
    project = Project(project_root / "fixtures", project_root / "recordings")
    for scenario in project.scenarios():
        asyncio.run(project.record(scenario))
    plain_dir = project_root / "plain"
    plain_dir.mkdir()
    (plain_dir / "test_plain.py").write_text(PLAIN_SYRUPY)
    _pytest(project_root, "plain", "--snapshot-update")
    _pytest(project_root, "fixtures")  # warm the caches
    (project_root / "empty").mkdir()
    startup = min(_pytest(project_root, "empty") for _ in range(3))
    serial = _pytest(project_root, "fixtures")
    plain = _pytest(project_root, "plain")
    parallel = _pytest(project_root, "-n", "2", "fixtures")
    ours = (serial - startup) / count
    base = max((plain - startup) / count, 1e-6)
    speedup = serial / parallel
    return [
        Row(f"pytest replay of {count} scenarios, per test", ms(ours),
            f"plain syrupy assertion: {ms(base)}", ours / base, "<= 2x", ours / base <= 2),
        Row(f"pytest -n 2 vs serial, {count} scenarios", f"{parallel:.2f} s", f"serial: {serial:.2f} s",
            speedup, ">= 1.6x faster", speedup >= 1.6),
    ]  # fmt: skip


def render(rows: Sequence[Row]) -> list[str]:
    header = ("what", "ours", "baseline", "ratio", "target", "met")
    cells = [header] + [
        (r.what, r.ours, r.baseline, "-" if r.ratio is None else f"{r.ratio:.2f}", r.target,
         "-" if r.met is None else ("yes" if r.met else "NO"))
        for r in rows
    ]  # fmt: skip
    widths = [max(len(c[i]) for c in cells) for i in range(len(header))]
    lines = [
        "| " + " | ".join(c[i].ljust(widths[i]) for i in range(len(header))) + " |" for c in cells
    ]
    lines.insert(1, "| " + " | ".join("-" * w for w in widths) + " |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small workloads (CI smoke run)")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    quick = args.quick
    budget = 0.05 if quick else 0.5
    started = time.perf_counter()
    rows: list[Row] = []
    sizes = (10, 100, 1000, 10000)
    ordering, timings = bench_ordering(sizes, budget)
    rows += ordering
    events = session_events(1000)
    rows += bench_serialization(events, budget)
    with tempfile.TemporaryDirectory(prefix="headerlock-bench-") as temp:
        root = Path(temp)
        rows += bench_replay(events, budget, root)
        rows += bench_permutations(budget, 20 if quick else 200)
        rows += bench_memory(root, 2000 if quick else 10000)
        rows += bench_pytest(root, 40 if quick else 200)
    for line in render(rows):
        print(line)
    elapsed = time.perf_counter() - started
    print(f"\n{'quick' if quick else 'full'} run in {elapsed:.1f}s; YAML via "
          f"{'libyaml (C)' if YAML_C else 'pure Python'}; {platform.python_implementation()} "
          f"{platform.python_version()}, {os.cpu_count()} cores")  # fmt: skip
    args.output.write_text(
        json.dumps(
            {"quick": quick, "yaml_c": YAML_C, "seconds": round(elapsed, 1),
             "rows": [asdict(r) for r in rows]},
            indent=2, sort_keys=True,
        ) + "\n"
    )  # fmt: skip
    growth = timings["order_tools/10000"] / timings["order_tools/1000"]
    if growth > 50:
        print(
            f"order_tools grows {growth:.0f}x from 1,000 to 10,000 tools: quadratic",
            file=sys.stderr,
        )
        return 1
    return 0
