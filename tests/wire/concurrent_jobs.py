"""Concurrent jobs on the real OpenAI SDK clients for ``test_concurrency``: 8 tool loops
via ``asyncio.gather`` (``AsyncOpenAI``), via a ``ThreadPoolExecutor`` (``OpenAI``) and
pulled from a queue by 3 worker threads; the loopback model that answers them by
content, and the record runs of one hash seed.

Imports only ``openai`` and headerlock (no pytest, no anthropic): each seed's records
run in a fresh interpreter (``python -m tests.wire.concurrent_jobs BASE SEED OUT``).
"""

from __future__ import annotations

import asyncio
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import openai

from headerlock.testing.wire.lock import lock
from headerlock.testing.wire.script import render_reply
from tests.model_server import Answer, Hit

KEY = "sk-test-not-a-real-key-0001"

N = 8
SEEDS = range(10)
REPLAYS = 20
ROOT = Path(__file__).resolve().parents[2]

Pause = Callable[[int, int], float]


def pauses(seed: int) -> Pause:
    """How long job ``i`` waits before its ``step``-th request under ``seed`` (0-15 ms)."""
    return lambda i, step: ((seed * 7 + i * 5 + step * 3) % 6) * 0.003


def prompt(i: int) -> str:
    return f"job {i}: look up item {i}."


def tool(i: int) -> str:
    return f"lookup_{i}"


def matched_script() -> list[dict[str, Any]]:
    """Two replies per job, each saying which request it answers, listed in an order
    no run sends them in."""
    replies: list[dict[str, Any]] = []
    for i in reversed(range(N)):
        replies.append({"text": f"done {i}", "match": {"tool_result": tool(i)}})
        call = {"name": tool(i), "arguments": {"q": str(i)}}
        replies.append({"tool_calls": [call], "match": {"user": f"job {i}:"}})
    return replies


def fn_tool(name: str) -> dict[str, Any]:
    parameters = {"type": "object", "properties": {"q": {"type": "string"}}}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


def _tools(i: int) -> Any:
    return [fn_tool(tool(i))]


def _messages(i: int) -> list[Any]:
    return [
        {"role": "system", "content": "You dispatch jobs."},
        {"role": "user", "content": prompt(i)},
    ]


def _follow_up(messages: list[Any], first: Any, i: int) -> None:
    message = first.choices[0].message
    [call] = message.tool_calls
    assert call.function.name == tool(i), (i, call.function.name)
    messages.append(message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": f"item {i}: 3 left"})


async def _async_job(client: openai.AsyncOpenAI, i: int, pause: Pause) -> str:
    messages, tools = _messages(i), _tools(i)
    await asyncio.sleep(pause(i, 0))
    first = await client.chat.completions.create(model="gpt-test", messages=messages, tools=tools)
    _follow_up(messages, first, i)
    await asyncio.sleep(pause(i, 1))
    if i % 2:  # odd jobs stream their answer
        stream = await client.chat.completions.create(
            model="gpt-test",
            messages=messages,
            tools=tools,
            stream=True,
        )
        return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    second = await client.chat.completions.create(model="gpt-test", messages=messages, tools=tools)
    return second.choices[0].message.content or ""


def sync_job(client: openai.OpenAI, i: int, pause: Pause) -> str:
    messages, tools = _messages(i), _tools(i)
    time.sleep(pause(i, 0))
    first = client.chat.completions.create(model="gpt-test", messages=messages, tools=tools)
    _follow_up(messages, first, i)
    time.sleep(pause(i, 1))
    if i % 2:
        stream = client.chat.completions.create(
            model="gpt-test",
            messages=messages,
            tools=tools,
            stream=True,
        )
        return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    second = client.chat.completions.create(model="gpt-test", messages=messages, tools=tools)
    return second.choices[0].message.content or ""


def gather_agent(base: str, pause: Pause, headers: dict[str, str] | None = None) -> list[str]:
    """8 jobs at once on one ``AsyncOpenAI`` client, via ``asyncio.gather``."""

    async def main() -> list[str]:
        client = openai.AsyncOpenAI(
            base_url=base, api_key=KEY, max_retries=0, default_headers=headers
        )
        async with client:
            return list(await asyncio.gather(*(_async_job(client, i, pause) for i in range(N))))

    return asyncio.run(main())


def pool_agent(base: str, pause: Pause, headers: dict[str, str] | None = None) -> list[str]:
    """8 jobs at once on one ``OpenAI`` client, via a ``ThreadPoolExecutor``."""
    client = openai.OpenAI(base_url=base, api_key=KEY, max_retries=0, default_headers=headers)
    with client, ThreadPoolExecutor(max_workers=N) as pool:
        return list(pool.map(lambda i: sync_job(client, i, pause), range(N)))


def queue_agent(base: str, pause: Pause, headers: dict[str, str] | None = None) -> list[str]:
    """8 jobs pulled from a ``queue.Queue`` by 3 worker threads: which worker sends which
    job depends on timing (the recording must not)."""
    client = openai.OpenAI(base_url=base, api_key=KEY, max_retries=0, default_headers=headers)
    jobs: queue.Queue[int] = queue.Queue()
    for i in range(N):
        jobs.put(i)
    out = [""] * N

    def worker() -> None:
        while True:
            try:
                i = jobs.get_nowait()
            except queue.Empty:
                return
            out[i] = sync_job(client, i, pause)

    workers = [threading.Thread(target=worker) for _ in range(3)]
    with client:
        for thread in workers:
            thread.start()
        for thread in workers:
            thread.join()
    return out


AGENTS = {"gather": gather_agent, "pool": pool_agent, "queue": queue_agent}
EXPECTED = [f"done {i}" for i in range(N)]


def live_answer(hit: Hit) -> Answer:
    """The loopback model: answers each request by its content (job ``i``'s tool call,
    then ``done i``), after a delay that depends on the ``x-seed`` header and the job."""
    request = hit.json()
    user = next(m["content"] for m in request["messages"] if m["role"] == "user")
    i = int(user.split(":")[0].split()[-1])
    answered = any(m["role"] == "tool" for m in request["messages"])
    call = {"name": tool(i), "arguments": {"q": str(i)}}
    reply: Any = {"text": f"done {i}"} if answered else {"tool_calls": [call]}
    status, content_type, body = render_reply(
        "openai.chat", request, reply, index=2 * i + answered, path=hit.path
    )
    delay = ((int(hit.headers.get("x-seed", "0")) * 3 + i * 7 + answered) % 5) * 0.004
    return Answer(status, body, content_type, delay=delay)


def record_all(base: str, seed: int, out: Path) -> None:
    """The four records of one seed (run in a subprocess with that ``PYTHONHASHSEED``)."""
    headers = {"x-seed": str(seed)}
    for kind, agent in AGENTS.items():
        with lock(out / f"{kind}-live.yaml", mode="record"):
            assert agent(base, pauses(seed), headers) == EXPECTED
        with lock(out / f"{kind}-script.yaml", mode="record", script=matched_script()):
            assert agent(base, pauses(seed), headers) == EXPECTED


def record_seeds(base: str, out: Path) -> dict[str, set[bytes]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")])}
    running = []
    for seed in SEEDS:
        folder = out / f"seed-{seed}"
        folder.mkdir()
        running.append(
            subprocess.Popen(
                [sys.executable, "-m", "tests.wire.concurrent_jobs", base, str(seed), str(folder)],
                env={**env, "PYTHONHASHSEED": str(seed)},
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
        )
    for seed, process in zip(SEEDS, running, strict=True):
        output, _ = process.communicate(timeout=120)
        assert process.returncode == 0, f"seed {seed}:\n{output.decode()}"
    found: dict[str, set[bytes]] = {}
    for seed in SEEDS:
        for path in sorted((out / f"seed-{seed}").iterdir()):
            found.setdefault(path.name, set()).add(path.read_bytes())
    return found


def main(argv: list[str]) -> None:
    base, seed, out = argv
    record_all(base, int(seed), Path(out))


if __name__ == "__main__":
    main(sys.argv[1:])
