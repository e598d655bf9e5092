"""One plugin session (issue 26 item 1): besides the hooks module, a pytest session holds
exactly one headerlock plugin object, the ``HeaderlockSession``, and the terminal summary
has one ``headerlock`` section with its parts in a fixed order."""

from __future__ import annotations

import re
import sys

import openai  # noqa: F401  (loaded once here: the in-process runs reuse it)
import pytest

from tests.wire.agents import CLOSED

AGENT = f'''
import openai
import pytest


@pytest.mark.headerlock_wire(script=[{{"text": "hi"}}])
def test_agent(headerlock_wire):
    client = openai.OpenAI(base_url="{CLOSED}", api_key="sk-test-not-a-real-key-0001", max_retries=0)
    client.chat.completions.create(model="gpt-test", messages=[{{"role": "user", "content": "x"}}])


def test_plugins_last(request):
    def module_of(plugin):
        return getattr(plugin, "__name__", None) or type(plugin).__module__

    ours = sorted(
        (name, module_of(plugin))
        for name, plugin in request.config.pluginmanager.list_name_plugin()
        if str(module_of(plugin)).startswith("headerlock")
    )
    assert ours == [
        ("headerlock", "headerlock.testing.plugin.hooks"),
        ("headerlock-session", "headerlock.testing.plugin.session"),
    ], ours
'''

INI = """[pytest]
testpaths = tests
addopts = --import-mode=importlib -p no:randomly
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_agent.py").write_text(AGENT)
    return pytester


def test_one_headerlock_plugin_object_besides_the_hooks_module(project: pytest.Pytester) -> None:
    """With every part in use (a wire test, the cache watch, the manifest writer), the
    plugin manager holds the hooks module and the one session object, nothing more."""
    options = ("--headerlock-cache", "--headerlock-manifest", "manifest.json")
    result = project.runpytest_inprocess("--snapshot-update", *options)
    result.assert_outcomes(passed=2)
    project.runpytest_inprocess(*options).assert_outcomes(passed=2)


def test_the_summary_is_one_headerlock_section_with_its_parts_in_order(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest_inprocess(
        "--snapshot-update", "--headerlock-cache", "--headerlock-manifest", "manifest.json"
    )
    result.assert_outcomes(passed=2)
    lines = result.stdout.lines
    sections = [line for line in lines if re.fullmatch(r"=+ .*headerlock.* =+", line)]
    assert sections == [next(line for line in lines if re.fullmatch(r"=+ headerlock =+", line))]
    start = lines.index(sections[0])
    result.stdout.fnmatch_lines(
        [
            "=* headerlock =*",
            "headerlock: 1 recording written, 0 unchanged",
            "headerlock:   new: recordings/tests/test_agent/test_agent.yaml",
            "headerlock cache report",
            "cache report: tests/test_agent.py::test_agent (*",
            "headerlock cache: 1 wire test, 0 with findings",
            "headerlock: manifest written to manifest.json",
        ]
    )
    assert "headerlock: manifest written to manifest.json" in lines[start:]


def test_a_session_with_nothing_to_say_has_no_headerlock_section(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    result.assert_outcomes(passed=1)
    assert not [line for line in result.stdout.lines if re.fullmatch(r"=+ headerlock =+", line)]


def test_a_run_without_wire_tests_loads_no_wire_machinery(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Start-up (issue 26 item 4): the session's parts import the wire lock, the HTTP
    clients and the model APIs only when a wire test opens a lock."""
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # headerlock's plugin only
    code = (
        "import sys, pytest\n"
        "plugin = ['-p', 'headerlock.testing.plugin.hooks', '-p', 'no:cacheprovider']\n"
        "assert pytest.main(['-q', *plugin]) == 0\n"
        "print(sorted(m for m in sys.modules if m.startswith('headerlock.testing.wire.')"
        " and m != 'headerlock.testing.wire.record_mode'"
        " and m != 'headerlock.testing.wire.seal' and m != 'headerlock.testing.wire.origins'))"
    )
    result = pytester.run(sys.executable, "-c", code, timeout=120)
    assert result.ret == 0, result.stderr.str()
    assert result.stdout.lines[-1] == "[]"
