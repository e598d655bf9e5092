"""The driver contract: how a kind of agent (a fixture's ``app:``) is started, fed
the scenario's prompts and asked for its session log; and the built-in ``spine``
driver, which runs ``AgentApp`` in this process.

The contract lives in the runtime so that drivers of any layer (the demo apps,
third-party packages) implement it without importing the testing layer, which
finds them by name (``headerlock.testing.scenario.drivers``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from headerlock.errors import ConfigError
from headerlock.runtime.adapters.scripted import Reply, ScriptedAdapter
from headerlock.runtime.app import AgentApp
from headerlock.runtime.config import Schema, SpineConfig, forward
from headerlock.runtime.context import Plugin
from headerlock.runtime.llm import LlmAdapter
from headerlock.runtime.plugins import resolve_plugin


@dataclass(frozen=True, slots=True)
class ModelSource:
    """Where model output comes from: scripted ``replies`` or the live endpoint."""

    replies: tuple[Reply, ...] | None = None
    live: bool = False

    def adapter(self, config: Schema) -> LlmAdapter:
        """The adapter for one run."""
        if self.replies is not None:  # nobody sees this adapter's requests after the run
            return ScriptedAdapter(self.replies, keep_requests=False)
        if self.live:
            from headerlock.runtime.adapters.openai_compat import OpenAICompatAdapter

            return OpenAICompatAdapter.from_env(model=str(getattr(config, "model", "demo")))
        raise ConfigError("no model output: give a model script, a recording, or run live")


class PluginSchedule(Protocol):
    """A load schedule: ``order`` indexes the configured plugins; ``apply``
    reorders plugin callables and delays their loading."""

    @property
    def order(self) -> tuple[int, ...]: ...

    def apply(self, plugins: Sequence[Plugin]) -> list[Plugin]: ...


@dataclass(frozen=True, slots=True)
class DriverJob:
    """One run a driver carries out, in a fresh ``workspace`` seeded with the fixture's files."""

    name: str
    config: Any
    """The fixture's ``config:``, validated by the driver's ``config_schema``."""
    prompts: tuple[str, ...]
    workspace: Path
    model: ModelSource
    plugins: Sequence[Plugin] = ()
    """Extra in-process plugins loaded beside the configured ones."""
    schedule: PluginSchedule | None = None
    """Reorders (and delays) the configured plugins; ``None`` keeps the configured order."""


@dataclass(frozen=True, slots=True)
class RunOutput:
    """What a run produced before normalization."""

    events: list[dict[str, Any]]
    transcript: list[dict[str, Any]] | None
    workspace: str
    extra: dict[str, Any] = field(default_factory=dict)


class Driver(Protocol):
    """Starts one kind of agent, feeds it a job's prompts, returns its log."""

    name: str
    config_schema: type[Schema]

    def unavailable(self, config: Any) -> str | None:
        """Why this driver cannot run ``config`` here (a missing optional SDK), or ``None``."""
        ...

    async def run(self, job: DriverJob) -> RunOutput:
        """Run every prompt of ``job`` and return the session log (and transcript)."""
        ...


def spine_app(job: DriverJob) -> AgentApp:
    """An ``AgentApp`` for ``job``: its config forwarded to the spine, the schedule applied."""
    spine = forward(job.config, SpineConfig)
    plugins = list(job.plugins)
    if job.schedule is not None:
        configured = job.schedule.apply([resolve_plugin(p) for p in spine.plugins])
        spine = spine.model_copy(update={"plugins": []})
        plugins = [*plugins, *configured]
    adapter = job.model.adapter(job.config)
    return AgentApp(spine, plugins=plugins, adapter=adapter, workspace=job.workspace)


class SpineDriver:
    """``app: spine``: the agent core in this process, one turn per prompt."""

    name = "spine"
    config_schema: type[Schema] = SpineConfig

    def unavailable(self, config: Any) -> str | None:
        return None

    async def run(self, job: DriverJob) -> RunOutput:
        app = spine_app(job)
        async with app:
            for prompt in job.prompts:
                await app.run_turn(prompt)
        return RunOutput(app.session.to_data(), None, str(job.workspace))
