"""Issue 31 target 4: linear record and mismatch paths.

- ``31-record-steps``: a scenario recorded with a scripted model (the agent loop, the
  reconstructability check, a tool call per step, then the run normalized and its
  recording written), CPU seconds per step at 32,000 over at 1,000 steps (goal <= 1.3x).
- ``31-mismatch``: a wire replay of 3,000 independent chat requests (OpenAI SDK, loopback
  recording) that all mismatch their recording (each answered with the 400 that names
  the closest recorded request), over the same replay where they all match (goal <= 1.5x).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import time
from pathlib import Path
from typing import Any

from benchmarks.model import Check, Plan, measured
from benchmarks.stats import ratios, run_rounds
from benchmarks.wire_server import serving
from benchmarks.workloads import recording_of, tool_set, tools_plugin

REFERENCE_STEPS = 1_000


def _steps(plan: Plan) -> tuple[int, int]:
    return (500, 4_000) if plan.quick else (REFERENCE_STEPS, 32_000)


def record_steps(steps: int, path: Path) -> float:
    """CPU seconds per step of recording a ``steps``-step scenario to ``path``."""
    from headerlock.formats.atomic import atomic_write
    from headerlock.runtime.adapters.scripted import ScriptedAdapter
    from headerlock.runtime.app import AgentApp

    replies: list[Any] = [
        {"text": f"step {i} ", "tool_calls": [{"name": "tool_00001", "arguments": {"path": f"f{i}.txt"}}]}
        for i in range(steps - 1)
    ]  # fmt: skip
    replies.append("done")
    gc.collect()
    started = time.process_time()
    app = AgentApp(
        {"model": "bench", "persona": "Benchmark persona.", "max_steps": steps + 1},
        plugins=[tools_plugin(tool_set(9))],
        adapter=ScriptedAdapter(replies, keep_requests=False),  # as the scenario driver runs it
    )

    async def go() -> None:
        async with app:
            await app.run_turn("run the benchmark")

    asyncio.run(go())
    atomic_write(path, recording_of(app.session.to_data(), pinned=False).to_text())
    return (time.process_time() - started) / steps


def _completion(body: dict[str, Any], number: int) -> tuple[str, bytes]:
    message = {"role": "assistant", "content": f"answer {number}"}
    data = {"id": f"chatcmpl-{number}", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}  # fmt: skip
    return "application/json", json.dumps(data).encode()


def _drive(url: str, count: int, word: str) -> None:
    import openai

    client = openai.OpenAI(base_url=url, api_key="sk-bench-not-a-key", max_retries=0)
    for i in range(count):
        with contextlib.suppress(openai.BadRequestError):  # a mismatch: a 400 says why
            client.chat.completions.create(model="m", messages=[
                {"role": "user", "content": f"{word} {i}: what is in notes.txt?"}])  # fmt: skip


def _replay(path: Path, url: str, count: int, word: str) -> float:
    from headerlock.errors import HeaderlockError
    from headerlock.wire import lock

    started = time.process_time()
    try:
        with lock(path, mode="replay"):
            _drive(url, count, word)
    except HeaderlockError:
        if word == "Question":
            raise
    return time.process_time() - started


def linear(plan: Plan, root: Path) -> list[Check]:
    """Record time per step at two sizes; mismatching over matching replay."""
    small, big = _steps(plan)
    arms = {str(n): lambda n=n: record_steps(n, root / f"steps-{n}.yaml") for n in (small, big)}
    per_step = run_rounds(arms, min(plan.rounds, 3), warmup=0, budget=plan.budget)
    us = {k: sorted(v)[len(v) // 2] * 1e6 for k, v in per_step.items()}
    checks = [measured(
        31, "31-record-steps", f"scenario record, CPU time per step at {big:,} / at {small:,} steps",
        ratios(per_step, str(big), str(small)), limit=1.3,
        a=f"{big:,}: {us[str(big)]:.0f} us/step", b=f"{small:,}: {us[str(small)]:.0f} us/step",
        rounds=per_step,
    )]  # fmt: skip
    count = 300 if plan.quick else 3_000
    path = root / "mismatch.yaml"
    with serving(_completion) as url:
        from headerlock.wire import lock

        with lock(path, mode="record"):
            _drive(url, count, "Question")
        replays = {"match": lambda: _replay(path, url, count, "Question"),
                   "mismatch": lambda: _replay(path, url, count, "Asking")}  # fmt: skip
        times = run_rounds(replays, min(plan.rounds, 3), warmup=0, budget=plan.budget)
    checks.append(measured(
        31, "31-mismatch", f"wire replay of {count:,} requests that all mismatch / that all match",
        ratios(times, "mismatch", "match"), limit=1.5,
        a=f"mismatch: {sorted(times['mismatch'])[len(times['mismatch']) // 2]:.2f} s CPU",
        b=f"match: {sorted(times['match'])[len(times['match']) // 2]:.2f} s CPU", rounds=times,
    ))  # fmt: skip
    return checks


def profile(plan: Plan, root: Path) -> dict[str, str]:
    """cProfile of the big record and of one mismatching replay."""
    import cProfile
    import io
    import pstats

    def text(run: Any) -> str:
        found = cProfile.Profile(time.process_time)
        found.runcall(run)
        out = io.StringIO()
        pstats.Stats(found, stream=out).sort_stats("tottime").print_stats(25)
        return out.getvalue()

    big = _steps(plan)[1]
    sections = {f"record {big:,} steps": text(lambda: record_steps(big, root / "p.yaml"))}
    count = 300 if plan.quick else 3_000
    path = root / "profile-mismatch.yaml"
    with serving(_completion) as url:
        from headerlock.wire import lock

        with lock(path, mode="record"):
            _drive(url, count, "Question")
        sections[f"mismatching replay of {count:,}"] = text(
            lambda: _replay(path, url, count, "Asking")
        )
    return sections
