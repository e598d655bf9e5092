"""An ``app: wire`` fixture's ``entry:``: resolved through the guard of ``plugins:`` (project
code only) and called once per prompt within ``turn_timeout`` seconds.

A sync entry runs in a daemon thread (``headerlock.runtime.threads``) that nobody joins: at
the timeout the turn fails and the thread is abandoned, so a blocked agent never keeps the
process alive. An async entry runs on the driver's loop and is cancelled at the timeout (one
that blocks the loop itself cannot be interrupted: make such calls in a thread).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
from collections.abc import Callable
from typing import Any, Final

from headerlock.errors import ConfigError, ScenarioRunError
from headerlock.runtime.plugins import foreign_reason
from headerlock.runtime.threads import is_coroutine_callable, start_daemon, wait_awake

TURN_TIMEOUT: Final = 300.0
"""Seconds one call of an entry may take by default (``turn_timeout``)."""
ENTRY_SHAPE: Final = "an entry is a function of the project taking one prompt: entry(prompt)"


def _refused(spec: str, reason: str) -> str:
    return f"entry {spec!r} {reason}, not project code; {ENTRY_SHAPE}"


def check_entry(spec: str) -> str:
    """``spec`` when it may be an entry; a built-in or standard-library callable raises
    ``ValueError`` (a config validator). A module that fails to import is left to
    ``resolve_entry`` at run time, after a missing ``requires:`` module skipped the run."""
    module_name, _, attribute = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except (Exception, SystemExit):
        return spec
    reason = foreign_reason(module_name, getattr(module, attribute, None))
    if reason is not None:
        raise ValueError(_refused(spec, reason))
    return spec


def resolve_entry(spec: str) -> Callable[[str], Any]:
    """The callable named by ``module:attribute``; errors name the value."""
    module_name, _, attribute = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except (Exception, SystemExit) as error:
        raise ConfigError(
            f"entry {spec!r}: cannot import {module_name!r} ({type(error).__name__}: {error})",
            key="entry",
        ) from None
    target = getattr(module, attribute, None)
    reason = foreign_reason(module_name, target)
    if reason is not None:
        raise ConfigError(_refused(spec, reason), key="entry")
    if not callable(target):
        raise ConfigError(f"entry {spec!r}: {attribute!r} is not a callable", key="entry")
    return target  # type: ignore[no-any-return]


async def call_entry(
    entry: Callable[[str], Any],
    prompt: str,
    *,
    spec: str,
    scenario: str,
    turn: int,
    timeout: float,
) -> None:
    """``entry(prompt)``, awaited when it gives an awaitable, within ``timeout`` seconds.

    What the entry raises propagates (the driver makes it the turn's error); at the
    timeout a ``ScenarioRunError`` names the scenario, the turn, the entry and the timeout.
    """
    scope = asyncio.timeout(timeout)
    try:
        async with scope:
            if is_coroutine_callable(entry):
                result = entry(prompt)
            else:
                result = await wait_awake(start_daemon(entry, prompt, name="wire-entry"))
            if inspect.isawaitable(result):
                await result
    except TimeoutError:
        if not scope.expired():
            raise
        raise ScenarioRunError(
            f"scenario {scenario!r}: turn {turn}: entry {spec!r} did not return within"
            f" {timeout:g}s (turn_timeout); the agent was abandoned and the run ended",
            scenario=scenario,
        ) from None
