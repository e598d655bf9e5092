"""Running a scenario through its app (spine, stdio or ACP) and collecting the log."""

from __future__ import annotations

import asyncio
import io
import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from headerlock.demo.acp_app import SESSION_LOG_METHOD, TranscriptClient, require_acp
from headerlock.demo.stdio_app import run_stdio
from headerlock.errors import ConfigError
from headerlock.formats.fixture import Scenario
from headerlock.formats.strict_yaml import dumps
from headerlock.runtime.adapters.scripted import Reply, ScriptedAdapter, reply_to_data
from headerlock.runtime.app import AgentApp
from headerlock.runtime.config import SpineConfig, StdioAppConfig, forward
from headerlock.runtime.context import Plugin
from headerlock.runtime.llm import LlmAdapter
from headerlock.runtime.plugins import resolve_plugin
from headerlock.testing.schedules import LoadSchedule

ACP_TIMEOUT = 120.0


@dataclass(frozen=True, slots=True)
class RunOutput:
    """What a run produced before normalization."""

    events: list[dict[str, Any]]
    transcript: list[dict[str, Any]] | None
    workspace: str


@dataclass(frozen=True, slots=True)
class ModelSource:
    """Where model output comes from: scripted ``replies`` or the live endpoint."""

    replies: tuple[Reply, ...] | None = None
    live: bool = False

    def adapter(self, config: SpineConfig) -> LlmAdapter:
        """The adapter for one run."""
        if self.replies is not None:
            return ScriptedAdapter(self.replies)
        if self.live:
            from headerlock.runtime.adapters.openai_compat import OpenAICompatAdapter

            return OpenAICompatAdapter.from_env(model=config.model)
        raise ConfigError("no model output: give a model script, a recording, or run live")


def _seed(workspace: Path, files: dict[str, str]) -> None:
    for relative, content in sorted(files.items()):
        target = workspace / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")


async def run_scenario(
    scenario: Scenario,
    model: ModelSource,
    *,
    plugins: Sequence[Plugin] = (),
    schedule: LoadSchedule | None = None,
) -> RunOutput:
    """Run every prompt of ``scenario`` in a fresh temporary workspace.

    ``plugins`` load beside the configured ones (the spine and stdio apps only).
    ``schedule`` reorders the configured plugins and delays their loading (an
    ACP subprocess takes the order only).
    """
    with tempfile.TemporaryDirectory(prefix="headerlock-") as temp:
        workspace = Path(temp).resolve()
        _seed(workspace, dict(scenario.files))
        if scenario.app == "acp":
            if plugins:
                raise ConfigError("extra plugin callables cannot reach an ACP subprocess")
            events, transcript = await _run_acp(scenario, model, workspace, schedule)
            return RunOutput(events, transcript, str(workspace))
        adapter = model.adapter(scenario.config)
        spine = forward(scenario.config, SpineConfig)
        if schedule is not None:
            configured = schedule.apply([resolve_plugin(p) for p in spine.plugins])
            spine = spine.model_copy(update={"plugins": []})
            plugins = [*plugins, *configured]
        app = AgentApp(spine, plugins=plugins, adapter=adapter, workspace=workspace)
        if scenario.app == "stdio":
            assert isinstance(scenario.config, StdioAppConfig)
            out = io.StringIO()
            stdin = io.StringIO("".join(f"{p}\n" for p in scenario.prompts))
            await run_stdio(app, prompt=scenario.config.prompt, stdin=stdin, stdout=out)
            return RunOutput(app.session.to_data(), [{"stdout": out.getvalue()}], str(workspace))
        async with app:
            for prompt in scenario.prompts:
                await app.run_turn(prompt)
        return RunOutput(app.session.to_data(), None, str(workspace))


def subprocess_env(**overrides: str) -> dict[str, str]:
    """This process's environment, with a ``PYTHONPATH`` that finds what it imports
    (so a child process can load the same plugins), plus ``overrides``."""
    paths = [p for p in sys.path if p and Path(p).is_dir()]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths), **overrides}


async def _run_acp(
    scenario: Scenario, model: ModelSource, workspace: Path, schedule: LoadSchedule | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    acp = require_acp()
    config = scenario.config.set_values()
    if schedule is not None:
        config["plugins"] = [config["plugins"][i] for i in schedule.order]
    with tempfile.TemporaryDirectory(prefix="headerlock-acp-") as temp:
        config_path = Path(temp) / "config.yaml"
        config_path.write_text(dumps(config), encoding="utf-8")
        args = ["-m", "headerlock.demo.acp_app", "--config", str(config_path)]
        if model.replies is not None:
            script = Path(temp) / "script.yaml"
            script.write_text(dumps([reply_to_data(r) for r in model.replies]), encoding="utf-8")
            args += ["--script", str(script)]
        elif not model.live:
            model.adapter(scenario.config)  # raises the "no model output" error
        client = TranscriptClient()

        async def drive() -> list[dict[str, Any]]:
            async with acp.spawn_agent_process(
                cast("Any", client),
                sys.executable,
                *args,
                env=subprocess_env(),
                cwd=str(workspace),
            ) as (conn, _process):
                await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
                session = await conn.new_session(cwd=str(workspace))
                for prompt in scenario.prompts:
                    try:
                        await conn.prompt(
                            session_id=session.session_id, prompt=[acp.text_block(prompt)]
                        )
                    except acp.RequestError as error:
                        client.transcript.append(
                            {"error": {"code": error.code, "data": error.data}}
                        )
                log = await conn.ext_method(SESSION_LOG_METHOD, {"sessionId": session.session_id})
                events: list[dict[str, Any]] = log["events"]
                return events

        events = await asyncio.wait_for(drive(), ACP_TIMEOUT)
    return events, client.transcript
