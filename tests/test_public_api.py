"""The exported members of ``headerlock`` (httpx's exported-members test is the model)."""

from __future__ import annotations

import inspect
import re

import pytest

import headerlock
import headerlock.errors

EXPORTED = [
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


def test_all_lists_exactly_the_exported_members() -> None:
    assert headerlock.__all__ == EXPORTED


def test_all_is_sorted() -> None:
    assert sorted(EXPORTED, key=lambda n: (not n.isupper(), n)) == EXPORTED


@pytest.mark.parametrize("name", EXPORTED)
def test_every_exported_member_resolves_inside_headerlock(name: str) -> None:
    member = getattr(headerlock, name)
    if not isinstance(member, str):  # TOOL_ORDER_REST is a plain constant
        assert member.__module__.startswith("headerlock."), name
    assert name in dir(headerlock)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        headerlock.nope  # noqa: B018


def _error_classes() -> list[type[BaseException]]:
    return [
        obj
        for _, obj in inspect.getmembers(headerlock.errors, inspect.isclass)
        if issubclass(obj, BaseException) and obj.__module__ == "headerlock.errors"
    ]


def test_every_error_class_is_in_the_tree_exported_and_drawn() -> None:
    doc = headerlock.errors.__doc__ or ""
    for cls in _error_classes():
        assert issubclass(cls, headerlock.HeaderlockError), cls
        assert cls.__name__ in headerlock.__all__, cls
        assert re.search(rf"(^|[ ─]){cls.__name__}( |$)", doc, re.M), cls


def test_no_exception_class_is_defined_outside_errors() -> None:
    import pkgutil

    import headerlock.formats
    import headerlock.runtime
    import headerlock.testing

    for package in (headerlock.runtime, headerlock.formats, headerlock.testing):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            module = __import__(info.name, fromlist=["_"])
            for _, obj in inspect.getmembers(module, inspect.isclass):
                if obj.__module__ == info.name and issubclass(obj, headerlock.HeaderlockError):
                    raise AssertionError(f"{info.name}.{obj.__name__} belongs in errors.py")


def test_error_tree_keeps_builtin_bases() -> None:
    assert issubclass(headerlock.ToolOrderError, headerlock.ConfigError)
    assert issubclass(headerlock.ConfigError, ValueError)
    assert issubclass(headerlock.ServiceNotFoundError, LookupError)
    assert issubclass(headerlock.ReplayMismatch, AssertionError)
    assert issubclass(headerlock.PinError, headerlock.CheckFailed)
    assert issubclass(headerlock.ScenarioError, headerlock.InputFileError)
