"""Wire capture (public): record, replay, pin and order-check any agent at the HTTP layer.

Sees the requests sent through ``httpx2``/``httpx`` default transports (the official
OpenAI, Anthropic and google-genai SDKs, pydantic-ai, openai-agents, LangChain/LangGraph),
``aiohttp`` (litellm's async path, the OpenAI SDK's ``DefaultAioHttpClient``) and
``urllib3`` (``requests``, botocore), for the OpenAI chat completions, OpenAI responses,
Anthropic messages and Gemini ``generateContent`` APIs. A custom transport that answers
by itself (``httpx.MockTransport``) is not seen. While a lock replays, the network is
sealed: other traffic is replayed from the recording or refused::

    from headerlock import wire

    with wire.lock("recordings/agent.yaml", mode="all", script=[{"text": "hi"}]):  # record
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
        CacheBreakError as CacheBreakError,
        IgnoreRuleError as IgnoreRuleError,
        NetworkSealedError as NetworkSealedError,
        ScriptAmbiguityError as ScriptAmbiguityError,
        ScriptExhaustedError as ScriptExhaustedError,
        WireMismatch as WireMismatch,
        WireOrderError as WireOrderError,
        WireRecordingError as WireRecordingError,
    )
    from headerlock.testing.wire.apis.tool_lists import (
        order_wire_tools as order_wire_tools,
    )
    from headerlock.testing.wire.cache.findings import (
        CacheFinding as CacheFinding,
    )
    from headerlock.testing.wire.cache.report import (
        CacheReport as CacheReport,
        assert_cache_stable as assert_cache_stable,
        cache_report as cache_report,
    )
    from headerlock.testing.wire.lock import (
        WireLock as WireLock,
        lock as lock,
    )
    from headerlock.testing.wire.order import (
        assert_order_invariant as assert_order_invariant,
        assert_order_invariant_async as assert_order_invariant_async,
    )
    from headerlock.testing.wire.recipes import (
        order_by_name as order_by_name,
        pydantic_ai_prepare_tools as pydantic_ai_prepare_tools,
    )
    from headerlock.testing.wire.run import (
        WireHeader as WireHeader,
        WireRequest as WireRequest,
        WireRun as WireRun,
    )

_PUBLIC = {
    "headerlock.errors": (
        "CacheBreakError",
        "IgnoreRuleError",
        "NetworkSealedError",
        "ScriptAmbiguityError",
        "ScriptExhaustedError",
        "WireMismatch",
        "WireOrderError",
        "WireRecordingError",
    ),
    "headerlock.testing.wire.apis.tool_lists": ("order_wire_tools",),
    "headerlock.testing.wire.cache.findings": ("CacheFinding",),
    "headerlock.testing.wire.cache.report": (
        "CacheReport",
        "assert_cache_stable",
        "cache_report",
    ),
    "headerlock.testing.wire.lock": (
        "WireLock",
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
    "headerlock.testing.wire.run": (
        "WireHeader",
        "WireRequest",
        "WireRun",
    ),
}

__all__, __getattr__, __dir__ = _facade(__name__, _PUBLIC, globals())
