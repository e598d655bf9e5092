"""Load schedules: plugin orders and per-plugin delays that change completion order."""

from __future__ import annotations

import asyncio
import functools
import inspect
import itertools
import math
import random
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from headerlock.runtime.context import Plugin


@dataclass(frozen=True, slots=True)
class LoadSchedule:
    """How plugins start loading: ``order`` (indices into the plugin list), and per
    plugin (by position in ``order``) a delay in seconds and a number of extra yields."""

    order: tuple[int, ...]
    delays: tuple[float, ...] = ()
    yields: tuple[int, ...] = ()

    def describe(self, names: Sequence[str]) -> str:
        """``b, a, c`` plus the delays and yields that were not zero."""
        parts = [names[i] for i in self.order]
        text = ", ".join(parts)
        timing = [
            f"{names[i]}: {d * 1000:.1f}ms/{y} yields"
            for i, d, y in zip(self.order, self.delays, self.yields, strict=False)
            if d or y
        ]
        return f"{text}" + (f" (load delays {'; '.join(timing)})" if timing else "")

    def apply(self, plugins: Sequence[Plugin]) -> list[Plugin]:
        """``plugins`` in this order, each wrapped to wait before it loads."""
        ordered = [plugins[i] for i in self.order]
        delays = self.delays or (0.0,) * len(ordered)
        yields = self.yields or (0,) * len(ordered)
        return [delayed(p, d, y) for p, d, y in zip(ordered, delays, yields, strict=True)]


def delayed(plugin: Plugin, delay: float, yields: int) -> Plugin:
    """``plugin``, made to yield ``yields`` times and sleep ``delay`` seconds first."""
    if not delay and not yields:
        return plugin

    @functools.wraps(plugin)
    async def wrapper(*args: Any) -> None:
        for _ in range(yields):
            await asyncio.sleep(0)
        if delay:
            await asyncio.sleep(delay)
        result = plugin(*args)
        if inspect.isawaitable(result):
            await result

    return wrapper


def schedules(count: int, size: int, *, seed: str) -> list[LoadSchedule]:
    """``count`` distinct schedules over ``size`` plugins, the same for the same ``seed``.

    The first is the identity order. When ``count`` covers every permutation,
    each order appears once; otherwise orders are sampled. Distinct yield counts
    then shuffle completion order too; unlike timed delays, they cost no timer
    wake-up (about a millisecond each).
    """
    if count <= 0:
        return []
    rng = random.Random(zlib.crc32(seed.encode("utf-8")))
    identity = tuple(range(size))
    if count >= math.factorial(size):
        orders = [tuple(p) for p in itertools.permutations(identity)]
    else:
        seen = {identity}
        orders = [identity]
        while len(orders) < count:
            candidate = tuple(rng.sample(identity, size))
            if candidate not in seen:
                seen.add(candidate)
                orders.append(candidate)
    result = [LoadSchedule(identity, (0.0,) * size, (0,) * size)]
    for order in orders[1:count]:
        result.append(LoadSchedule(order, (0.0,) * size, tuple(rng.sample(range(size), size))))
    return result
