"""What both demo apps share: reading their config and model script from files."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from headerlock.errors import ConfigError
from headerlock.formats.strict_yaml import load_file
from headerlock.runtime.adapters.scripted import ScriptedAdapter
from headerlock.runtime.config import SpineConfig, parse_config
from headerlock.runtime.llm import LlmAdapter

ConfigT = TypeVar("ConfigT", bound=SpineConfig)


def add_launch_arguments(parser: argparse.ArgumentParser) -> None:
    """``--config``, ``--script`` and ``--workspace``."""
    parser.add_argument("--config", type=Path, help="app config (YAML mapping)")
    parser.add_argument(
        "--script",
        type=Path,
        help="scripted model replies (YAML list); without it the live adapter is used",
    )
    parser.add_argument("--workspace", type=Path, default=None, help="directory tools may touch")


def load_app_config(schema: type[ConfigT], path: Path | None) -> ConfigT:
    """The app config from ``path`` (empty config when ``None``)."""
    if path is None:
        return parse_config(schema, {})
    return parse_config(schema, load_file(path), source=str(path))


def load_script(path: Path | None) -> LlmAdapter | None:
    """A ``ScriptedAdapter`` over the replies in ``path``, or ``None``."""
    if path is None:
        return None
    replies = load_file(path)
    if not isinstance(replies, Sequence) or isinstance(replies, str):
        raise ConfigError(f"{path}: a model script is a list of replies")
    return ScriptedAdapter(replies)
