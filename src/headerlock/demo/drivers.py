"""The demo apps as ``app:`` drivers: ``stdio`` (in process, over text streams)
and ``acp`` (a subprocess speaking the Agent Client Protocol).

Registered through the ``headerlock.drivers`` entry-point group, so the testing
layer finds them by name without importing this package.
"""

from __future__ import annotations

import asyncio
import io
import sys
import tempfile
from pathlib import Path
from typing import Any, cast

from headerlock.errors import AgentError, ConfigError
from headerlock.formats.canonical_yaml import dump
from headerlock.runtime.adapters.scripted import reply_to_data
from headerlock.runtime.config import AcpAppConfig, Schema, StdioAppConfig
from headerlock.runtime.driver import DriverJob, RunOutput, spine_app
from headerlock.runtime.plugins import subprocess_env

ACP_TIMEOUT = 120.0


class StdioDriver:
    """``app: stdio``: the stdio demo app, fed one prompt per line."""

    name = "stdio"
    config_schema: type[Schema] = StdioAppConfig

    def unavailable(self, config: Any) -> str | None:
        return None

    async def run(self, job: DriverJob) -> RunOutput:
        from headerlock.demo.stdio_app import run_stdio

        config = cast("StdioAppConfig", job.config)
        app = spine_app(job)
        out = io.StringIO()
        stdin = io.StringIO("".join(f"{p}\n" for p in job.prompts))
        await run_stdio(app, prompt=config.prompt, stdin=stdin, stdout=out)
        return RunOutput(app.session.to_data(), [{"stdout": out.getvalue()}], str(job.workspace))


class AcpDriver:
    """``app: acp``: the ACP demo app in a subprocess; the log comes back over an
    extension method, the session updates form the transcript."""

    name = "acp"
    config_schema: type[Schema] = AcpAppConfig

    def unavailable(self, config: Any) -> str | None:
        try:
            import acp  # noqa: F401
        except ImportError:
            return "needs the ACP SDK (pip install 'headerlock[acp]')"
        return None

    async def run(self, job: DriverJob) -> RunOutput:
        from headerlock.demo.acp_app import SESSION_LOG_METHOD, TranscriptClient, require_acp

        if job.plugins:
            raise ConfigError("extra plugin callables cannot reach an ACP subprocess")
        acp = require_acp()
        config = cast("AcpAppConfig", job.config).set_values()
        if job.schedule is not None:
            config["plugins"] = [config["plugins"][i] for i in job.schedule.order]
        workspace = job.workspace
        with tempfile.TemporaryDirectory(prefix="headerlock-acp-") as temp:
            config_path = Path(temp) / "config.yaml"
            config_path.write_text(dump(config), encoding="utf-8")
            args = ["-m", "headerlock.demo.acp_app", "--config", str(config_path)]
            if job.model.replies is not None:
                script = Path(temp) / "script.yaml"
                replies = [reply_to_data(r) for r in job.model.replies]
                script.write_text(dump(replies), encoding="utf-8")
                args += ["--script", str(script)]
            elif not job.model.live:
                job.model.adapter(job.config)  # raises the "no model output" error
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
                    for prompt in job.prompts:
                        try:
                            await conn.prompt(
                                session_id=session.session_id, prompt=[acp.text_block(prompt)]
                            )
                        except acp.RequestError as error:
                            client.transcript.append(
                                {"error": {"code": error.code, "data": error.data}}
                            )
                    log = await conn.ext_method(
                        SESSION_LOG_METHOD, {"sessionId": session.session_id}
                    )
                    events: list[dict[str, Any]] = log["events"]
                    return events

            try:
                events = await asyncio.wait_for(drive(), ACP_TIMEOUT)
            except TimeoutError:
                raise AgentError(
                    f"the ACP app did not finish {job.name} within {ACP_TIMEOUT:.0f}s"
                ) from None
        return RunOutput(events, client.transcript, str(workspace))


stdio = StdioDriver()
acp = AcpDriver()
