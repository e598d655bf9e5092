"""Order invariance for any agent: the order of its items must not change its requests.

``assert_order_invariant(run, items, script=...)`` calls ``run(order)`` under
Hypothesis-chosen permutations of ``items`` (the identity and the reversed
order always among them), each inside ``lock(None, mode="record",
script=script)``, and compares every request body, byte for byte, with the
identity order's. A failure names the minimal pair of orders and where the
first request differs (request, api, segment, tool, byte offset).

It varies the order of the items it is given, in this process. It may not see an
order that comes from the hash seed, such as a tool list built from a ``set``: within
one process that order moves with the insertion order only where hashes collide
(``SEED_NOTE``). ``headerlock flakes
<test>`` runs a ``headerlock_wire`` test in fresh processes under varied hash seeds and
catches it.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from hypothesis import HealthCheck, Phase, example, given, settings, strategies as st

from headerlock.errors import ConfigError, UnorderedValueError, WireOrderError
from headerlock.formats.tool_sets import compare_tool_names
from headerlock.runtime.adapters.scripted import ReplySpec
from headerlock.runtime.aio import run_sync
from headerlock.testing.wire.apis import Split, split_body
from headerlock.testing.wire.compare import first_offset, snippet
from headerlock.testing.wire.lock import lock
from headerlock.testing.wire.recipes import item_name
from headerlock.testing.wire.run import WireRequest

T = TypeVar("T")
Order = tuple[int, ...]
Wait = Callable[[Awaitable[object]], None]
"""Awaits what ``run`` returned (on a fresh loop, or on the caller's)."""

LABEL_WIDTH = 40
FIX = (
    "Send the tools in a deterministic order: headerlock.order_wire_tools(tools) for"
    " SDK tool dicts, order_by_name(tools) for framework tool objects, or"
    " PrepareTools(pydantic_ai_prepare_tools) in pydantic-ai."
)
SEED_NOTE = (
    "This check varies registration order only; it may not see a list built from a set"
    " (its order changes with the hash seed, within a process only on a collision): run"
    " the agent's headerlock_wire test under `headerlock flakes <test>` for that."
)


@dataclass(frozen=True, slots=True)
class _Outcome:
    """What one run under one order did: its requests and what it raised."""

    requests: tuple[WireRequest, ...]
    error: Exception | None
    key: tuple[object, ...]

    @classmethod
    def of(cls, requests: Sequence[WireRequest], error: Exception | None) -> _Outcome:
        sent = tuple((r.api, r.body) for r in requests)
        failed = None if error is None else f"{type(error).__name__}: {error}"
        return cls(tuple(requests), error, (sent, failed))


async def _await(awaitable: Awaitable[object]) -> None:
    await awaitable


def _fresh_loop(awaitable: Awaitable[object]) -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        run_sync(_await(awaitable))
        return
    if inspect.iscoroutine(awaitable):
        awaitable.close()
    raise ConfigError(
        "run returned an awaitable inside a running event loop;"
        " await assert_order_invariant_async(...) instead",
        key="run",
    )


def _capture(
    run: Callable[[list[T]], object], items: list[T], script: Sequence[ReplySpec], wait: Wait
) -> _Outcome:
    requests: list[WireRequest] = []
    try:
        with lock(None, mode="record", script=script) as wire:
            requests = wire.requests
            result = run(items)
            if inspect.isawaitable(result):
                wait(result)
    except Exception as error:
        return _Outcome.of(requests, error)
    return _Outcome.of(requests, None)


def _listed(items: Iterable[T]) -> list[T]:
    if isinstance(items, (set, frozenset)):
        raise UnorderedValueError(
            "items is a set: its order changes with PYTHONHASHSEED; pass a list", key="items"
        )
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
        hint = " (for a dict, pass list(d.values()))" if isinstance(items, Mapping) else ""
        raise ConfigError(
            f"items must be a list of the agent's items, got {type(items).__name__}{hint}",
            key="items",
        )
    return list(items)


def item_label(item: object) -> str:
    """How a report names an item: a string itself, else its tool name,
    ``__name__`` or a short repr."""
    name = item if isinstance(item, str) else item_name(item)
    if name is not None:
        return name
    text = repr(item)
    return text if len(text) <= LABEL_WIDTH else f"{text[: LABEL_WIDTH - 3]}..."


def _labels(items: Sequence[object]) -> list[str]:
    labels = [item_label(item) for item in items]
    if len(set(labels)) == len(labels):
        return labels
    return [f"{label}#{index}" for index, label in enumerate(labels)]


def _inversions(order: Order) -> int:
    return sum(a > b for i, a in enumerate(order) for b in order[i + 1 :])


def _swap(order: Order, i: int) -> Order:
    return (*order[:i], order[i + 1], order[i], *order[i + 2 :])


def _minimize(found: Order, differs: Callable[[Order], bool]) -> Order:
    """A failing order one transposition from the identity if there is one, else one
    where undoing any remaining adjacent inversion makes the bodies equal again."""
    if _inversions(found) <= 1:
        return found
    identity = tuple(range(len(found)))
    for i in range(len(found) - 1):
        if differs(_swap(identity, i)):
            return _swap(identity, i)
    current, improved = found, True
    while improved:
        improved = False
        for i in range(len(current) - 1):
            if current[i] > current[i + 1] and differs(_swap(current, i)):
                current, improved = _swap(current, i), True
                break
    return current


class _Diverged(AssertionError):
    def __init__(self, order: Order) -> None:
        super().__init__(f"request bodies differ under order {order}")
        self.order = order


def _diverged(error: BaseException) -> _Diverged | None:
    if isinstance(error, _Diverged):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            if (found := _diverged(inner)) is not None:
                return found
    return None


@dataclass(frozen=True, slots=True)
class _Where:
    """Where two outcomes first differ."""

    lines: tuple[str, ...]
    request: int | None = None
    api: str | None = None
    segment: str | None = None
    tool: str | None = None
    offset: int | None = None


def _tools_detail(a: Split, b: Split) -> tuple[str | None, str]:
    """The first differing tool (named as in the first order) and what differs."""
    first, second = a.tool_names, b.tool_names
    if first != second:
        change = compare_tool_names(first, second)
        if sorted(first) == sorted(second):  # (duplicates counted)
            at = next(i for i, (x, y) in enumerate(zip(first, second, strict=True)) if x != y)
            return first[at], (
                f"the same {len(first)} tools in another order: position {at + 1} is"
                f" {first[at]} in the first order, {second[at]} in the second"
            )
        parts = [f"only in the first: {', '.join(change.removed)}"] if change.removed else []
        parts += [f"only in the second: {', '.join(change.added)}"] if change.added else []
        tool = change.first_changed
        return tool, "different tools; " + ("; ".join(parts) or f"{first} -> {second}")
    try:
        spans = a.api.tool_spans
        pairs = zip(spans(a.tools_raw), spans(b.tools_raw), strict=True)
        for index, ((s1, e1), (s2, e2)) in enumerate(pairs):
            x, y = a.tools_raw[s1:e1], b.tools_raw[s2:e2]
            if x != y:
                same = json.loads(x) == json.loads(y)
                how = "the same data in other bytes (JSON key order)" if same else "changed"
                return first[index], f"tool {first[index]} at position {index + 1}: {how}"
    except ValueError:
        pass
    return None, "the tools' bytes differ"


def _segment(a: Split, b: Split) -> tuple[str, str | None, str]:
    if a.tools_raw != b.tools_raw:
        return ("tools", *_tools_detail(a, b))
    if a.system_raw != b.system_raw:
        return "system", None, "the system prompt differs"
    if a.config != b.config:
        keys = sorted(k for k in {*a.config, *b.config} if a.config.get(k) != b.config.get(k))
        return "config", None, f"config keys differ: {', '.join(keys)}"
    if a.messages != b.messages:
        return "messages", None, "the messages differ"
    return "body", None, "the same fields in other bytes (JSON key order or spacing)"


def _request_where(a: WireRequest, b: WireRequest) -> _Where:
    offset = first_offset(a.body, b.body)
    head = f"request {b.number} ({b.api})"
    if a.api != b.api:
        return _Where((f"{head}: api {a.api} in the first order",), b.number, b.api, "api")
    try:
        segment, tool, detail = _segment(split_body(a.api, a.body), split_body(b.api, b.body))
    except ValueError:
        segment, tool, detail = "body", None, "the bodies differ"
    lines = (
        f"{head}, {segment}: {detail}",
        f"first differing byte {offset} of the body: first {snippet(a.body, offset)},"
        f" second {snippet(b.body, offset)}",
    )
    return _Where(lines, b.number, b.api, segment, tool, offset)


def _where(a: _Outcome, b: _Outcome) -> _Where:
    for ra, rb in zip(a.requests, b.requests, strict=False):
        if (ra.api, ra.body) != (rb.api, rb.body):
            where = _request_where(ra, rb)
            break
    else:
        count = len(a.requests), len(b.requests)
        if count[0] == count[1]:
            where = _Where(())
        else:
            extra = (a.requests if count[0] > count[1] else b.requests)[min(count)]
            line = f"the first order sent {count[0]} requests, the second {count[1]}"
            where = _Where((line,), extra.number, extra.api, "request")
    raised = [
        f"{name} order raised {type(o.error).__name__}: {o.error}"
        for name, o in (("the first", a), ("the second", b))
        if o.error is not None
    ]
    return replace(where, lines=(*where.lines, *raised))


def _failure(
    labels: Sequence[str], first: Order, second: Order, a: _Outcome, b: _Outcome
) -> WireOrderError:
    where = _where(a, b)
    first_labels = [labels[i] for i in first]
    second_labels = [labels[i] for i in second]
    if first == second:
        head = (
            "the same order gave different request bodies in two runs: the agent is not"
            " deterministic (a random id, a timestamp?), so its order cannot be checked"
        )
    else:
        head = "the order of the agent's items changed its request bodies (minimal pair)"
    lines = [
        head,
        f"  first order:  [{', '.join(first_labels)}]",
        f"  second order: [{', '.join(second_labels)}]",
        *(f"  {line}" for line in where.lines),
    ]
    if where.segment == "tools" and first != second:
        lines.append(FIX)
    lines.append(SEED_NOTE)
    return WireOrderError(
        "\n".join(lines),
        first_order=first_labels,
        second_order=second_labels,
        request=where.request,
        api=where.api,
        segment=where.segment,
        tool=where.tool,
        offset=where.offset,
    )


def _check(
    run: Callable[[list[T]], object],
    items: list[T],
    script: Sequence[ReplySpec],
    max_examples: int,
    shrink: bool,
    wait: Wait,
) -> None:
    labels = _labels(items)
    identity: Order = tuple(range(len(items)))

    def outcome_of(order: Order) -> _Outcome:
        return _capture(run, [items[i] for i in order], script, wait)

    baseline = outcome_of(identity)
    if baseline.error is not None:
        raise baseline.error  # the agent fails in its own order: not an order problem
    if len(items) < 2:
        return
    again = outcome_of(identity)
    if again.key != baseline.key:
        raise _failure(labels, identity, identity, baseline, again) from again.error
    seen = {identity: baseline}

    def differs(order: Order) -> bool:
        if order not in seen:
            seen[order] = outcome_of(order)
        return seen[order].key != baseline.key

    @settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink)
        if shrink
        else (Phase.explicit, Phase.reuse, Phase.generate),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @example(list(identity))
    @example(list(reversed(identity)))
    @given(st.permutations(list(identity)))
    def check(order: list[int]) -> None:
        if differs(tuple(order)):
            raise _Diverged(tuple(order))  # cheap while Hypothesis shrinks

    try:
        check()
    except (AssertionError, BaseExceptionGroup) as error:
        diverged = _diverged(error)
        if diverged is None:
            raise
        found = _minimize(diverged.order, differs) if shrink else diverged.order
    else:
        return
    raise _failure(labels, identity, found, baseline, seen[found]) from seen[found].error


def _max_examples(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"max_examples must be an int >= 1, got {value!r}", key="max_examples")
    return value


def assert_order_invariant(
    run: Callable[[list[T]], object],
    items: Iterable[T],
    *,
    script: Sequence[ReplySpec],
    max_examples: int = 50,
    shrink: bool = True,
) -> None:
    """Call ``run(order)`` for many orders of ``items``; every request body must match.

    ``run`` builds the agent from the items in the order given and runs it
    (sync, or async: a returned awaitable is awaited on a fresh event loop);
    each call runs inside ``lock(None, mode="record", script=script)``, so the
    scripted model answers and nothing is sent. The identity and the reversed
    order always run. Raises ``WireOrderError`` naming the minimal pair of
    orders and where the first request differs (``shrink=False``: the first
    differing order found, sooner). Inside a running event loop, await
    ``assert_order_invariant_async`` instead.

    It cannot see an order set by the hash seed (a tool list built from a ``set``):
    that is the same in every call of one process, so such an agent passes. Run its
    ``headerlock_wire`` test under ``headerlock flakes <test>`` (fresh processes,
    varied hash seeds) to catch it.
    """
    listed = _listed(items)
    _check(run, listed, script, _max_examples(max_examples), shrink, _fresh_loop)


async def assert_order_invariant_async(
    run: Callable[[list[T]], object],
    items: Iterable[T],
    *,
    script: Sequence[ReplySpec],
    max_examples: int = 50,
    shrink: bool = True,
) -> None:
    """``assert_order_invariant`` from async code: an async ``run`` runs on the
    caller's event loop (Hypothesis drives the orders from a worker thread). Like it,
    it may not see a list built from a ``set``: use ``headerlock flakes <test>``."""
    listed = _listed(items)
    examples = _max_examples(max_examples)
    loop = asyncio.get_running_loop()

    def wait(awaitable: Awaitable[object]) -> None:
        asyncio.run_coroutine_threadsafe(_await(awaitable), loop).result()

    await asyncio.to_thread(_check, run, listed, script, examples, shrink, wait)
