"""The config chain: app → spine → SystemPrompt / loop."""

from __future__ import annotations

import pytest

from headerlock.agent import (
    TOOL_ORDER_REST,
    AcpAppConfig,
    SpineConfig,
    StdioAppConfig,
    SystemPromptConfig,
    parse_config,
)
from headerlock.errors import ConfigError, ToolOrderError
from headerlock.runtime.config import LoopConfig, forward

APPS: list[type[SpineConfig]] = [StdioAppConfig, AcpAppConfig]


@pytest.mark.parametrize("app", APPS)
def test_tool_order_is_forwarded_through_every_level(app: type[SpineConfig]) -> None:
    config = parse_config(app, {"persona": "p", "tool_order": ["zulu", TOOL_ORDER_REST]})
    spine = forward(config, SpineConfig)
    prompt = forward(spine, SystemPromptConfig)
    assert prompt.tool_order == ["zulu", TOOL_ORDER_REST]
    assert prompt.persona == "p"


@pytest.mark.parametrize("app", APPS)
def test_omitted_tool_order_stays_none(app: type[SpineConfig]) -> None:
    config = parse_config(app, {"persona": "p"})
    assert config.tool_order is None
    assert "tool_order" not in config.set_values()
    assert forward(forward(config, SpineConfig), SystemPromptConfig).tool_order is None
    for schema in (SystemPromptConfig, SpineConfig, app):
        assert schema().tool_order is None


@pytest.mark.parametrize("schema", [SystemPromptConfig, SpineConfig, *APPS])
def test_explicit_empty_list_is_a_shape_error(schema: type[SystemPromptConfig]) -> None:
    with pytest.raises(ToolOrderError, match="rest entry"):
        parse_config(schema, {"tool_order": []})


def test_tool_order_type_errors() -> None:
    with pytest.raises(ToolOrderError, match="must be a list of tool names, got str"):
        parse_config(SpineConfig, {"tool_order": "bash"})
    with pytest.raises(ToolOrderError, match=r"tool_order\[0\] must be a tool name"):
        parse_config(SpineConfig, {"tool_order": [1, TOOL_ORDER_REST]})


def test_unknown_keys_name_the_key_and_source() -> None:
    with pytest.raises(ConfigError, match=r"app\.yaml: unknown key 'tool_ordr'") as info:
        parse_config(StdioAppConfig, {"tool_ordr": []}, source="app.yaml")
    assert info.value.key == "tool_ordr"
    with pytest.raises(ConfigError, match="unknown key 'prompt'"):
        parse_config(SpineConfig, {"prompt": "> "})


def test_wrong_types_name_the_key() -> None:
    with pytest.raises(ConfigError, match=r"max_steps: .*got 'many'"):
        parse_config(LoopConfig, {"max_steps": "many"})
    with pytest.raises(ConfigError, match="expected a mapping"):
        parse_config(LoopConfig, ["model"])  # type: ignore[arg-type]
    assert parse_config(LoopConfig, {"temperature": 0}).temperature == 0.0
