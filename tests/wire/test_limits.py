"""Record and replay agree on limits: what a lock writes, a replay reads (issue 18)."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

from headerlock.testing.wire.lock import lock
from tests.wire.agents import CLOSED, chat_client, fn_tool


def _vision(image: str) -> str:
    client = chat_client(CLOSED)
    content = [
        {"type": "text", "text": "describe"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{image}"}},
    ]
    messages: Any = [{"role": "user", "content": content}]
    reply = client.chat.completions.create(model="gpt-test", messages=messages)
    return reply.choices[0].message.content or ""


def test_a_35_mb_vision_request_records_and_replays(tmp_path: Path) -> None:
    """A request of 34 MB of base64 (over the 32 MiB limit of a scenario recording)."""
    path = tmp_path / "vision.yaml"
    image = base64.b64encode(os.urandom(25_500_000)).decode()
    with lock(path, mode="record", script=["a cat"]):
        assert _vision(image) == "a cat"
    assert path.stat().st_size > 34_000_000
    with lock(path) as run:
        assert _vision(image) == "a cat"
    assert run.differences == []


def test_a_pinned_tool_schema_29_objects_deep_records_and_replays(tmp_path: Path) -> None:
    schema: dict[str, Any] = {"type": "string"}
    for depth in range(29):
        schema = {"type": "object", "properties": {f"k{depth}": schema}}
    tools: Any = [fn_tool("deep", schema)]
    client = chat_client(CLOSED)
    path = tmp_path / "deep.yaml"

    def ask() -> str:
        reply = client.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "x"}], tools=tools
        )
        return reply.choices[0].message.content or ""

    with lock(path, mode="record", script=["ok"], pin=True):
        assert ask() == "ok"
    with lock(path) as run:
        assert ask() == "ok"
    assert run.pinned and run.differences == []
