"""headerlock: record and replay the request headers an LLM agent sends."""

from headerlock.errors import (
    ConfigError,
    HeaderlockError,
    PluginError,
    ServiceNotFoundError,
    ToolOrderError,
    ToolRegistrationError,
)
from headerlock.formats.fixture import Scenario, ScenarioError, load_scenario
from headerlock.formats.recording import Recording, RecordingError, load_recording
from headerlock.formats.strict_yaml import YamlError
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
from headerlock.runtime.llm import LlmService, ModelError, ModelRequest, TextDelta, ToolCallRequest
from headerlock.runtime.loop import AgentLoop, TurnReason, TurnResult
from headerlock.runtime.reconstruct import ReconstructionError
from headerlock.runtime.session import CorruptLogError, Event, SessionLog
from headerlock.runtime.system_prompt import PromptAssembly, Section, SystemPrompt
from headerlock.runtime.tool_order import TOOL_ORDER_REST, order_tools, validate_tool_order
from headerlock.runtime.tools import ToolRegistry, ToolSchema
from headerlock.testing.pins import PinError
from headerlock.testing.project import Project
from headerlock.testing.replay import MissingRecordingError, ReplayMismatch

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
