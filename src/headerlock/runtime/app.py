"""The spine (agent core): one object that wires the services and runs turns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from headerlock.errors import AppStateError
from headerlock.runtime.config import (
    LoopConfig,
    SpineConfig,
    SystemPromptConfig,
    forward,
    parse_config,
)
from headerlock.runtime.context import INTERNAL_ERROR, Context, Plugin
from headerlock.runtime.llm import LlmAdapter, LlmService
from headerlock.runtime.loop import AgentLoop, TurnResult
from headerlock.runtime.plugins import resolve_plugin
from headerlock.runtime.reconstruct import install_reconstructability_check
from headerlock.runtime.session import SUBSCRIBER_ERROR, Event, SessionLog
from headerlock.runtime.system_prompt import SystemPrompt
from headerlock.runtime.tools import ToolRegistry
from headerlock.runtime.workspace import Workspace

AppState = Literal["new", "idle", "running", "stopped"]


class AgentApp:
    """Loads SystemPrompt, ToolRegistry, AgentLoop, LlmService and the tool plugins.

    ``config`` is a mapping (validated as ``SpineConfig``) or a config object;
    ``persona`` and ``tool_order`` are forwarded to the SystemPrompt service,
    ``tool_order`` only when set. Tool-order shape errors raise here.
    """

    def __init__(
        self,
        config: Mapping[str, Any] | SpineConfig | None = None,
        plugins: Sequence[Plugin] = (),
        adapter: LlmAdapter | None = None,
        *,
        workspace: str | Path | None = None,
        session: SessionLog | None = None,
        invariants: bool = True,
        source: str = "config",
    ) -> None:
        self.config = (
            config
            if isinstance(config, SpineConfig)
            else parse_config(SpineConfig, config, source=source)
        )
        self.plugins = list(plugins)
        self.adapter = adapter
        self.workspace = Path(workspace) if workspace is not None else Path.cwd()
        self.session = session if session is not None else SessionLog()
        if self.session.on_subscriber_error is None:
            self.session.on_subscriber_error = self._report_subscriber_error
        self.invariants = invariants
        self.ctx = Context()
        self._loop: AgentLoop | None = None
        self._stopped = False

    @property
    def state(self) -> AppState:
        """``new`` before start, ``idle`` between turns, ``running``, ``stopped``."""
        if self._stopped:
            return "stopped"
        if self._loop is None:
            return "new"
        return self._loop.state

    @property
    def loop(self) -> AgentLoop:
        """The agent loop (after ``start()``)."""
        if self._loop is None:
            raise AppStateError("the app is not started; call 'await app.start()' first")
        return self._loop

    async def start(self) -> None:
        """Provide the services and load all plugins concurrently, each within
        ``plugin_timeout`` seconds."""
        if self.state != "new":
            raise AppStateError(f"start() called on a {self.state} app")
        ctx = self.ctx
        prompt_config = forward(self.config, SystemPromptConfig)
        prompt = SystemPrompt(
            ctx, persona=prompt_config.persona, tool_order=prompt_config.tool_order
        )
        adapter = self.adapter if self.adapter is not None else default_adapter(self.config)
        ctx.provide("tools", ToolRegistry())
        ctx.provide("workspace", Workspace(self.workspace))
        ctx.provide("session", self.session)
        ctx.provide("system_prompt", prompt)
        ctx.provide("llm", LlmService(ctx, adapter))
        loop = AgentLoop(ctx, self.session, forward(self.config, LoopConfig))
        ctx.provide("loop", loop)
        if self.invariants:
            install_reconstructability_check(ctx, self.session)
        try:
            configured = [resolve_plugin(p) for p in self.config.plugins]
            await ctx.load_plugins([*self.plugins, *configured], timeout=self.config.plugin_timeout)
        except BaseException:
            ctx.dispose()
            self.ctx = Context()
            raise
        self._loop = loop

    async def run_turn(self, prompt: str, *, trigger: str = "user") -> TurnResult:
        """Run one turn; a failing turn returns a result with an ``error`` reason."""
        if self._stopped:
            raise AppStateError("the app is stopped")
        return await self.loop.run_turn(prompt, trigger=trigger)

    def _report_subscriber_error(self, event: Event, error: Exception) -> None:
        """A session subscriber raised (the session log already logged it)."""
        self.ctx.emit(INTERNAL_ERROR, SUBSCRIBER_ERROR, error)

    async def stop(self) -> None:
        """Unload every plugin and service."""
        self.ctx.dispose()
        self._stopped = True

    async def __aenter__(self) -> AgentApp:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()


def default_adapter(config: SpineConfig) -> LlmAdapter:
    """The live OpenAI-compatible adapter, configured from ``HEADERLOCK_*`` variables."""
    from headerlock.runtime.adapters.openai_compat import OpenAICompatAdapter

    return OpenAICompatAdapter.from_env(model=config.model)
