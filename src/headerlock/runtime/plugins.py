"""Resolving plugins from import paths ``module:attr``, from the project root.

A fixture names project code only (``foreign_reason``, the guard of ``plugins:`` and
``entry:``): never a built-in, a standard-library callable or one from an installed
package (a module under ``site-packages`` or ``dist-packages``), except headerlock's
own bundled demo, ``headerlock.demo``.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import os
import re
import sys
import sysconfig
import traceback
import types
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from headerlock.errors import PluginError

if TYPE_CHECKING:  # the pytest plugin imports this module at start: keep it light
    from headerlock.runtime.context import Plugin

PLUGIN_SHAPE = "a plugin is a callable taking the context: plugin(ctx) or plugin(ctx, config)"
_BUILTIN_TYPES = (
    types.BuiltinFunctionType,
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
    types.MethodWrapperType,
    types.ClassMethodDescriptorType,
)

ALLOWED_INSTALLED = "headerlock.demo"
"""The one installed package a fixture may call: headerlock's bundled demo."""
_INSTALLED_DIRS = frozenset({"site-packages", "dist-packages"})

_IMPORT_PATH = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")


def resolve_plugin(path: str) -> Plugin:
    """Import ``module:attr`` and return the callable; errors name the path."""
    if not isinstance(path, str) or not _IMPORT_PATH.fullmatch(path):
        raise PluginError(
            f"plugin path {path!r} is not of the form 'package.module:attribute'",
            plugin=str(path),
        )
    module_name, _, attribute = path.partition(":")
    try:
        target: object = importlib.import_module(module_name)
    except ImportError as error:
        raise PluginError(
            f"plugin {path!r}: cannot import {module_name!r}: {error}", plugin=path
        ) from None
    except (Exception, SystemExit) as error:
        raise PluginError(
            f"plugin {path!r}: importing {module_name!r} failed: {describe_error(error)}",
            plugin=path,
        ) from None
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise PluginError(
                f"plugin {path!r}: {module_name!r} has no attribute {attribute!r}", plugin=path
            ) from None
    if not callable(target):
        raise PluginError(f"plugin {path!r} is not callable", plugin=path)
    module = sys.modules.get(module_name)
    checked = _checked.get(path)
    if checked is None or checked[0] is not module or checked[1] is not target:
        _check_plugin(path, module_name, target)
        _checked[path] = (module, target)
    return target


_checked: dict[str, tuple[object, object]] = {}
"""The module and callable of each path that passed ``_check_plugin`` (it inspects
signatures: resolving a scenario's plugins for every run need not repeat it)."""


def foreign_reason(module_name: str, target: object) -> str | None:
    """Why ``target`` (found in ``module_name``) is not project code: it is built in, or
    it or the module that defines it comes from the standard library or an installed
    package (``ALLOWED_INSTALLED`` aside); ``None`` when it is project code. The one
    guard of everything a fixture names to be called (``plugins:``, ``entry:``)."""
    while isinstance(target, functools.partial):
        target = target.func
    if isinstance(target, _BUILTIN_TYPES):
        return "is a built-in function"
    modules = [module_name, *_defined_in(target)]
    if any(_is_stdlib(name) for name in modules):
        return "comes from the Python standard library"
    if any(_is_installed(name) for name in modules):
        return f"comes from an installed package ({ALLOWED_INSTALLED} is the one allowed)"
    return None


def _defined_in(target: object) -> list[str]:
    """The module that defines a function, method or class (a re-exported callable)."""
    if inspect.ismethod(target):
        target = target.__func__
    if not (inspect.isfunction(target) or inspect.isclass(target)):
        return []
    name = getattr(target, "__module__", None)
    return [name] if isinstance(name, str) and name else []


def _is_installed(module_name: str) -> bool:
    """Whether ``module_name`` was loaded from an installed package (``site-packages``,
    ``dist-packages``), headerlock's demo aside."""
    if module_name == ALLOWED_INSTALLED or module_name.startswith(f"{ALLOWED_INSTALLED}."):
        return False
    module = sys.modules.get(module_name)
    file = getattr(module, "__file__", None)
    places = [file] if file else list(getattr(module, "__path__", ()))
    return any(_INSTALLED_DIRS & set(Path(place).resolve().parts) for place in places)


def _check_plugin(path: str, module_name: str, target: Callable[..., object]) -> None:
    """Refuse built-ins, standard-library callables and callables that cannot take a context."""
    foreign = foreign_reason(module_name, target)
    if foreign is not None:
        reason = f"{foreign}, not a plugin"
    else:
        try:
            signature = inspect.signature(target)
        except (TypeError, ValueError):
            reason = "has no signature to call it with a context"
        else:
            if _binds(signature, 1) or _binds(signature, 2):
                return
            bare = signature.replace(
                parameters=[p.replace(annotation=p.empty) for p in signature.parameters.values()],
                return_annotation=signature.empty,
            )
            reason = f"takes {bare}, not a context"
    raise PluginError(f"plugin {path!r} {reason}; {PLUGIN_SHAPE}", plugin=path)


def _binds(signature: inspect.Signature, count: int) -> bool:
    try:
        signature.bind(*([None] * count))
    except TypeError:
        return False
    return True


_STDLIB = Path(sysconfig.get_paths()["stdlib"]).resolve()


def _is_stdlib(module_name: str) -> bool:
    """Whether ``module_name`` is a standard-library module (a project module of the
    same name is not)."""
    if module_name.partition(".")[0] not in sys.stdlib_module_names:
        return False
    file = getattr(sys.modules.get(module_name), "__file__", None)
    if file is None:
        return True  # built in, frozen or not loaded: a standard-library name
    location = Path(file).resolve()
    packages = {"site-packages", "dist-packages"} & set(location.parts)
    return location.is_relative_to(_STDLIB) and not packages


def describe_error(error: BaseException) -> str:
    """``Type: message (file:line)`` of an exception raised by a plugin (or while importing
    one): where the user's code raised it, in one line."""
    if isinstance(error, SyntaxError):
        return f"SyntaxError: {error.msg} ({Path(error.filename or '?').name}:{error.lineno})"
    frames = traceback.extract_tb(error.__traceback__)
    where = f" ({Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    text = str(error).replace("\n", " ")
    return f"{type(error).__name__}: {text}{where}" if text else f"{type(error).__name__}{where}"


def add_import_root(root: Path) -> Callable[[], None]:
    """Put ``root`` first on ``sys.path``, as pytest's ``pythonpath = .`` does, so that
    plugins resolve from the project; the returned function takes it off again."""
    entry = str(root.resolve())
    if entry in sys.path:
        return lambda: None
    sys.path.insert(0, entry)
    importlib.invalidate_caches()

    def undo() -> None:
        with contextlib.suppress(ValueError):
            sys.path.remove(entry)

    return undo


def subprocess_env(**overrides: str) -> dict[str, str]:
    """This process's environment, with a ``PYTHONPATH`` that finds what it imports
    (so a child process can load the same plugins), plus ``overrides``."""
    paths = [p for p in sys.path if p and Path(p).is_dir()]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths), **overrides}
