"""The exported members of ``headerlock``, ``headerlock.agent``, ``headerlock.wire`` and
``headerlock.strategies``, derived from the modules (httpx's exported-members test is the
model)."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path
from types import ModuleType

import pytest

import headerlock
import headerlock.errors

FACADES = ("headerlock", "headerlock.agent", "headerlock.wire", "headerlock.strategies")


def _facade(name: str) -> ModuleType:
    return importlib.import_module(name)


def _type_checking_imports(module: ModuleType) -> dict[str, tuple[str, ...]]:
    """What the facade's ``if TYPE_CHECKING:`` block imports, as ``{module: names}``."""
    tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    found: dict[str, tuple[str, ...]] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
                assert all(alias.asname == alias.name for alias in statement.names)
                names = found.get(str(statement.module), ())
                found[str(statement.module)] = names + tuple(a.name for a in statement.names)
    return found


@pytest.mark.parametrize("name", FACADES)
def test_all_comes_from_the_facade_table(name: str) -> None:
    module = _facade(name)
    table = module._PUBLIC
    assert module.__all__ == sorted(n for names in table.values() for n in names)


@pytest.mark.parametrize("name", FACADES)
def test_type_checking_imports_mirror_the_table(name: str) -> None:
    module = _facade(name)
    table = {home: tuple(names) for home, names in module._PUBLIC.items()}
    imported = {
        home: tuple(sorted(names)) for home, names in _type_checking_imports(module).items()
    }
    assert imported == {home: tuple(sorted(names)) for home, names in table.items()}


@pytest.mark.parametrize(
    ("facade", "name", "home"),
    [
        (facade, name, home)
        for facade in FACADES
        for home, names in _facade(facade)._PUBLIC.items()
        for name in names
    ],
)
def test_every_exported_member_is_defined_where_the_table_says(
    facade: str, name: str, home: str
) -> None:
    member = getattr(_facade(facade), name)
    assert member is getattr(importlib.import_module(home), name)
    if not isinstance(member, str):  # TOOL_ORDER_REST is a plain constant
        assert member.__module__ == home, (name, member.__module__)
    assert name in dir(_facade(facade))


@pytest.mark.parametrize("name", FACADES)
def test_dir_shows_no_public_name_outside_all(name: str) -> None:
    module = _facade(name)
    public = {n for n in dir(module) if not n.startswith("_") and not _is_submodule(module, n)}
    assert public <= set(module.__all__)


def _is_submodule(module: ModuleType, name: str) -> bool:
    return isinstance(getattr(module, name, None), ModuleType)


def test_headerlock_and_wire_never_export_two_objects_under_one_name() -> None:
    import headerlock.wire

    for name in set(headerlock.__all__) & set(headerlock.wire.__all__):
        assert getattr(headerlock, name) is getattr(headerlock.wire, name), name


def test_every_public_strategy_is_exported() -> None:
    import headerlock.strategies
    import headerlock.testing.order.strategies as home

    defined = {
        name
        for name, obj in inspect.getmembers(home, inspect.isfunction)
        if not name.startswith("_") and obj.__module__ == home.__name__
    }
    assert defined == set(headerlock.strategies.__all__)


def test_a_name_listed_twice_in_a_table_is_refused() -> None:
    from headerlock._facade import facade

    with pytest.raises(ValueError, match="'x' listed twice"):
        facade("demo", {"a": ("x",), "b": ("x",)}, {})


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        headerlock.nope  # noqa: B018


def _error_classes() -> list[type[BaseException]]:
    return [
        obj
        for _, obj in inspect.getmembers(headerlock.errors, inspect.isclass)
        if issubclass(obj, BaseException) and obj.__module__ == "headerlock.errors"
    ]


def test_every_error_class_is_in_the_tree_and_drawn() -> None:
    doc = headerlock.errors.__doc__ or ""
    for cls in _error_classes():
        assert issubclass(cls, headerlock.HeaderlockError), cls
        assert re.search(rf"(^|[ ─]){cls.__name__}( |$)", doc, re.M), cls


def test_the_top_level_is_what_a_test_or_an_agent_writes() -> None:
    """At most 25 names, and no runtime name of the RFC sits at the top level."""
    import headerlock.agent

    assert len(headerlock.__all__) <= 25, headerlock.__all__
    assert not set(headerlock.__all__) & set(headerlock.agent.__all__)


@pytest.mark.parametrize("name", sorted(headerlock._MOVED))
def test_a_moved_name_still_imports_with_a_warning_naming_its_home(name: str) -> None:
    home = headerlock._MOVED[name]
    with pytest.warns(
        DeprecationWarning, match=rf"headerlock\.{name} moved: import it from {home}"
    ):
        old = getattr(headerlock, name)
    assert old is getattr(importlib.import_module(home), name)
    assert name not in headerlock.__all__
    assert name not in dir(headerlock)


def test_every_error_a_test_catches_is_in_the_errors_module() -> None:
    for name in headerlock.__all__:
        if name.endswith("Error") or name == "WireMismatch":
            assert getattr(headerlock, name) is getattr(headerlock.errors, name)


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
    errors = headerlock.errors
    assert issubclass(errors.ToolOrderError, errors.ConfigError)
    assert issubclass(errors.ConfigError, ValueError)
    assert issubclass(errors.ServiceNotFoundError, LookupError)
    assert issubclass(errors.ReplayMismatch, AssertionError)
    assert issubclass(errors.PinError, errors.CheckFailed)
    assert issubclass(errors.ScenarioError, errors.InputFileError)
