"""headerlock: record and replay the request headers an LLM agent sends."""

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
from headerlock.system_prompt import PromptAssembly, Section, SystemPrompt
from headerlock.tool_order import TOOL_ORDER_REST, order_tools, validate_tool_order
from headerlock.tools import ToolRegistry, ToolSchema

__all__ = [
    "TOOL_ORDER_REST",
    "AcpAppConfig",
    "ConfigError",
    "Context",
    "HeaderlockError",
    "LoopConfig",
    "PluginError",
    "PromptAssembly",
    "Section",
    "ServiceNotFoundError",
    "SpineConfig",
    "StdioAppConfig",
    "SystemPrompt",
    "SystemPromptConfig",
    "ToolOrderError",
    "ToolRegistrationError",
    "ToolRegistry",
    "ToolSchema",
    "order_tools",
    "parse_config",
    "validate_tool_order",
]
