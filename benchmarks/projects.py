"""Temporary pytest projects the subprocess workloads run in."""

from __future__ import annotations

import textwrap
from pathlib import Path

PYTEST_INI = "[pytest]\n"
ONE_TEST = "def test_one():\n    assert True\n"

TOOLS_MODULE = """
from headerlock.agent import ToolSchema

def tools(ctx):
    for i in range({tools}):
        ctx.tools.register(ToolSchema(f"tool_{{i:02d}}", f"Tool {{i}}.", {{"type": "object"}}), lambda a: "ok")
"""

PLAIN_SYRUPY = """
import pathlib, yaml, pytest
FILES = sorted(pathlib.Path(__file__).parent.parent.joinpath("recordings").glob("*.yaml"))

@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_plain(path, snapshot):
    assert snapshot == yaml.load(path.read_text(), Loader=yaml.CSafeLoader)["events"]
"""

AGENT = '''"""A two-request agent on the official OpenAI SDK: one tool call, then the answer."""
import json
import os

import openai

TOOLS = [{"type": "function", "function": {
    "name": "word_count", "description": "Count the words in a text.",
    "parameters": {"type": "object", "properties": {"text": {"type": "string"}},
                   "required": ["text"]}}}]
_client = None


def _floor():
    """BENCH_FLOOR=1: no recorder, the server's replies from a MockTransport (the floor)."""
    if not os.environ.get("BENCH_FLOOR"):
        return None
    import httpx2
    from benchmarks.wire_server import completion

    count = [0]

    def answer(request):
        count[0] += 1
        body = json.dumps(completion(json.loads(request.content), count[0])).encode()
        return httpx2.Response(200, content=body, headers={"content-type": "application/json"})

    return httpx2.Client(transport=httpx2.MockTransport(answer))


def client():
    global _client
    if _client is None:
        _client = openai.OpenAI(
            base_url=os.environ.get("BENCH_BASE_URL", "http://127.0.0.1:9/v1"),
            api_key=os.environ.get("OPENAI_API_KEY", "sk-bench-not-a-key"), max_retries=0,
            http_client=_floor())
    return _client


def run(prompt):
    messages = [{"role": "system", "content": "You are terse."},
                {"role": "user", "content": prompt}]
    for _ in range(2):
        reply = client().chat.completions.create(
            model="gpt-4o-mini", messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        if not message.tool_calls:
            return message.content
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            words = len(json.loads(call.function.arguments)["text"].split())
            messages.append({"role": "tool", "tool_call_id": call.id, "content": str(words)})
    raise AssertionError("no answer after two requests")
'''

WIRE_CONFTEST = """
import pytest

@pytest.fixture(scope="module")
def vcr_config():
    return {"match_on": ["method", "path"], "filter_headers": ["authorization"]}
"""

CASSETTER_CONFTEST = """
import pytest

@pytest.fixture(scope="module")
def vcr_config():
    return {}  # cassetter's defaults: method + URI, authorization filtered
"""

WIRE_TEST = """
import pytest
from bench_agent import run

{marker}@pytest.mark.parametrize("i", range({count}))
def test_agent({fixture}i):
    assert run(f"count the words of sentence {{i}}") == "It has 6 words."
"""


def prompt(i: int) -> str:
    """The prompt of wire test ``i`` (six words)."""
    return f"count the words of sentence {i}"


def startup_project(root: Path) -> Path:
    """A project with one trivial test and nothing of headerlock's."""
    root.mkdir(parents=True)
    (root / "pytest.ini").write_text(PYTEST_INI)
    (root / "test_one.py").write_text(ONE_TEST)
    return root


def scenario_project(root: Path, count: int, *, tools: int = 9) -> None:
    """``count`` scenario fixtures (the first pinned), a syrupy twin under ``plain/``, ``empty/``."""
    (root / "fixtures").mkdir(parents=True)
    (root / "plain").mkdir()
    (root / "empty").mkdir()
    (root / "pytest.ini").write_text(PYTEST_INI)
    (root / "bench_tools.py").write_text(TOOLS_MODULE.format(tools=tools))
    (root / "plain" / "test_plain.py").write_text(PLAIN_SYRUPY)
    for i in range(count):
        (root / "fixtures" / f"scenario-{i:03d}.yaml").write_text(
            textwrap.dedent(
                f"""\
                pin: {"true" if i == 0 else "false"}
                config: {{model: bench, persona: Benchmark persona.}}
                plugins: ["bench_tools:tools"]
                steps: [{{prompt: "prompt {i}"}}]
                model:
                  - tool_calls: [{{name: tool_01, arguments: {{path: "f{i}.txt"}}}}]
                  - text: "done {i}"
                """
            )
        )


def wire_project(root: Path, count: int) -> None:
    """The same 2-request SDK agent tested ``count`` times five ways.

    ``tests/test_hl.py`` uses the ``headerlock_wire`` fixture, ``tests/test_vcr.py``
    pytest-recording (a cassette per test), ``cst/test_cst.py`` cassetter's marker,
    ``floor/test_floor.py`` no recorder (run with ``BENCH_FLOOR=1``: a MockTransport
    answers), ``fixtures/`` are ``app: wire`` scenarios.
    """
    (root / "tests").mkdir(parents=True)
    (root / "fixtures").mkdir()
    (root / "empty").mkdir()
    (root / "pytest.ini").write_text(PYTEST_INI)
    (root / "bench_agent.py").write_text(AGENT)
    (root / "tests" / "conftest.py").write_text(WIRE_CONFTEST)
    (root / "tests" / "test_hl.py").write_text(
        WIRE_TEST.format(marker="", fixture="headerlock_wire, ", count=count)
    )
    (root / "tests" / "test_vcr.py").write_text(
        WIRE_TEST.format(marker="@pytest.mark.vcr\n", fixture="", count=count)
    )
    for folder, marker in (("cst", "@pytest.mark.vcr\n"), ("floor", "")):
        (root / folder).mkdir()
        (root / folder / f"test_{folder}.py").write_text(
            WIRE_TEST.format(marker=marker, fixture="", count=count)
        )
    (root / "cst" / "conftest.py").write_text(CASSETTER_CONFTEST)
    for i in range(count):
        (root / "fixtures" / f"wire-{i:03d}.yaml").write_text(
            textwrap.dedent(
                f"""\
                app: wire
                header_class: bench-wire
                pin: {"true" if i == 0 else "false"}
                config: {{entry: "bench_agent:run"}}
                steps: [{{prompt: "{prompt(i)}"}}]
                model:
                  - tool_calls: [{{name: word_count, arguments: {{text: "{prompt(i)}"}}}}]
                  - text: It has 6 words.
                """
            )
        )
