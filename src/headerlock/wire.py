"""Wire capture (public): record, replay, pin and order-check any agent at the HTTP layer.

Works with every client built on ``httpx2`` or ``httpx`` (the official OpenAI and
Anthropic SDKs, pydantic-ai, openai-agents, LangChain/LangGraph, litellm's
OpenAI path), for the OpenAI chat completions, OpenAI responses and Anthropic
messages APIs::

    from headerlock import wire

    with wire.lock("recordings/agent.yaml", mode="record", script=[{"text": "hi"}]):
        run_my_agent("hello")

    with wire.lock("recordings/agent.yaml"):  # replay: no network, compared request by request
        run_my_agent("hello")

Names resolve on first use, so importing this module loads no HTTP client or SDK.
"""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from headerlock.errors import (
        ScriptExhaustedError,
        WireMismatch,
        WireOrderError,
        WireRecordingError,
    )
    from headerlock.runtime.wire_tools import order_wire_tools
    from headerlock.testing.wire.lock import WireHeader, WireLock, WireRequest, WireRun, lock
    from headerlock.testing.wire.order import (
        assert_order_invariant,
        assert_order_invariant_async,
    )
    from headerlock.testing.wire.recipes import order_by_name, pydantic_ai_prepare_tools

_LAZY: dict[str, str] = {
    "ScriptExhaustedError": "headerlock.errors",
    "WireHeader": "headerlock.testing.wire.lock",
    "WireLock": "headerlock.testing.wire.lock",
    "WireMismatch": "headerlock.errors",
    "WireOrderError": "headerlock.errors",
    "WireRecordingError": "headerlock.errors",
    "WireRequest": "headerlock.testing.wire.lock",
    "WireRun": "headerlock.testing.wire.lock",
    "assert_order_invariant": "headerlock.testing.wire.order",
    "assert_order_invariant_async": "headerlock.testing.wire.order",
    "lock": "headerlock.testing.wire.lock",
    "order_by_name": "headerlock.testing.wire.recipes",
    "order_wire_tools": "headerlock.runtime.wire_tools",
    "pydantic_ai_prepare_tools": "headerlock.testing.wire.recipes",
}

__all__ = [
    "ScriptExhaustedError",
    "WireHeader",
    "WireLock",
    "WireMismatch",
    "WireOrderError",
    "WireRecordingError",
    "WireRequest",
    "WireRun",
    "assert_order_invariant",
    "assert_order_invariant_async",
    "lock",
    "order_by_name",
    "order_wire_tools",
    "pydantic_ai_prepare_tools",
]


def __getattr__(name: str) -> object:
    """Resolve a public name on first use and cache it on the module."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'headerlock.wire' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
