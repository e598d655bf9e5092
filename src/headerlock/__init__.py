"""headerlock: record and replay the request headers an LLM agent sends.

Top-level names resolve on first use, so ``import headerlock`` loads none of
its heavy dependencies (pydantic, PyYAML, deepdiff, Hypothesis, the SDKs).
``_PUBLIC`` is the one list of them: ``__all__`` and ``__getattr__`` come from it,
and the ``TYPE_CHECKING`` imports below mirror it for type checkers (a test checks).
"""

import typing as _typing

from headerlock._facade import facade as _facade

if _typing.TYPE_CHECKING:
    from headerlock.errors import (
        AgentError as AgentError,
        AppStateError as AppStateError,
        AssemblyError as AssemblyError,
        CacheBreakError as CacheBreakError,
        CheckFailed as CheckFailed,
        ConfigError as ConfigError,
        CorruptLogError as CorruptLogError,
        HeaderlockError as HeaderlockError,
        IgnoreRuleError as IgnoreRuleError,
        InputFileError as InputFileError,
        MissingRecordingError as MissingRecordingError,
        ModelError as ModelError,
        NetworkSealedError as NetworkSealedError,
        OrderDependenceError as OrderDependenceError,
        OutputFileError as OutputFileError,
        PinError as PinError,
        PluginError as PluginError,
        PluginExitError as PluginExitError,
        PluginTimeoutError as PluginTimeoutError,
        ReconstructionError as ReconstructionError,
        RecordingClashError as RecordingClashError,
        RecordingError as RecordingError,
        RecordingRunError as RecordingRunError,
        RefusedPendingError as RefusedPendingError,
        ReplayError as ReplayError,
        ReplayMismatch as ReplayMismatch,
        ScenarioError as ScenarioError,
        ScenarioRunError as ScenarioRunError,
        ScriptAmbiguityError as ScriptAmbiguityError,
        ScriptExhaustedError as ScriptExhaustedError,
        SerializationError as SerializationError,
        ServiceConflictError as ServiceConflictError,
        ServiceError as ServiceError,
        ServiceNotFoundError as ServiceNotFoundError,
        StalePendingError as StalePendingError,
        ToolExecutionError as ToolExecutionError,
        ToolInputError as ToolInputError,
        ToolOrderError as ToolOrderError,
        ToolRegistrationError as ToolRegistrationError,
        TurnBusyError as TurnBusyError,
        UnorderedValueError as UnorderedValueError,
        WireMismatch as WireMismatch,
        WireOrderError as WireOrderError,
        WireOwnershipError as WireOwnershipError,
        WireRecordingError as WireRecordingError,
        WireToolError as WireToolError,
        WorkspaceError as WorkspaceError,
        YamlError as YamlError,
    )
    from headerlock.formats.fixture import (
        Scenario as Scenario,
    )
    from headerlock.formats.recording import (
        Recording as Recording,
        load_recording as load_recording,
    )
    from headerlock.runtime.adapters.openai_compat import (
        OpenAICompatAdapter as OpenAICompatAdapter,
    )
    from headerlock.runtime.adapters.recorded import (
        ReplayAdapter as ReplayAdapter,
    )
    from headerlock.runtime.adapters.scripted import (
        Reply as Reply,
        ScriptedAdapter as ScriptedAdapter,
    )
    from headerlock.runtime.app import (
        AgentApp as AgentApp,
    )
    from headerlock.runtime.config import (
        AcpAppConfig as AcpAppConfig,
        LoopConfig as LoopConfig,
        SpineConfig as SpineConfig,
        StdioAppConfig as StdioAppConfig,
        SystemPromptConfig as SystemPromptConfig,
        parse_config as parse_config,
    )
    from headerlock.runtime.context import (
        Context as Context,
    )
    from headerlock.runtime.driver import (
        Driver as Driver,
    )
    from headerlock.runtime.header import (
        HeaderDelta as HeaderDelta,
        RequestHeader as RequestHeader,
        SystemDelta as SystemDelta,
        ToolsDelta as ToolsDelta,
        apply_header_delta as apply_header_delta,
        diff_header as diff_header,
        fold_request_header as fold_request_header,
    )
    from headerlock.runtime.llm import (
        LlmService as LlmService,
        ModelRequest as ModelRequest,
        TextDelta as TextDelta,
        ToolCallRequest as ToolCallRequest,
    )
    from headerlock.runtime.loop import (
        AgentLoop as AgentLoop,
        TurnReason as TurnReason,
        TurnResult as TurnResult,
    )
    from headerlock.runtime.session import (
        Event as Event,
        SessionLog as SessionLog,
    )
    from headerlock.runtime.system_prompt import (
        PromptAssembly as PromptAssembly,
        Section as Section,
        SystemPrompt as SystemPrompt,
    )
    from headerlock.runtime.tool_order import (
        TOOL_ORDER_REST as TOOL_ORDER_REST,
        order_tools as order_tools,
        validate_tool_order as validate_tool_order,
    )
    from headerlock.runtime.tools import (
        ToolRegistry as ToolRegistry,
        ToolSchema as ToolSchema,
    )
    from headerlock.runtime.wire_tools import (
        order_wire_tools as order_wire_tools,
    )
    from headerlock.testing.order.plugin_orders import (
        OrderRun as OrderRun,
        assert_plugin_order_invariant as assert_plugin_order_invariant,
        assert_plugin_order_invariant_async as assert_plugin_order_invariant_async,
    )
    from headerlock.testing.scenario.drivers import (
        available_drivers as available_drivers,
        get_driver as get_driver,
    )
    from headerlock.testing.scenario.fixtures import (
        load_scenario as load_scenario,
    )
    from headerlock.testing.scenario.project import (
        Project as Project,
    )
    from headerlock.testing.wire.order import (
        assert_order_invariant as assert_order_invariant,
        assert_order_invariant_async as assert_order_invariant_async,
    )

_PUBLIC = {
    "headerlock.errors": (
        "AgentError",
        "AppStateError",
        "AssemblyError",
        "CacheBreakError",
        "CheckFailed",
        "ConfigError",
        "CorruptLogError",
        "HeaderlockError",
        "IgnoreRuleError",
        "InputFileError",
        "MissingRecordingError",
        "ModelError",
        "NetworkSealedError",
        "OrderDependenceError",
        "OutputFileError",
        "PinError",
        "PluginError",
        "PluginExitError",
        "PluginTimeoutError",
        "ReconstructionError",
        "RecordingClashError",
        "RecordingError",
        "RecordingRunError",
        "RefusedPendingError",
        "ReplayError",
        "ReplayMismatch",
        "ScenarioError",
        "ScenarioRunError",
        "ScriptAmbiguityError",
        "ScriptExhaustedError",
        "SerializationError",
        "ServiceConflictError",
        "ServiceError",
        "ServiceNotFoundError",
        "StalePendingError",
        "ToolExecutionError",
        "ToolInputError",
        "ToolOrderError",
        "ToolRegistrationError",
        "TurnBusyError",
        "UnorderedValueError",
        "WireMismatch",
        "WireOrderError",
        "WireOwnershipError",
        "WireRecordingError",
        "WireToolError",
        "WorkspaceError",
        "YamlError",
    ),
    "headerlock.formats.fixture": ("Scenario",),
    "headerlock.formats.recording": (
        "Recording",
        "load_recording",
    ),
    "headerlock.runtime.adapters.openai_compat": ("OpenAICompatAdapter",),
    "headerlock.runtime.adapters.recorded": ("ReplayAdapter",),
    "headerlock.runtime.adapters.scripted": (
        "Reply",
        "ScriptedAdapter",
    ),
    "headerlock.runtime.app": ("AgentApp",),
    "headerlock.runtime.config": (
        "AcpAppConfig",
        "LoopConfig",
        "SpineConfig",
        "StdioAppConfig",
        "SystemPromptConfig",
        "parse_config",
    ),
    "headerlock.runtime.context": ("Context",),
    "headerlock.runtime.driver": ("Driver",),
    "headerlock.runtime.header": (
        "HeaderDelta",
        "RequestHeader",
        "SystemDelta",
        "ToolsDelta",
        "apply_header_delta",
        "diff_header",
        "fold_request_header",
    ),
    "headerlock.runtime.llm": (
        "LlmService",
        "ModelRequest",
        "TextDelta",
        "ToolCallRequest",
    ),
    "headerlock.runtime.loop": (
        "AgentLoop",
        "TurnReason",
        "TurnResult",
    ),
    "headerlock.runtime.session": (
        "Event",
        "SessionLog",
    ),
    "headerlock.runtime.system_prompt": (
        "PromptAssembly",
        "Section",
        "SystemPrompt",
    ),
    "headerlock.runtime.tool_order": (
        "TOOL_ORDER_REST",
        "order_tools",
        "validate_tool_order",
    ),
    "headerlock.runtime.tools": (
        "ToolRegistry",
        "ToolSchema",
    ),
    "headerlock.runtime.wire_tools": ("order_wire_tools",),
    "headerlock.testing.order.plugin_orders": (
        "OrderRun",
        "assert_plugin_order_invariant",
        "assert_plugin_order_invariant_async",
    ),
    "headerlock.testing.scenario.drivers": (
        "available_drivers",
        "get_driver",
    ),
    "headerlock.testing.scenario.fixtures": ("load_scenario",),
    "headerlock.testing.scenario.project": ("Project",),
    "headerlock.testing.wire.order": (
        "assert_order_invariant",
        "assert_order_invariant_async",
    ),
}

__all__, __getattr__, __dir__ = _facade(__name__, _PUBLIC, globals())
