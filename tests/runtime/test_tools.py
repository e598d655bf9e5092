"""Tool schemas and the registry."""

from __future__ import annotations

import pytest

from headerlock.agent import ToolRegistry, ToolSchema
from headerlock.errors import ToolRegistrationError


def test_schema_is_frozen_hashable_and_deep_frozen() -> None:
    params = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    schema = ToolSchema("read", "Read a file", params)
    properties: dict[str, dict[str, str]] = params["properties"]  # type: ignore[assignment]
    properties["path"]["type"] = "integer"  # the caller's dict, not ours
    assert schema.parameters["properties"]["path"]["type"] == "string"
    assert hash(schema) == hash(ToolSchema("read", "Read a file", schema.to_data()["parameters"]))
    with pytest.raises(TypeError):
        schema.parameters["type"] = "array"  # type: ignore[index]
    with pytest.raises(AttributeError):
        schema.name = "write"  # type: ignore[misc]
    assert schema.parameters["required"] == ("path",)
    assert ToolSchema.from_data(schema.to_data()) == schema


def test_bad_schema_values() -> None:
    with pytest.raises(ToolRegistrationError, match="non-empty string"):
        ToolSchema("")
    with pytest.raises(ToolRegistrationError, match="parameters must be a mapping"):
        ToolSchema("x", parameters=[1])  # type: ignore[arg-type]


def test_registry_keeps_registration_order_and_rejects_duplicates() -> None:
    registry = ToolRegistry()
    registry.register(ToolSchema("zeta"))
    dispose = registry.register(ToolSchema("alpha"))
    registry.register(ToolSchema("hidden"), hidden=True)
    assert [s.name for s in registry.schemas()] == ["zeta", "alpha"]
    assert registry.known_names() == ("zeta", "alpha", "hidden")
    with pytest.raises(ToolRegistrationError, match='tool "zeta" is already registered') as info:
        registry.register(ToolSchema("zeta", "again"))
    assert info.value.name == "zeta"
    dispose()
    assert registry.known_names() == ("zeta", "hidden")
    registry.register(ToolSchema("alpha"))
