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

Names resolve on first use, so importing this module loads no HTTP client or SDK;
``_PUBLIC`` lists them once (``__all__`` and ``__getattr__`` come from it).
"""

import typing as _typing

from headerlock._facade import facade as _facade

if _typing.TYPE_CHECKING:
    from headerlock.errors import (
        ScriptExhaustedError as ScriptExhaustedError,
    )
    from headerlock.errors import (
        WireMismatch as WireMismatch,
    )
    from headerlock.errors import (
        WireOrderError as WireOrderError,
    )
    from headerlock.errors import (
        WireRecordingError as WireRecordingError,
    )
    from headerlock.runtime.wire_tools import (
        order_wire_tools as order_wire_tools,
    )
    from headerlock.testing.wire.lock import (
        WireHeader as WireHeader,
    )
    from headerlock.testing.wire.lock import (
        WireLock as WireLock,
    )
    from headerlock.testing.wire.lock import (
        WireRequest as WireRequest,
    )
    from headerlock.testing.wire.lock import (
        WireRun as WireRun,
    )
    from headerlock.testing.wire.lock import (
        lock as lock,
    )
    from headerlock.testing.wire.order import (
        assert_order_invariant as assert_order_invariant,
    )
    from headerlock.testing.wire.order import (
        assert_order_invariant_async as assert_order_invariant_async,
    )
    from headerlock.testing.wire.recipes import (
        order_by_name as order_by_name,
    )
    from headerlock.testing.wire.recipes import (
        pydantic_ai_prepare_tools as pydantic_ai_prepare_tools,
    )

_PUBLIC = {
    "headerlock.errors": (
        "ScriptExhaustedError",
        "WireMismatch",
        "WireOrderError",
        "WireRecordingError",
    ),
    "headerlock.runtime.wire_tools": ("order_wire_tools",),
    "headerlock.testing.wire.lock": (
        "WireHeader",
        "WireLock",
        "WireRequest",
        "WireRun",
        "lock",
    ),
    "headerlock.testing.wire.order": (
        "assert_order_invariant",
        "assert_order_invariant_async",
    ),
    "headerlock.testing.wire.recipes": (
        "order_by_name",
        "pydantic_ai_prepare_tools",
    ),
}

__all__, __getattr__, __dir__ = _facade(__name__, _PUBLIC, globals())
