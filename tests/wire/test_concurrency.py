"""Concurrent requests under a wire lock: one recording byte string whatever the hash
seed and completion order, replays that pass whatever the arrival order, scripted
``match:`` replies, the race check, and which lock owns which thread.

The record runs (live against the loopback server, and scripted with ``match:``) each
happen in a fresh interpreter per ``PYTHONHASHSEED``, 8 concurrent tool loops via
``asyncio.gather`` (``AsyncOpenAI``) and via a ``ThreadPoolExecutor`` (``OpenAI``); the
server and the agent wait a different small time per seed and job, so the jobs finish
in a different order in every run.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import openai
import pytest

from headerlock.errors import ScriptAmbiguityError, WireMismatch, WireOwnershipError
from headerlock.runtime.adapters.scripted import Reply
from headerlock.testing.wire.lock import lock
from headerlock.testing.wire.run import WireRun
from tests.model_server import ModelServer, serve
from tests.wire.agents import CLOSED
from tests.wire.concurrent_jobs import (
    AGENTS,
    EXPECTED,
    KEY,
    REPLAYS,
    SEEDS,
    N,
    live_answer,
    matched_script,
    pauses,
    pool_agent,
    prompt,
    queue_agent,
    record_seeds,
    sync_job,
)


@pytest.fixture(scope="module")
def seeded(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ModelServer, dict[str, set[bytes]]]]:
    """The live server (its record hits) and every seed's recordings, by file name."""
    with serve() as server:
        server.route("*/chat/completions", live_answer)
        yield server, record_seeds(server.base_url, tmp_path_factory.mktemp("seeds"))


def test_every_seed_records_the_same_bytes(
    seeded: tuple[ModelServer, dict[str, set[bytes]]],
) -> None:
    server, found = seeded
    assert sorted(found) == [
        "gather-live.yaml",
        "gather-script.yaml",
        "pool-live.yaml",
        "pool-script.yaml",
        "queue-live.yaml",
        "queue-script.yaml",
    ]
    distinct = {name: len(versions) for name, versions in found.items()}
    assert distinct == dict.fromkeys(found, 1)
    # each live record sent 16 requests to the server; the scripted ones sent none
    assert len(server.hits) == len(SEEDS) * len(AGENTS) * 2 * N
    text = next(iter(found["gather-live.yaml"])).decode()
    assert text.count("api: openai.chat") == 2 * N
    # canonical order: job 0's two requests first, then job 1's, ... never by arrival
    assert [text.index(prompt(i)) for i in range(N)] == sorted(
        text.index(prompt(i)) for i in range(N)
    )


@pytest.mark.parametrize("source", ["live", "script"])
@pytest.mark.parametrize("kind", sorted(AGENTS))
def test_replays_pass_in_any_arrival_order_with_no_hit(
    kind: str, source: str, seeded: tuple[ModelServer, dict[str, set[bytes]]], tmp_path: Path
) -> None:
    server, found = seeded
    path = tmp_path / "r.yaml"
    path.write_bytes(next(iter(found[f"{kind}-{source}.yaml"])))
    before = len(server.hits)
    passed = 0
    for attempt in range(REPLAYS):
        with lock(path) as run:
            answers = AGENTS[kind](server.base_url, pauses(100 + attempt))
        assert answers == EXPECTED and run.differences == []
        passed += 1
    assert passed == REPLAYS
    assert len(server.hits) == before  # nothing reached the server while replaying


def test_a_replay_matches_by_content_not_position(tmp_path: Path) -> None:
    """Requests sent in the reverse of the recorded order still get their own answers."""
    path = tmp_path / "r.yaml"
    with lock(path, mode="record", script=matched_script()):
        assert pool_agent("http://127.0.0.1:9/v1", lambda i, step: 0.0) == EXPECTED
    client = openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key=KEY, max_retries=0)
    with lock(path):
        answers = [sync_job(client, i, lambda i, step: 0.0) for i in reversed(range(N))]
    assert answers == EXPECTED[::-1]


# -- scripted replies: match: and the race check ---------------------------------------


def _ask(client: openai.AsyncOpenAI, text: str) -> Any:
    return client.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": text}]
    )


async def _ask_all(texts: list[str]) -> list[str]:
    client = openai.AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key=KEY, max_retries=0)
    async with client:
        replies = await asyncio.gather(*(_ask(client, t) for t in texts))
    return [r.choices[0].message.content or "" for r in replies]


def test_positional_replies_that_differ_under_gather_are_an_ambiguity_error() -> None:
    texts = [f"question {i}" for i in range(N)]
    script = [f"answer {i}" for i in range(N)]
    with (
        pytest.raises(ScriptAmbiguityError, match=r"ran at the same time.*match:") as caught,
        lock(None, mode="record", script=script),
    ):
        asyncio.run(_ask_all(texts))
    assert len(caught.value.requests) >= 2
    assert set(caught.value.requests) <= set(range(1, N + 1))
    assert f"requests {caught.value.requests[0]} and" in str(caught.value)
    # the requests are named by their text too: arrival numbers change from run to run
    assert re.search(r"\(last user messages 'question \d' and 'question \d'\)", str(caught.value))


def test_positional_replies_that_differ_in_a_thread_pool_are_an_ambiguity_error() -> None:
    client = openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key=KEY, max_retries=0)

    def ask(i: int) -> str:
        reply = client.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": f"q {i}"}]
        )
        return reply.choices[0].message.content or ""

    def agent() -> None:
        with ThreadPoolExecutor(max_workers=N) as pool:
            list(pool.map(ask, range(N)))

    script = [f"answer {i}" for i in range(N)]
    with (
        pytest.raises(ScriptAmbiguityError, match=r"requests \d+ and \d+ ran at the same time"),
        lock(None, mode="record", script=script),
    ):
        agent()


def test_positional_replies_are_fine_when_they_do_not_race() -> None:
    """The same reply for every concurrent request, or distinct replies taken one after
    the other, is no race."""
    with lock(None, mode="record", script=["same"] * N) as run:
        assert asyncio.run(_ask_all([f"q {i}" for i in range(N)])) == ["same"] * N
    assert len(run.requests) == N
    with lock(None, mode="record", script=["one", "two"]):
        assert asyncio.run(_ask_all(["a"])) == ["one"]
        assert asyncio.run(_ask_all(["b"])) == ["two"]


def test_match_replies_answer_their_own_concurrent_requests() -> None:
    texts = [f"question {i}" for i in range(N)]
    script = [
        {"text": f"answer {i}", "match": {"user": f"question {i}"}} for i in reversed(range(N))
    ]
    with lock(None, mode="record", script=script):
        assert asyncio.run(_ask_all(texts)) == [f"answer {i}" for i in range(N)]


def test_match_works_on_parsed_replies_too() -> None:
    """A ``Reply`` (an ``app: wire`` fixture's ``model:``, a recording's replies) carries
    its ``match`` into the script."""
    texts = [f"question {i}" for i in range(N)]
    script = [Reply(text=f"answer {i}", match={"user": f"question {i}"}) for i in range(N)]
    with lock(None, mode="record", script=script[::-1]):
        assert asyncio.run(_ask_all(texts)) == [f"answer {i}" for i in range(N)]


def test_tool_call_replies_that_differ_only_in_their_ids_do_not_race() -> None:
    """Recordings number tool call ids in order of appearance, so which request got which
    id is moot (an ``app: wire`` replay's recorded replies differ only so)."""
    script = [{"tool_calls": [{"name": "look", "id": f"call_{i}"}]} for i in range(N)]
    with lock(None, mode="record", script=script) as run:
        asyncio.run(_ask_all([f"q {i}" for i in range(N)]))
    assert len(run.requests) == N


def test_a_runs_requests_are_in_one_order_whichever_worker_took_which_job() -> None:
    """Three worker threads pull the jobs from a queue: which worker sends which job
    changes with the pauses, the run's requests (what an ``app: wire`` session log is
    built from) do not: each job's two requests, job by job."""
    orders = set()
    for seed in range(4):
        with lock(None, mode="record", script=matched_script()) as run:
            assert queue_agent(CLOSED, pauses(seed)) == EXPECTED
        users = [m["content"] for r in run.requests for m in r.messages if m["role"] == "user"]
        orders.add(tuple(users))
    assert orders == {tuple(prompt(i) for i in range(N) for _ in range(2))}


# -- which lock owns a thread ----------------------------------------------------------


def _ask_sync(text: str) -> str:
    client = openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key=KEY, max_retries=0)
    reply = client.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": text}]
    )
    return reply.choices[0].message.content or ""


def _in_thread(text: str) -> str:
    out: list[str] = []
    worker = threading.Thread(target=lambda: out.append(_ask_sync(text)))
    worker.start()
    worker.join()
    return out[0]


def _in_pool(text: str) -> str:
    with ThreadPoolExecutor(max_workers=2) as pool:
        return pool.submit(_ask_sync, text).result()


def _in_to_thread(text: str) -> str:
    async def main() -> str:
        return await asyncio.to_thread(_ask_sync, text)

    return asyncio.run(main())


SPAWNERS = {"thread": _in_thread, "pool": _in_pool, "to_thread": _in_to_thread}


@pytest.mark.parametrize("spawn", sorted(SPAWNERS))
def test_locks_in_two_threads_keep_the_requests_of_the_threads_they_start(
    spawn: str, tmp_path: Path
) -> None:
    """Two locks open at once, each in its own thread; each starts workers that send:
    every worker's request is its own lock's, in record and in replay."""
    barrier = threading.Barrier(2)
    results: dict[str, tuple[list[str], WireRun]] = {}
    errors: list[BaseException] = []

    def work(name: str, mode: str) -> None:
        try:
            script = [f"{name} {k}" for k in range(3)] if mode == "record" else None
            with lock(tmp_path / f"{name}.yaml", mode=mode, script=script) as run:  # type: ignore[arg-type]
                barrier.wait(timeout=10)
                answers = [SPAWNERS[spawn](f"{name} asks {k}") for k in range(3)]
                barrier.wait(timeout=10)
            results[name] = (answers, run)
        except BaseException as error:  # reported by the test's thread
            errors.append(error)
            barrier.abort()

    for mode in ("record", "replay"):
        results.clear()
        threads = [threading.Thread(target=work, args=(n, mode)) for n in ("a", "b")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        for name in ("a", "b"):
            answers, run = results[name]
            assert answers == [f"{name} {k}" for k in range(3)], mode
            assert [r.messages for r in run.requests] == [
                [{"role": "user", "content": f"{name} asks {k}"}] for k in range(3)
            ], mode


@pytest.fixture
def two_recordings(tmp_path: Path) -> tuple[Path, Path]:
    paths = (tmp_path / "a.yaml", tmp_path / "b.yaml")
    for name, path in zip("ab", paths, strict=True):
        with lock(path, mode="record", script=[f"{name} answer"]):
            assert _ask_sync(f"{name} asks") == f"{name} answer"
    return paths


def test_a_request_no_lock_owns_while_two_are_open_is_an_ownership_error(
    two_recordings: tuple[Path, Path],
) -> None:
    """A thread started before the locks opened belongs to neither: its request is an
    error in both, never filed under one of them."""
    go, done = threading.Event(), threading.Event()
    seen: list[BaseException] = []

    def outsider() -> None:
        go.wait(timeout=10)
        try:
            _ask_sync("who owns me?")
        except Exception as error:  # the SDK lets it through unwrapped
            seen.append(error)
        finally:
            done.set()

    stray = threading.Thread(target=outsider)
    stray.start()
    opened = threading.Barrier(2)
    failures: dict[str, BaseException | None] = {}

    def work(name: str, path: Path) -> None:
        try:
            with lock(path):
                _ask_sync(f"{name} asks")
                opened.wait(timeout=10)
                go.set()
                done.wait(timeout=10)
            failures[name] = None
        except BaseException as error:
            failures[name] = error

    threads = [
        threading.Thread(target=work, args=(n, p))
        for n, p in zip("ab", two_recordings, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in [*threads, stray]:
        thread.join()
    assert [type(e) for e in seen] == [WireOwnershipError]
    assert "POST /v1/chat/completions was sent by code that no open wire lock owns" in str(seen[0])
    assert "2 locks are open" in str(seen[0])
    for name in "ab":
        assert isinstance(failures[name], WireMismatch), failures[name]
        assert "no open wire lock owns" in str(failures[name])
