"""headerlock: record and replay the request headers an LLM agent sends."""

from headerlock.adapters.openai_compat import OpenAICompatAdapter
from headerlock.adapters.replay import ReplayAdapter
from headerlock.adapters.scripted import Reply, ScriptedAdapter
from headerlock.app import AgentApp
from headerlock.config import (
    AcpAppConfig,
    LoopConfig,
    SpineConfig,
    StdioAppConfig,
    SystemPromptConfig,
    parse_config,
)
from headerlock.context import Context
from headerlock.errors import (
    ConfigError,
    HeaderlockError,
    PluginError,
    ServiceNotFoundError,
    ToolOrderError,
    ToolRegistrationError,
)
from headerlock.header import (
    HeaderDelta,
    RequestHeader,
    SystemDelta,
    ToolsDelta,
    apply_header_delta,
    diff_header,
    fold_request_header,
)
from headerlock.invariants import ReconstructionError
from headerlock.llm import LlmService, ModelError, ModelRequest, TextDelta, ToolCallRequest
from headerlock.loop import AgentLoop, TurnReason, TurnResult
from headerlock.pins import PinError
from headerlock.project import Project
from headerlock.recording import Recording, RecordingError, load_recording
from headerlock.replay import MissingRecordingError, ReplayMismatch
from headerlock.scenario import Scenario, ScenarioError, load_scenario
from headerlock.session import CorruptLogError, Event, SessionLog
from headerlock.system_prompt import PromptAssembly, Section, SystemPrompt
from headerlock.tool_order import TOOL_ORDER_REST, order_tools, validate_tool_order
from headerlock.tools import ToolRegistry, ToolSchema
from headerlock.yamlio import YamlError

__all__ = [
    "TOOL_ORDER_REST",
    "AcpAppConfig",
    "AgentApp",
    "AgentLoop",
    "ConfigError",
    "Context",
    "CorruptLogError",
    "Event",
    "HeaderDelta",
    "HeaderlockError",
    "LlmService",
    "LoopConfig",
    "MissingRecordingError",
    "ModelError",
    "ModelRequest",
    "OpenAICompatAdapter",
    "PinError",
    "PluginError",
    "Project",
    "PromptAssembly",
    "ReconstructionError",
    "Recording",
    "RecordingError",
    "ReplayAdapter",
    "ReplayMismatch",
    "Reply",
    "RequestHeader",
    "Scenario",
    "ScenarioError",
    "ScriptedAdapter",
    "Section",
    "ServiceNotFoundError",
    "SessionLog",
    "SpineConfig",
    "StdioAppConfig",
    "SystemDelta",
    "SystemPrompt",
    "SystemPromptConfig",
    "TextDelta",
    "ToolCallRequest",
    "ToolOrderError",
    "ToolRegistrationError",
    "ToolRegistry",
    "ToolSchema",
    "ToolsDelta",
    "TurnReason",
    "TurnResult",
    "YamlError",
    "apply_header_delta",
    "diff_header",
    "fold_request_header",
    "load_recording",
    "load_scenario",
    "order_tools",
    "parse_config",
    "validate_tool_order",
]
