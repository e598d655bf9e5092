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
    )
    from headerlock.errors import (
        AppStateError as AppStateError,
    )
    from headerlock.errors import (
        AssemblyError as AssemblyError,
    )
    from headerlock.errors import (
        CheckFailed as CheckFailed,
    )
    from headerlock.errors import (
        ConfigError as ConfigError,
    )
    from headerlock.errors import (
        CorruptLogError as CorruptLogError,
    )
    from headerlock.errors import (
        HeaderlockError as HeaderlockError,
    )
    from headerlock.errors import (
        InputFileError as InputFileError,
    )
    from headerlock.errors import (
        MissingRecordingError as MissingRecordingError,
    )
    from headerlock.errors import (
        ModelError as ModelError,
    )
    from headerlock.errors import (
        OrderDependenceError as OrderDependenceError,
    )
    from headerlock.errors import (
        OutputFileError as OutputFileError,
    )
    from headerlock.errors import (
        PinError as PinError,
    )
    from headerlock.errors import (
        PluginError as PluginError,
    )
    from headerlock.errors import (
        PluginTimeoutError as PluginTimeoutError,
    )
    from headerlock.errors import (
        ReconstructionError as ReconstructionError,
    )
    from headerlock.errors import (
        RecordingClashError as RecordingClashError,
    )
    from headerlock.errors import (
        RecordingError as RecordingError,
    )
    from headerlock.errors import (
        RecordingRunError as RecordingRunError,
    )
    from headerlock.errors import (
        ReplayError as ReplayError,
    )
    from headerlock.errors import (
        ReplayMismatch as ReplayMismatch,
    )
    from headerlock.errors import (
        ScenarioError as ScenarioError,
    )
    from headerlock.errors import (
        ScriptExhaustedError as ScriptExhaustedError,
    )
    from headerlock.errors import (
        SerializationError as SerializationError,
    )
    from headerlock.errors import (
        ServiceConflictError as ServiceConflictError,
    )
    from headerlock.errors import (
        ServiceError as ServiceError,
    )
    from headerlock.errors import (
        ServiceNotFoundError as ServiceNotFoundError,
    )
    from headerlock.errors import (
        ToolExecutionError as ToolExecutionError,
    )
    from headerlock.errors import (
        ToolInputError as ToolInputError,
    )
    from headerlock.errors import (
        ToolOrderError as ToolOrderError,
    )
    from headerlock.errors import (
        ToolRegistrationError as ToolRegistrationError,
    )
    from headerlock.errors import (
        TurnBusyError as TurnBusyError,
    )
    from headerlock.errors import (
        UnorderedValueError as UnorderedValueError,
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
    from headerlock.errors import (
        WireToolError as WireToolError,
    )
    from headerlock.errors import (
        WorkspaceError as WorkspaceError,
    )
    from headerlock.errors import (
        YamlError as YamlError,
    )
    from headerlock.formats.fixture import (
        Scenario as Scenario,
    )
    from headerlock.formats.recording import (
        Recording as Recording,
    )
    from headerlock.formats.recording import (
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
    )
    from headerlock.runtime.adapters.scripted import (
        ScriptedAdapter as ScriptedAdapter,
    )
    from headerlock.runtime.app import (
        AgentApp as AgentApp,
    )
    from headerlock.runtime.config import (
        AcpAppConfig as AcpAppConfig,
    )
    from headerlock.runtime.config import (
        LoopConfig as LoopConfig,
    )
    from headerlock.runtime.config import (
        SpineConfig as SpineConfig,
    )
    from headerlock.runtime.config import (
        StdioAppConfig as StdioAppConfig,
    )
    from headerlock.runtime.config import (
        SystemPromptConfig as SystemPromptConfig,
    )
    from headerlock.runtime.config import (
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
    )
    from headerlock.runtime.header import (
        RequestHeader as RequestHeader,
    )
    from headerlock.runtime.header import (
        SystemDelta as SystemDelta,
    )
    from headerlock.runtime.header import (
        ToolsDelta as ToolsDelta,
    )
    from headerlock.runtime.header import (
        apply_header_delta as apply_header_delta,
    )
    from headerlock.runtime.header import (
        diff_header as diff_header,
    )
    from headerlock.runtime.header import (
        fold_request_header as fold_request_header,
    )
    from headerlock.runtime.llm import (
        LlmService as LlmService,
    )
    from headerlock.runtime.llm import (
        ModelRequest as ModelRequest,
    )
    from headerlock.runtime.llm import (
        TextDelta as TextDelta,
    )
    from headerlock.runtime.llm import (
        ToolCallRequest as ToolCallRequest,
    )
    from headerlock.runtime.loop import (
        AgentLoop as AgentLoop,
    )
    from headerlock.runtime.loop import (
        TurnReason as TurnReason,
    )
    from headerlock.runtime.loop import (
        TurnResult as TurnResult,
    )
    from headerlock.runtime.session import (
        Event as Event,
    )
    from headerlock.runtime.session import (
        SessionLog as SessionLog,
    )
    from headerlock.runtime.system_prompt import (
        PromptAssembly as PromptAssembly,
    )
    from headerlock.runtime.system_prompt import (
        Section as Section,
    )
    from headerlock.runtime.system_prompt import (
        SystemPrompt as SystemPrompt,
    )
    from headerlock.runtime.tool_order import (
        TOOL_ORDER_REST as TOOL_ORDER_REST,
    )
    from headerlock.runtime.tool_order import (
        order_tools as order_tools,
    )
    from headerlock.runtime.tool_order import (
        validate_tool_order as validate_tool_order,
    )
    from headerlock.runtime.tools import (
        ToolRegistry as ToolRegistry,
    )
    from headerlock.runtime.tools import (
        ToolSchema as ToolSchema,
    )
    from headerlock.runtime.wire_tools import (
        order_wire_tools as order_wire_tools,
    )
    from headerlock.testing.order.plugin_orders import (
        OrderRun as OrderRun,
    )
    from headerlock.testing.order.plugin_orders import (
        assert_plugin_order_invariant as assert_plugin_order_invariant,
    )
    from headerlock.testing.order.plugin_orders import (
        assert_plugin_order_invariant_async as assert_plugin_order_invariant_async,
    )
    from headerlock.testing.scenario.drivers import (
        available_drivers as available_drivers,
    )
    from headerlock.testing.scenario.drivers import (
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
    )
    from headerlock.testing.wire.order import (
        assert_order_invariant_async as assert_order_invariant_async,
    )

_PUBLIC = {
    "headerlock.errors": (
        "AgentError",
        "AppStateError",
        "AssemblyError",
        "CheckFailed",
        "ConfigError",
        "CorruptLogError",
        "HeaderlockError",
        "InputFileError",
        "MissingRecordingError",
        "ModelError",
        "OrderDependenceError",
        "OutputFileError",
        "PinError",
        "PluginError",
        "PluginTimeoutError",
        "ReconstructionError",
        "RecordingClashError",
        "RecordingError",
        "RecordingRunError",
        "ReplayError",
        "ReplayMismatch",
        "ScenarioError",
        "ScriptExhaustedError",
        "SerializationError",
        "ServiceConflictError",
        "ServiceError",
        "ServiceNotFoundError",
        "ToolExecutionError",
        "ToolInputError",
        "ToolOrderError",
        "ToolRegistrationError",
        "TurnBusyError",
        "UnorderedValueError",
        "WireMismatch",
        "WireOrderError",
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
