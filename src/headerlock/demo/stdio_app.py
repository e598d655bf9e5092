"""The stdio demo: a terminal chat that prints each request header's tool order.

``python -m headerlock.demo.stdio_app --config app.yaml [--script replies.yaml]``
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from headerlock.demo.launch import add_launch_arguments, load_app_config, load_script
from headerlock.errors import HeaderlockError
from headerlock.runtime.app import AgentApp
from headerlock.runtime.config import SpineConfig, StdioAppConfig, forward
from headerlock.runtime.header import fold_request_header
from headerlock.runtime.llm import LlmAdapter
from headerlock.runtime.session import REQUEST_HEADER, REQUEST_HEADER_DELTA, Event
from headerlock.runtime.threads import start_daemon, wait_awake


async def run_stdio(app: AgentApp, *, prompt: str, stdin: TextIO, stdout: TextIO) -> int:
    """Chat until end of input; returns 0, or 1 when any turn failed."""

    def show_header(event: Event) -> None:
        if event.type in (REQUEST_HEADER, REQUEST_HEADER_DELTA):
            header = fold_request_header(app.session.events)
            names = ", ".join(header.tool_names()) if header else ""
            reason = event.data.get("reason", "delta")
            print(f"[header {reason}] tools: {names or '(none)'}", file=stdout, flush=True)

    app.session.subscribe(show_header)
    failed = False
    async with app:
        while True:
            print(prompt, end="", file=stdout, flush=True)
            # Not asyncio.to_thread: asyncio.run would join that thread at exit, so
            # Ctrl-C at the prompt would wait for a line that never comes.
            line = await wait_awake(start_daemon(stdin.readline, name="stdin"))
            if not line:
                print(file=stdout)
                break
            if not line.strip():
                continue
            result = await app.run_turn(line.rstrip("\n"))
            if result.reason.kind == "error":
                failed = True
                print(f"error: {result.reason.message}", file=stdout, flush=True)
            else:
                print(result.text, file=stdout, flush=True)
                if result.reason.kind == "max-steps":
                    print(f"(stopped after {result.reason.step} steps)", file=stdout, flush=True)
    return 1 if failed else 0


def stdio_app(
    config: StdioAppConfig, adapter: LlmAdapter | None, workspace: Path | None = None
) -> AgentApp:
    """The spine configured from the stdio app's config."""
    return AgentApp(forward(config, SpineConfig), adapter=adapter, workspace=workspace)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the stdio demo."""
    parser = argparse.ArgumentParser(
        prog="python -m headerlock.demo.stdio_app", description=__doc__
    )
    add_launch_arguments(parser)
    args = parser.parse_args(argv)
    try:
        config = load_app_config(StdioAppConfig, args.config)
        adapter = load_script(args.script)
        app = stdio_app(config, adapter, args.workspace)
        return asyncio.run(run_stdio(app, prompt=config.prompt, stdin=sys.stdin, stdout=sys.stdout))
    except HeaderlockError as error:
        print(f"headerlock: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
