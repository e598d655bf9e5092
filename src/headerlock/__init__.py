"""headerlock: record, replay and lock the request headers an LLM agent sends.

What a test or an agent writes is here (``__all__``): the wire lock and its run, the
order checks and the tool-order fix, the cache report, the scenario ``Project`` and the
errors a test catches. The whole error tree is ``headerlock.errors``; the agent runtime
of the tool-order RFC is ``headerlock.agent``; the wire capture's full surface is
``headerlock.wire``; Hypothesis strategies are ``headerlock.strategies``.

Names resolve on first use, so ``import headerlock`` loads none of its heavy
dependencies (pydantic, PyYAML, deepdiff, Hypothesis, the SDKs). ``_PUBLIC`` is the one
list of them: ``__all__`` and ``__getattr__`` come from it, and the ``TYPE_CHECKING``
imports below mirror it for type checkers (a test checks). ``_MOVED`` names what used to
be importable from here: it still is, for one release, with a ``DeprecationWarning``
naming its new home.
"""

import typing as _typing

from headerlock._facade import facade as _facade
from headerlock.formats import vocabulary_source as _vocabulary_source

_registry_vocabulary: list[_typing.Callable[[], _typing.Any]] = []


def _every_api() -> _typing.Any:
    """What every registered model API hands the format layer (the registry loaded on first
    use; asked again each time, so a registry that changed is seen)."""
    if not _registry_vocabulary:
        from headerlock.testing.wire.apis import vocabulary

        _registry_vocabulary.append(vocabulary)
    return _registry_vocabulary[0]()


_vocabulary_source.provide(_every_api)

if _typing.TYPE_CHECKING:
    from headerlock.errors import (
        CacheBreakError as CacheBreakError,
        HeaderlockError as HeaderlockError,
        NetworkSealedError as NetworkSealedError,
        WireMismatch as WireMismatch,
        WireOrderError as WireOrderError,
        WireRecordingError as WireRecordingError,
    )
    from headerlock.testing.scenario.project import (
        Project as Project,
    )
    from headerlock.testing.wire.apis.tool_lists import (
        order_wire_tools as order_wire_tools,
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
        WireRequest as WireRequest,
        WireRun as WireRun,
    )

_PUBLIC = {
    "headerlock.errors": (
        "CacheBreakError",
        "HeaderlockError",
        "NetworkSealedError",
        "WireMismatch",
        "WireOrderError",
        "WireRecordingError",
    ),
    "headerlock.testing.wire.apis.tool_lists": ("order_wire_tools",),
    "headerlock.testing.scenario.project": ("Project",),
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
        "WireRequest",
        "WireRun",
    ),
}

_MOVED = {
    "AcpAppConfig": "headerlock.agent",
    "AgentApp": "headerlock.agent",
    "AgentError": "headerlock.errors",
    "AgentLoop": "headerlock.agent",
    "AppStateError": "headerlock.errors",
    "AssemblyError": "headerlock.errors",
    "CheckFailed": "headerlock.errors",
    "ConfigError": "headerlock.errors",
    "Context": "headerlock.agent",
    "CorruptLogError": "headerlock.errors",
    "Driver": "headerlock.agent",
    "Event": "headerlock.agent",
    "HeaderDelta": "headerlock.agent",
    "IgnoreRuleError": "headerlock.errors",
    "InputFileError": "headerlock.errors",
    "LlmService": "headerlock.agent",
    "LoopConfig": "headerlock.agent",
    "MissingRecordingError": "headerlock.errors",
    "ModelError": "headerlock.errors",
    "ModelRequest": "headerlock.agent",
    "OpenAICompatAdapter": "headerlock.agent",
    "OrderDependenceError": "headerlock.errors",
    "OrderRun": "headerlock.agent",
    "OutputFileError": "headerlock.errors",
    "PinError": "headerlock.errors",
    "PluginError": "headerlock.errors",
    "PluginExitError": "headerlock.errors",
    "PluginTimeoutError": "headerlock.errors",
    "PromptAssembly": "headerlock.agent",
    "ReconstructionError": "headerlock.errors",
    "Recording": "headerlock.agent",
    "RecordingClashError": "headerlock.errors",
    "RecordingError": "headerlock.errors",
    "RecordingRunError": "headerlock.errors",
    "RefusedPendingError": "headerlock.errors",
    "ReplayAdapter": "headerlock.agent",
    "ReplayError": "headerlock.errors",
    "ReplayMismatch": "headerlock.errors",
    "Reply": "headerlock.agent",
    "RequestHeader": "headerlock.agent",
    "Scenario": "headerlock.agent",
    "ScenarioError": "headerlock.errors",
    "ScenarioRunError": "headerlock.errors",
    "ScriptAmbiguityError": "headerlock.errors",
    "ScriptExhaustedError": "headerlock.errors",
    "ScriptedAdapter": "headerlock.agent",
    "Section": "headerlock.agent",
    "SerializationError": "headerlock.errors",
    "ServiceConflictError": "headerlock.errors",
    "ServiceError": "headerlock.errors",
    "ServiceNotFoundError": "headerlock.errors",
    "SessionLog": "headerlock.agent",
    "SpineConfig": "headerlock.agent",
    "StalePendingError": "headerlock.errors",
    "StdioAppConfig": "headerlock.agent",
    "SystemDelta": "headerlock.agent",
    "SystemPrompt": "headerlock.agent",
    "SystemPromptConfig": "headerlock.agent",
    "TOOL_ORDER_REST": "headerlock.agent",
    "TextDelta": "headerlock.agent",
    "ToolCallRequest": "headerlock.agent",
    "ToolExecutionError": "headerlock.errors",
    "ToolInputError": "headerlock.errors",
    "ToolOrderError": "headerlock.errors",
    "ToolRegistrationError": "headerlock.errors",
    "ToolRegistry": "headerlock.agent",
    "ToolSchema": "headerlock.agent",
    "ToolsDelta": "headerlock.agent",
    "TurnBusyError": "headerlock.errors",
    "TurnReason": "headerlock.agent",
    "TurnResult": "headerlock.agent",
    "UnorderedValueError": "headerlock.errors",
    "WireOwnershipError": "headerlock.errors",
    "WireToolError": "headerlock.errors",
    "WorkspaceError": "headerlock.errors",
    "YamlError": "headerlock.errors",
    "apply_header_delta": "headerlock.agent",
    "assert_plugin_order_invariant": "headerlock.agent",
    "assert_plugin_order_invariant_async": "headerlock.agent",
    "available_drivers": "headerlock.agent",
    "diff_header": "headerlock.agent",
    "fold_request_header": "headerlock.agent",
    "get_driver": "headerlock.agent",
    "load_recording": "headerlock.agent",
    "load_scenario": "headerlock.agent",
    "order_tools": "headerlock.agent",
    "parse_config": "headerlock.agent",
    "validate_tool_order": "headerlock.agent",
}

__all__, __getattr__, __dir__ = _facade(__name__, _PUBLIC, globals(), moved=_MOVED)
