"""Running a coroutine from synchronous code."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, returning its result without making the task hold it.

    On CPython 3.11, ``asyncio.run`` formats ``repr(task)`` (result included)
    when it restores the SIGINT handler; for a large result (a whole session)
    that costs more than the run itself.
    """
    box: list[T] = []

    async def main() -> None:
        box.append(await coro)

    asyncio.run(main())
    return box[0]
