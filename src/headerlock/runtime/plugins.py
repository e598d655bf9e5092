"""Resolving plugins from import paths ``module:attr``."""

from __future__ import annotations

import importlib
import re

from headerlock.errors import PluginError
from headerlock.runtime.context import Plugin

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
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise PluginError(
                f"plugin {path!r}: {module_name!r} has no attribute {attribute!r}", plugin=path
            ) from None
    if not callable(target):
        raise PluginError(f"plugin {path!r} is not callable", plugin=path)
    return target
