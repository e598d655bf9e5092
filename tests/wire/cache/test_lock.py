"""The cache report of a header-locked (unpinned) recording reads each request's header
from the ``headers.lock.yaml`` beside it: the model and the system are seen, so a model
switch and a system change inside a conversation are found, the same from the recording
(``headerlock cache``) as from the bytes sent (``--headerlock-cache``); without the lock
its tools and system are unseen, in one line saying why."""

from __future__ import annotations

import io
import re

import openai  # noqa: F401  (loaded once here: the in-process runs reuse it)
import pytest

from headerlock.cli import main
from headerlock.testing.wire.cache.prefix import LOCK_RENDERING
from headerlock.testing.wire.cache.report import cache_report
from tests.wire.agents import CLOSED

TESTS = f'''
import openai
import pytest

LONG = " ".join(f"Rule {{n}}: be exact and cite the file." for n in range(160))
SCRIPT = [{{"text": f"reply {{n}}"}} for n in range(6)]
TOOLS = [{{"type": "function", "function": {{"name": "grep", "parameters": {{"type": "object"}}}}}}]


def conversation(client, models, systems):
    messages = []
    for turn, (model, system) in enumerate(zip(models, systems)):
        messages.append({{"role": "user", "content": f"question {{turn}}"}})
        sent = [{{"role": "system", "content": system}}, *messages]
        reply = client.chat.completions.create(model=model, messages=sent, tools=TOOLS)
        messages.append({{"role": "assistant", "content": reply.choices[0].message.content}})


@pytest.mark.headerlock_wire(script=SCRIPT)
def test_two_models(headerlock_wire):
    client = openai.OpenAI(base_url="{CLOSED}", api_key="sk-test-not-a-real-key-0001", max_retries=0)
    conversation(client, ["gpt-4o", "gpt-4o", "gpt-4o-mini"], [LONG] * 3)
    conversation(client, ["gpt-4.1"] * 3, [LONG, LONG, LONG + " Today is Monday."])
'''
RECORDING = "recordings/test_agent/test_two_models.yaml"


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_agent=TESTS)
    assert pytester.runpytest_inprocess("--snapshot-update", "-p", "no:cacheprovider").ret == 0
    text = (pytester.path / RECORDING).read_text(encoding="utf-8")
    assert "pinned: false" in text and "  config: {}\n" in text  # the model is in the lock
    return pytester


def _cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(["cache", *args], out=out), out.getvalue()


def _findings(text: str) -> list[str]:
    """The request rows, the total and the findings' lines without their byte offsets (a
    recording renders the locked system and tools as compact JSON with sorted keys, a run
    keeps the bytes sent)."""
    lines = text.splitlines()
    rows = [line for line in lines if re.match(r" +\d+ +\d+% ", line) or "  total: " in line]
    found = [line.strip() for line in lines if line.startswith("    request ")]
    return rows + [re.sub(r" byte \d+", "", line) for line in found]


def test_the_lock_gives_the_report_the_model_and_the_system(project: pytest.Pytester) -> None:
    path = project.path / RECORDING
    report = cache_report(path)
    assert report.unseen == () and report.approximated == LOCK_RENDERING
    assert [(r.number, r.model, r.lineage) for r in report.requests] == [
        (1, "gpt-4o", 1), (2, "gpt-4o", 1), (3, "gpt-4o-mini", 1),
        (4, "gpt-4.1", 2), (5, "gpt-4.1", 2), (6, "gpt-4.1", 2),
    ]  # fmt: skip
    found = [(f.number, f.code, f.segment) for f in report.findings]
    assert found == [(3, "config-changed", "config"), (6, "system-changed", "system")]
    assert "gpt-4o" in report.findings[0].detail and "gpt-4o-mini" in report.findings[0].detail

    code, out = _cli(path.as_posix())
    assert code == 1
    assert f"  approximated: {LOCK_RENDERING}" in out and "  not seen:" not in out
    run = project.runpytest_inprocess("--headerlock-cache", "-p", "no:cacheprovider")
    assert run.ret == 0
    summary = run.stdout.str()
    section = summary[summary.index("headerlock cache report") :]
    assert _findings(out) == _findings(section)
    assert len(_findings(out)) == 6 + 1 + 2


def test_a_missing_lock_or_header_is_one_line_and_unseen(
    project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    path = project.path / RECORDING
    lock = path.parent / "headers.lock.yaml"
    text = lock.read_text(encoding="utf-8")
    lock.unlink()
    code, out = _cli(path.as_posix())
    assert code == 0  # nothing found: the model and system are not known
    assert f"  not seen: tools, system (its header lock {lock.as_posix()} is missing;" in out
    lock.write_text("kind: header-lock\nversion: 1\nheaders: {}\n", encoding="utf-8")
    code, out = _cli(path.as_posix())
    assert code == 0 and "  not seen: tools, system (header " in out
    assert f" is not in {lock.as_posix()};" in out
    lock.write_text("kind: header-lock\nversion: 1\nheaders: [1]\n", encoding="utf-8")
    capsys.readouterr()
    assert _cli(path.as_posix()) == (2, "")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"headerlock: {lock.as_posix()}: ")
    lock.write_text(text, encoding="utf-8")
    assert _cli(path.as_posix())[0] == 1
