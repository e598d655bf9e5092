"""Scenario fixtures: what a fixture author writes in ``fixtures/<name>.yaml``.

A fixture may say its format ``version`` (``schema.FIXTURE``; absent means 1, the
first): a newer one is refused, an older one read through the schema's steps."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from headerlock.errors import ConfigError, PluginError, ScenarioError, YamlError
from headerlock.formats import schema
from headerlock.formats.strict_yaml import loads, locate, read_text
from headerlock.runtime.adapters.scripted import Reply, parse_reply
from headerlock.runtime.config import Schema, first_error, parse_config
from headerlock.runtime.plugins import resolve_plugin

NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,99}$")


class _Step(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    prompt: str = Field(min_length=1)


class _Fixture(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    version: int = 1
    app: str = Field(default="spine", min_length=1)
    pin: bool = False
    header_class: str = Field(default="default", min_length=1)
    description: str = ""
    config: dict[str, Any] = Field(default_factory=dict)
    plugins: list[str] = Field(default_factory=list)
    files: dict[str, str] = Field(default_factory=dict)
    steps: list[_Step] = Field(min_length=1)
    model: list[Any] | None = None


@dataclass(frozen=True, slots=True)
class Scenario:
    """A validated scenario: the app to run, its config, the prompts and the script."""

    name: str
    path: Path
    app: str
    pin: bool
    header_class: str
    description: str
    config: Schema
    """The ``config:`` as validated by the app's driver (``SpineConfig`` or a subclass for
    the built-in apps)."""
    files: Mapping[str, str]
    prompts: tuple[str, ...]
    model: tuple[Reply, ...] | None

    @property
    def tool_order(self) -> Sequence[str] | None:
        """The scenario's configured ``tool_order`` (``None`` when absent)."""
        order: Sequence[str] | None = getattr(self.config, "tool_order", None)
        return order

    @property
    def plugins(self) -> tuple[str, ...]:
        """The configured plugin specs (none for apps without plugins)."""
        return tuple(getattr(self.config, "plugins", ()))


def check_name(name: str, *, path: str) -> str:
    """A scenario name: lowercase letters, digits, ``._-``; no path separators or ``..``."""
    if not NAME_PATTERN.fullmatch(name) or ".." in name:
        raise ScenarioError(
            f"scenario name {name!r} must match {NAME_PATTERN.pattern} and contain no '..'",
            path=path,
        )
    return name


def parse_fixture(text: str, path: Path, schemas: Mapping[str, type[Schema]]) -> Scenario:
    """Validate fixture text; every error names the file, the key and the line.

    ``schemas`` maps each known ``app:`` (driver) name to its config schema.
    """
    label = str(path)
    name = check_name(path.stem, path=label)
    data = loads(text, path=label)
    if data is None:
        raise ScenarioError("file is empty", path=label)
    if not isinstance(data, Mapping):
        raise ScenarioError(
            f"a scenario is a mapping, got {type(data).__name__}", path=label, line=1
        )

    def fail(message: str, keys: Sequence[str | int]) -> ScenarioError:
        key = ".".join(str(k) for k in keys) or None
        return ScenarioError(message, path=label, key=key, line=locate(text, keys))

    try:
        data, _ = schema.upgrade(schema.FIXTURE, {"version": 1, **data})
    except schema.VersionError as error:
        raise fail(error.reason, ["version"]) from None
    try:
        fixture = _Fixture.model_validate(data)
    except ValidationError as error:
        first = first_error(error)
        keys = [k for k in first["loc"] if isinstance(k, (str, int))]
        if first["type"] == "extra_forbidden":
            raise fail(f"unknown key {keys[-1]!r}", keys) from None
        if first["type"] == "missing":
            raise fail("missing required key", keys) from None
        raise fail(f"{first['msg']} (got {first.get('input')!r})", keys) from None
    config_plugins = fixture.config.get("plugins", [])
    for where, plugins in (["plugins"], fixture.plugins), (["config", "plugins"], config_plugins):
        for index, plugin in enumerate(plugins if isinstance(plugins, list) else []):
            try:
                resolve_plugin(plugin)
            except PluginError as error:
                raise fail(str(error), [*where, index]) from None
    config_data = dict(fixture.config)
    if fixture.plugins:
        config_data["plugins"] = [*config_plugins, *fixture.plugins]
    if fixture.app not in schemas:
        known = ", ".join(sorted(schemas))
        raise fail(f"unknown app {fixture.app!r}; drivers: {known}", ["app"])
    try:
        config = parse_config(schemas[fixture.app], config_data, source="config")
    except ConfigError as error:
        at = ["config", error.key] if error.key else ["config"]
        prefix = f"config: {error.key}: " if error.key else "config: "
        raise fail(str(error).removeprefix(prefix).removeprefix("config: "), at) from None
    for relative in fixture.files:
        if relative.startswith("/") or ".." in Path(relative).parts or "\x00" in relative:
            raise fail(
                f"file path {relative!r} must stay inside the workspace", ["files", relative]
            )
    replies = None
    if fixture.model is not None:
        parsed = []
        for index, spec in enumerate(fixture.model):
            try:
                parsed.append(parse_reply(spec, where=f"model[{index}]"))
            except ConfigError as error:
                line = locate(text, ["model", index])
                raise ScenarioError(str(error), path=label, line=line) from None
        replies = tuple(parsed)
    return Scenario(
        name=name,
        path=path,
        app=fixture.app,
        pin=fixture.pin,
        header_class=fixture.header_class,
        description=fixture.description,
        config=config,
        files=dict(fixture.files),
        prompts=tuple(step.prompt for step in fixture.steps),
        model=replies,
    )


def load_fixture(path: Path, schemas: Mapping[str, type[Schema]]) -> Scenario:
    """Read and validate ``path`` (``schemas`` as for ``parse_scenario``)."""
    try:
        text = read_text(path, missing="no such fixture")
    except YamlError as error:
        raise ScenarioError(error.reason, path=str(path)) from None
    return parse_fixture(text, path, schemas)


def discover(directory: Path) -> list[Path]:
    """Fixture files in ``directory`` (``*.yaml``), sorted by name."""
    if not directory.is_dir():
        raise YamlError("fixtures directory does not exist", path=str(directory))
    return sorted(p for p in directory.glob("*.yaml") if p.is_file())
