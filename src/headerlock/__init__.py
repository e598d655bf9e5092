"""headerlock: record and replay the request headers an LLM agent sends.

Top-level names resolve on first use, so ``import headerlock`` loads none of
its heavy dependencies (pydantic, PyYAML, deepdiff, Hypothesis, the SDKs).
"""

import importlib as _importlib
import typing as _typing

from headerlock.errors import (
    AgentError,
    AppStateError,
    AssemblyError,
    CheckFailed,
    ConfigError,
    CorruptLogError,
    HeaderlockError,
    InputFileError,
    MissingRecordingError,
    ModelError,
    OrderDependenceError,
    OutputFileError,
    PinError,
    PluginError,
    PluginTimeoutError,
    ReconstructionError,
    RecordingClashError,
    RecordingError,
    RecordingRunError,
    ReplayError,
    ReplayMismatch,
    ScenarioError,
    ScriptExhaustedError,
    SerializationError,
    ServiceConflictError,
    ServiceError,
    ServiceNotFoundError,
    ToolExecutionError,
    ToolInputError,
    ToolOrderError,
    ToolRegistrationError,
    TurnBusyError,
    UnorderedValueError,
    WireMismatch,
    WireOrderError,
    WireRecordingError,
    WireToolError,
    WorkspaceError,
    YamlError,
)

if _typing.TYPE_CHECKING:
    from headerlock.formats.recording import Recording, load_recording
    from headerlock.runtime.adapters.openai_compat import OpenAICompatAdapter
    from headerlock.runtime.adapters.recorded import ReplayAdapter
    from headerlock.runtime.adapters.scripted import Reply, ScriptedAdapter
    from headerlock.runtime.app import AgentApp
    from headerlock.runtime.config import (
        AcpAppConfig,
        LoopConfig,
        SpineConfig,
        StdioAppConfig,
        SystemPromptConfig,
        parse_config,
    )
    from headerlock.runtime.context import Context
    from headerlock.runtime.header import (
        HeaderDelta,
        RequestHeader,
        SystemDelta,
        ToolsDelta,
        apply_header_delta,
        diff_header,
        fold_request_header,
    )
    from headerlock.runtime.llm import LlmService, ModelRequest, TextDelta, ToolCallRequest
    from headerlock.runtime.loop import AgentLoop, TurnReason, TurnResult
    from headerlock.runtime.session import Event, SessionLog
    from headerlock.runtime.system_prompt import PromptAssembly, Section, SystemPrompt
    from headerlock.runtime.tool_order import TOOL_ORDER_REST, order_tools, validate_tool_order
    from headerlock.runtime.tools import ToolRegistry, ToolSchema
    from headerlock.runtime.wire_tools import order_wire_tools
    from headerlock.testing.order.plugin_orders import (
        OrderRun,
        assert_order_invariant,
        assert_order_invariant_async,
    )
    from headerlock.testing.scenario.drivers import Driver, available_drivers, get_driver
    from headerlock.testing.scenario.fixtures import Scenario, load_scenario
    from headerlock.testing.scenario.project import Project

_LAZY: dict[str, str] = {
    "AcpAppConfig": "headerlock.runtime.config",
    "AgentApp": "headerlock.runtime.app",
    "AgentLoop": "headerlock.runtime.loop",
    "Context": "headerlock.runtime.context",
    "Driver": "headerlock.testing.scenario.drivers",
    "Event": "headerlock.runtime.session",
    "HeaderDelta": "headerlock.runtime.header",
    "LlmService": "headerlock.runtime.llm",
    "LoopConfig": "headerlock.runtime.config",
    "ModelRequest": "headerlock.runtime.llm",
    "OpenAICompatAdapter": "headerlock.runtime.adapters.openai_compat",
    "OrderRun": "headerlock.testing.order.plugin_orders",
    "Project": "headerlock.testing.scenario.project",
    "PromptAssembly": "headerlock.runtime.system_prompt",
    "Recording": "headerlock.formats.recording",
    "ReplayAdapter": "headerlock.runtime.adapters.recorded",
    "Reply": "headerlock.runtime.adapters.scripted",
    "RequestHeader": "headerlock.runtime.header",
    "Scenario": "headerlock.testing.scenario.fixtures",
    "ScriptedAdapter": "headerlock.runtime.adapters.scripted",
    "Section": "headerlock.runtime.system_prompt",
    "SessionLog": "headerlock.runtime.session",
    "SpineConfig": "headerlock.runtime.config",
    "StdioAppConfig": "headerlock.runtime.config",
    "SystemDelta": "headerlock.runtime.header",
    "SystemPrompt": "headerlock.runtime.system_prompt",
    "SystemPromptConfig": "headerlock.runtime.config",
    "TOOL_ORDER_REST": "headerlock.runtime.tool_order",
    "TextDelta": "headerlock.runtime.llm",
    "ToolCallRequest": "headerlock.runtime.llm",
    "ToolRegistry": "headerlock.runtime.tools",
    "ToolSchema": "headerlock.runtime.tools",
    "ToolsDelta": "headerlock.runtime.header",
    "TurnReason": "headerlock.runtime.loop",
    "TurnResult": "headerlock.runtime.loop",
    "apply_header_delta": "headerlock.runtime.header",
    "assert_order_invariant": "headerlock.testing.order.plugin_orders",
    "assert_order_invariant_async": "headerlock.testing.order.plugin_orders",
    "available_drivers": "headerlock.testing.scenario.drivers",
    "diff_header": "headerlock.runtime.header",
    "fold_request_header": "headerlock.runtime.header",
    "get_driver": "headerlock.testing.scenario.drivers",
    "load_recording": "headerlock.formats.recording",
    "load_scenario": "headerlock.testing.scenario.fixtures",
    "order_tools": "headerlock.runtime.tool_order",
    "order_wire_tools": "headerlock.runtime.wire_tools",
    "parse_config": "headerlock.runtime.config",
    "validate_tool_order": "headerlock.runtime.tool_order",
}


def __getattr__(name: str) -> object:
    """Resolve a public name on first use and cache it on the module."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'headerlock' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "TOOL_ORDER_REST",
    "AcpAppConfig",
    "AgentApp",
    "AgentError",
    "AgentLoop",
    "AppStateError",
    "AssemblyError",
    "CheckFailed",
    "ConfigError",
    "Context",
    "CorruptLogError",
    "Driver",
    "Event",
    "HeaderDelta",
    "HeaderlockError",
    "InputFileError",
    "LlmService",
    "LoopConfig",
    "MissingRecordingError",
    "ModelError",
    "ModelRequest",
    "OpenAICompatAdapter",
    "OrderDependenceError",
    "OrderRun",
    "OutputFileError",
    "PinError",
    "PluginError",
    "PluginTimeoutError",
    "Project",
    "PromptAssembly",
    "ReconstructionError",
    "Recording",
    "RecordingClashError",
    "RecordingError",
    "RecordingRunError",
    "ReplayAdapter",
    "ReplayError",
    "ReplayMismatch",
    "Reply",
    "RequestHeader",
    "Scenario",
    "ScenarioError",
    "ScriptExhaustedError",
    "ScriptedAdapter",
    "Section",
    "SerializationError",
    "ServiceConflictError",
    "ServiceError",
    "ServiceNotFoundError",
    "SessionLog",
    "SpineConfig",
    "StdioAppConfig",
    "SystemDelta",
    "SystemPrompt",
    "SystemPromptConfig",
    "TextDelta",
    "ToolCallRequest",
    "ToolExecutionError",
    "ToolInputError",
    "ToolOrderError",
    "ToolRegistrationError",
    "ToolRegistry",
    "ToolSchema",
    "ToolsDelta",
    "TurnBusyError",
    "TurnReason",
    "TurnResult",
    "UnorderedValueError",
    "WireMismatch",
    "WireOrderError",
    "WireRecordingError",
    "WireToolError",
    "WorkspaceError",
    "YamlError",
    "apply_header_delta",
    "assert_order_invariant",
    "assert_order_invariant_async",
    "available_drivers",
    "diff_header",
    "fold_request_header",
    "get_driver",
    "load_recording",
    "load_scenario",
    "order_tools",
    "order_wire_tools",
    "parse_config",
    "validate_tool_order",
]
