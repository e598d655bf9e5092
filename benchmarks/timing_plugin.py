"""``-p benchmarks.timing_plugin``: write a session's seconds from collection to finish.

The time goes to the file named by ``$BENCH_TIMING``. It leaves out what every
run pays before its first test (interpreter start, plugin imports, configure),
so a per-test figure needs no start-up subtracted from a wall time.
"""

from __future__ import annotations

import os
import time
from collections.abc import Generator
from pathlib import Path

import pytest

_started: list[float] = []


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_collection(session: pytest.Session) -> Generator[None, object, object]:
    _started.append(time.perf_counter())
    return (yield)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(
    session: pytest.Session, exitstatus: int
) -> Generator[None, object, object]:
    result = yield
    target = os.environ.get("BENCH_TIMING")
    if target and _started:
        Path(target).write_text(repr(time.perf_counter() - _started[0]), encoding="utf-8")
    return result
