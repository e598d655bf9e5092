"""The agent runtime of the tool-order RFC (public): an ``AgentApp`` whose system-prompt
assembly owns an explicit, deterministic tool order, its model adapters, the session log,
the runtime plugin-order checks and the scenario files that drive it::

    from headerlock.agent import AgentApp, ScriptedAdapter, ToolSchema

Names resolve on first use; ``_PUBLIC`` lists them once (``__all__`` and ``__getattr__``
come from it). The errors these raise live in ``headerlock.errors``.
"""

import typing as _typing

from headerlock._facade import facade as _facade

if _typing.TYPE_CHECKING:
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

_PUBLIC = {
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
}

__all__, __getattr__, __dir__ = _facade(__name__, _PUBLIC, globals())
