"""One arm of issue 22's in-process workloads, in a fresh interpreter.

``python -m benchmarks.peer_process ARM MODE DIR URL SPEC`` runs each workload
of ``SPEC`` (JSON: ``[[workload, size, events, reps], ...]``) ``reps`` times
under ``ARM``'s recorder and prints one JSON line: the seconds of every rep
(entering the recorder, loading or writing its file, the SDK calls, leaving
it), the bytes each recording takes on disk, the request-body bytes sent, and
the process's peak RSS. Arms: ``headerlock`` (``headerlock.wire.lock``),
``vcrpy`` (``vcr.use_cassette``, what pytest-recording runs), ``cassetter``
(``cassetter.use_cassette``) and ``floor`` (no recorder: a record talks to the
server, a replay gets the same bytes from an ``httpx2.MockTransport``).
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx2
import openai

from benchmarks.peer_calls import Size, drive, reply, requests_of

KEY = "sk-bench-not-a-key"


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size if path.exists() else 0


def _touched(path: Path) -> None:
    """A new modification time: every rep reads the file again, as a fresh pytest process
    does (headerlock keeps a recording it read while the file is unchanged)."""
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000))


def _recorder(arm: str, mode: str, path: Path) -> Callable[[], AbstractContextManager[Any]]:
    if arm == "headerlock":
        from headerlock.wire import lock

        return lambda: lock(path, mode="record" if mode == "record" else "replay")
    if arm == "vcrpy":
        import vcr  # type: ignore[import-untyped]

        recorder = vcr.VCR(match_on=["method", "path"], filter_headers=["authorization"],
                           record_mode="all" if mode == "record" else "none")  # fmt: skip
        return lambda: recorder.use_cassette(str(path))
    if arm == "cassetter":
        from cassetter import use_cassette

        record_mode = "all" if mode == "record" else "none"
        return lambda: use_cassette(path, record_mode=record_mode, intercept=["httpx2"])
    return contextlib.nullcontext


class _Floor:
    """The canned replies of one workload, served in request order by a MockTransport."""

    def __init__(self, workload: str, size: Size) -> None:
        total = requests_of(workload, size)
        self.replies = [reply(workload, n, size) for n in range(1, total + 1)]
        self.next = 0
        self.sent = 0

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        kind, body = self.replies[self.next % len(self.replies)]
        self.next += 1
        self.sent += len(request.content)
        return httpx2.Response(200, content=body, headers={"content-type": kind})


def _clients(url: str, floor: _Floor | None) -> Callable[[bool], Any]:
    """The SDK's client; the floor's routes every request to its ``MockTransport`` but is
    built as the SDK builds its own (with the default transport and its TLS context, some
    20 ms a client): the arms then differ by the recorder alone, not by client set-up."""

    def make(is_async: bool) -> Any:
        mounts: Any = None if floor is None else {"all://": httpx2.MockTransport(floor)}
        if is_async:
            http: Any = None if floor is None else httpx2.AsyncClient(mounts=mounts)
            return openai.AsyncOpenAI(base_url=url, api_key=KEY, max_retries=0, http_client=http)
        sync: Any = None if floor is None else httpx2.Client(mounts=mounts)
        return openai.OpenAI(base_url=url, api_key=KEY, max_retries=0, http_client=sync)

    return make


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Warnings of the recorders (e.g. cassetter's unplayed interactions) off the output."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _run(arm: str, mode: str, path: Path, workload: str, shape: Size, url: str, reps: int,
         results: dict[str, Any]) -> list[float]:  # fmt: skip
    floor = _Floor(workload, shape) if arm == "floor" and mode == "replay" else None
    recorder = _recorder(arm, mode, path)
    times = []
    with _quiet():
        for _ in range(reps):
            if mode == "record" and arm != "floor":
                path.unlink(missing_ok=True)
            if floor is not None:
                floor.next = floor.sent = 0
            if mode == "replay" and path.exists():
                _touched(path)
            started = time.perf_counter()
            with recorder():
                drive(workload, _clients(url, floor), shape)
            times.append(time.perf_counter() - started)
    if floor is not None:
        results["sent"][f"{workload}-{shape.size}"] = floor.sent
    return times


def main(argv: list[str]) -> int:
    """MODE ``record``, ``replay``, or ``both`` (quick: a record, then the replays, one process)."""
    arm, mode, folder, url, spec = argv
    results: dict[str, Any] = {"times": {}, "record": {}, "bytes": {}, "sent": {}}
    for workload, size, events, reps in json.loads(spec):
        name = f"{workload}-{size}"
        path = Path(folder) / f"{arm}-{name}.yaml"
        shape = Size(size, events)
        try:
            if mode in ("record", "both"):
                results["record"][name] = _run(
                    arm, "record", path, workload, shape, url, 1, results
                )
            if mode in ("replay", "both"):
                results["times"][name] = _run(
                    arm, "replay", path, workload, shape, url, reps, results
                )
        except Exception as error:  # a recorder that cannot do a workload: reported, not fatal
            results.setdefault("errors", {})[name] = f"{type(error).__name__}: {str(error)[:300]}"
        results["bytes"][name] = _size(path)
    results["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
