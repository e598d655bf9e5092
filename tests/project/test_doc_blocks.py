"""Every fenced block of the README and the docs site is run or checked, and a block
nothing checks fails the guard (``test_every_block_is_checked``) naming its page and line.

A block is checked by its language and the marker comment right above it:

- ``python`` marked ``example:``, ``recipe:`` or ``production:``: run by a test that
  reads it by name (``docs.examples``; the runtime, tool-order, cache and recorder
  examples here); ``fragment: why`` (a part of a test): compiled, its ``headerlock``
  imports and attributes exist, and every other name it uses but does not define is
  public or is named in backticks in the reason;
- ``sh``/``console``: every command line is parsed by what runs it (the ``headerlock``
  parser; pytest with every installed plugin, configured, so headerlock's own option
  checks run; ``pip install`` extras against ``pyproject.toml``); output in a
  ``console`` or ``text`` block must be a marked example that a test compares with what
  headerlock prints (``test_doc_outputs.py``); a ``synopsis:`` block names only
  commands and options the parser has, and every command;
- ``ini``/``toml``/``cfg``: a project's configuration that pytest loads and headerlock
  configures (its values validated), with no key pytest or a plugin does not register;
- ``yaml``: a fixture through the fixture loader, a recording through the recording
  loader, a GitHub workflow parsed and its ``run:`` commands checked as above;
- ``gitignore``: its patterns match the pending files headerlock writes.

Commands in the prose's inline code (``headerlock review --list``) are checked too.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import builtins
import contextlib
import importlib
import inspect
import io
import re
import shlex
import tomllib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

import headerlock
import headerlock.agent
import headerlock.wire
from headerlock.cli import build_parser, main
from headerlock.formats.pending import pending_path
from headerlock.formats.recording import load_recording
from headerlock.formats.wire_recording import load_wire_recording
from headerlock.testing.scenario.fixtures import load_scenario
from tests import docs

BLOCKS = docs.blocks()
RUN = ("example", "recipe", "production")
"""Markers of the blocks a test runs (or compares with output), by name."""
SHELL = ("sh", "bash", "console")
CONFIG = ("ini", "toml", "cfg")
PYPROJECT = tomllib.loads((docs.ROOT / "pyproject.toml").read_text("utf-8"))
EXTRAS = PYPROJECT["project"]["optional-dependencies"]
READERS = [
    text
    for path in sorted((docs.ROOT / "tests").rglob("test_*.py"))
    if "examples(" in (text := path.read_text("utf-8"))
]
"""The test files that read marked blocks (``docs.examples(tag)``)."""


def _of(*langs: str, tag: str | None = None) -> list[Any]:
    return [
        pytest.param(b, id=b.where)
        for b in BLOCKS
        if b.lang in langs and (tag is None or b.tag == tag)
    ]


def _read_by_a_test(name: str) -> bool:
    return any(f'"{name}"' in text or f"'{name}'" in text for text in READERS)


# -- what a block is -------------------------------------------------------------------


def _yaml_kind(code: str) -> str:
    """``fixture``, ``recording``, ``workflow`` or ``""`` (a YAML format nobody loads)."""
    try:
        data = yaml.safe_load(code)
    except yaml.YAMLError:
        return ""
    if not isinstance(data, dict):
        return ""
    if data.get("kind") == "wire" or "scenario" in data:
        return "recording"
    if "app" in data or "steps" in data:
        return "fixture"
    if "jobs" in data:
        return "workflow"
    return ""


def _console(code: str) -> tuple[list[str], list[str]]:
    """A console block's command lines (``$ ``, the prompt dropped) and output lines."""
    commands = [line[2:] for line in code.splitlines() if line.startswith("$ ")]
    output = [line for line in code.splitlines() if line.strip() and not line.startswith("$ ")]
    return commands, output


def unchecked(block: docs.Block) -> str:
    """Why nothing checks ``block`` (``""`` when something does)."""
    if block.tag in RUN:
        return "" if _read_by_a_test(block.name) else f"no test reads {block.tag} {block.name!r}"
    if block.tag == "fragment":
        return "" if block.lang == "python" else "only a python block can be a fragment"
    if block.tag == "synopsis":
        return "" if block.lang == "sh" else "only an sh block can be a synopsis"
    if block.tag:
        return f"unknown marker {block.tag!r}"
    if block.lang == "python":
        return "a python block must be run (example:) or be a fragment: (why)"
    if block.lang == "console" and _console(block.code)[1]:
        return "console output must be a marked example: a test compares it"
    if block.lang in SHELL or block.lang in CONFIG or block.lang == "gitignore":
        return ""
    if block.lang == "yaml":
        return (
            ""
            if _yaml_kind(block.code)
            else "a YAML block that is no fixture, recording or workflow"
        )
    if block.lang == "text":
        return "text (output) must be a marked example: a test compares it"
    return f"unknown language {block.lang!r}"


def test_every_block_is_checked() -> None:
    found = [f"{block.where}: {why}" for block in BLOCKS if (why := unchecked(block))]
    assert not found, "\n".join(found)


def test_the_guard_refuses_an_unchecked_block() -> None:
    page = docs.ROOT / "docs" / "new.md"
    cases = {
        ("python", "", ""): "a python block must be run",
        ("rust", "", ""): "unknown language 'rust'",
        ("text", "", ""): "text (output) must be a marked example",
        ("console", "", ""): "console output must be a marked example",
        ("yaml", "", ""): "no fixture, recording or workflow",
        ("python", "example", "-".join(["never", "read"])): "no test reads example",
    }
    for (lang, tag, name), why in cases.items():
        code = {"console": "$ pytest\n1 passed", "yaml": "a: 1"}.get(lang, "x = 1")
        block = docs.Block(page, 3, lang, tag, name, code)
        assert why in unchecked(block), (lang, tag)
    assert docs.Block(page, 3, "rust", "", "", "").where == "docs/new.md:3"


# -- commands --------------------------------------------------------------------------


def _lines(block: docs.Block) -> list[str]:
    if block.lang == "console":
        return _console(block.code)[0]
    return [line for line in block.code.splitlines() if line.strip() and not line[0].isspace()]


def _argvs(line: str) -> Iterator[list[str]]:
    """The commands of one shell line (``a && b`` is two), comments dropped."""
    words = shlex.split(line, comments=True)
    while words:
        end = words.index("&&") if "&&" in words else len(words)
        yield words[:end]
        words = words[end + 1 :]


def _headerlock(argv: list[str]) -> str:
    """Why the ``headerlock`` command refuses ``argv`` (``""`` when it accepts it)."""
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        try:
            build_parser().parse_args(argv)
        except SystemExit as exit:
            return "" if exit.code == 0 else stderr.getvalue().strip()
    return ""


def _pytest(argv: list[str], pytester: pytest.Pytester) -> str:
    """Why pytest, with every installed plugin configured, refuses ``argv``."""
    try:
        pytester.parseconfigure(*argv)
    except pytest.UsageError as error:
        return str(error)
    return ""


def _requirement(word: str) -> str:
    """Why ``pip install word`` is not one of this project's installs."""
    extras = re.fullmatch(r"(?P<name>[^\[]+)\[(?P<extras>[^\]]+)\]", word)
    if extras and extras["name"] in (".", "headerlock"):
        unknown = set(extras["extras"].split(",")) - set(EXTRAS)
        return f"no extra {sorted(unknown)} in pyproject.toml" if unknown else ""
    if word in (".", "headerlock"):
        return ""
    listed = {re.split(r"[<>=\[]", dep)[0] for deps in EXTRAS.values() for dep in deps}
    return "" if word in listed else f"{word} is in no extra of pyproject.toml"


def command_problem(argv: list[str], pytester: pytest.Pytester) -> str:
    """Why ``argv``, a command the docs show, would not run as shown."""
    program, args = Path(argv[0]).name, argv[1:]
    if program in ("python", "python3") and args[:1] == ["-m"]:
        program, args = args[1], args[2:]
    if program == "headerlock":
        return _headerlock(args)
    if program == "pytest":
        return _pytest(args, pytester)
    if program == "pip":
        if args[:1] != ["install"]:
            return "pip: only install is shown"
        words = [word for word in args[1:] if not word.startswith("-")]
        return "; ".join(problem for word in words if (problem := _requirement(word)))
    if program == "venv":
        return ""
    return f"{program}: a command no check knows"


@pytest.mark.parametrize("block", [b for b in _of(*SHELL) if _lines(b.values[0])])
def test_every_command_line_is_accepted(block: docs.Block, pytester: pytest.Pytester) -> None:
    if block.tag == "synopsis":
        pytest.skip("a synopsis: test_the_command_synopsis_names_what_the_parser_has")
    argvs = [argv for line in _lines(block) for argv in _argvs(line)]
    assert argvs, f"{block.where}: no command"
    refused = [f"{argv}: {why}" for argv in argvs if (why := command_problem(argv, pytester))]
    assert not refused


def test_the_command_check_refuses_what_would_not_run(pytester: pytest.Pytester) -> None:
    assert "invalid choice" in command_problem(["headerlock", "reveiw"], pytester)
    assert "--runz" in command_problem(["headerlock", "flakes", "--runz", "4"], pytester)
    assert "--headerlock-recrod" in command_problem(["pytest", "--headerlock-recrod=new"], pytester)
    assert "contradict" in command_problem(
        ["pytest", "--snapshot-update", "--headerlock-record=none"], pytester
    )
    assert "no extra" in command_problem(["pip", "install", ".[dmeo]"], pytester)
    assert "in no extra" in command_problem(["pip", "install", "pytest-splat"], pytester)
    assert "no check knows" in command_problem(["curl", "x"], pytester)
    assert command_problem(["pip", "install", "-e", ".[test]", "pytest-split"], pytester) == ""


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


@pytest.mark.parametrize("block", _of("sh", tag="synopsis"))
def test_the_command_synopsis_names_what_the_parser_has(block: docs.Block) -> None:
    commands = _subcommands()
    top = {o for a in build_parser()._actions for o in a.option_strings}
    shown: set[str] = set()
    wrong: list[str] = []
    command = ""
    for line in block.code.splitlines():
        text = line.split("#", 1)[0]
        words = text.split()
        if words[:1] == [block.name]:
            command = words[1] if len(words) > 1 and not words[1].startswith("-") else ""
            shown.add(command)
        known = (
            {o for a in commands[command]._actions for o in a.option_strings} if command else top
        )
        for option in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", text):
            if option not in known:
                wrong.append(f"{block.name} {command} {option}")
    assert not wrong
    internal = {"run-once", "flake-worker"}
    assert set(commands) - internal <= shown, "a command the synopsis leaves out"


# -- configuration ---------------------------------------------------------------------


def _check_ini(pytester: pytest.Pytester, values: dict[str, str]) -> None:
    for key in ("headerlock_fixtures", "headerlock_recordings"):
        (pytester.path / values.get(key, key.removeprefix("headerlock_"))).mkdir(exist_ok=True)
    for folder in values.get("testpaths", "").split():
        (pytester.path / folder).mkdir(exist_ok=True)
    config = pytester.parseconfigure()
    unknown = sorted(config._get_unknown_ini_keys())  # what --strict-config refuses
    assert not unknown, "spelled unlike the keys pytest and its plugins register"
    for key, value in values.items():
        got = config.getini(key)
        assert (got if isinstance(got, str) else " ".join(map(str, got))) == value, key


@pytest.mark.parametrize("block", _of(*CONFIG))
def test_every_config_block_is_accepted_by_pytest(
    block: docs.Block, pytester: pytest.Pytester
) -> None:
    if block.lang == "toml":
        data = tomllib.loads(block.code)
        options = data.get("tool", {}).get("pytest", {}).get("ini_options")
        if options is None:
            return  # a pyproject snippet of another tool: it parses as TOML
        pytester.makepyprojecttoml(block.code)
        values = {k: v if isinstance(v, str) else " ".join(map(str, v)) for k, v in options.items()}
    else:
        assert block.code.startswith("[pytest]\n") or block.code.startswith("[tool:pytest]\n")
        pytester.makeini(block.code) if block.lang == "ini" else pytester.makefile(
            ".cfg", setup=block.code
        )
        lines = [line for line in block.code.splitlines()[1:] if line.strip()]
        values = dict(tuple(part.strip() for part in line.split("=", 1)) for line in lines)  # type: ignore[misc]
    _check_ini(pytester, values)


def test_the_config_check_refuses_a_misspelled_key(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nheaderlock_recording = recordings\n")
    with pytest.raises(AssertionError, match="headerlock_recording"):
        _check_ini(pytester, {"headerlock_recording": "recordings"})
    pytester.makeini("[pytest]\nheaderlock_fixtures = fixtures  # defaults\n")
    with pytest.raises(pytest.UsageError, match="headerlock_fixtures"):
        _check_ini(pytester, {"headerlock_fixtures": "fixtures"})


# -- YAML and ignore files -------------------------------------------------------------


def load_yaml_file(code: str, folder: Path) -> Any:
    """A fixture or recording block loaded, as a file, by the loader headerlock reads
    such a file with (its one-line error when the block is not of the format)."""
    data = yaml.safe_load(code)
    if _yaml_kind(code) == "fixture":
        path = folder / "fixtures" / "example.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(code + "\n", encoding="utf-8")
        return load_scenario(path)
    path = folder / "recordings" / "example.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(code + "\n", encoding="utf-8")
    return load_wire_recording(path) if data.get("kind") == "wire" else load_recording(path)


@pytest.mark.parametrize("block", _of("yaml"))
def test_every_yaml_block_loads_with_headerlocks_loader(
    block: docs.Block, tmp_path: Path, pytester: pytest.Pytester
) -> None:
    if _yaml_kind(block.code) != "workflow":
        assert load_yaml_file(block.code, tmp_path)
        return
    workflow = yaml.safe_load(block.code)
    runs = [
        re.sub(r"\$\{\{[^}]*\}\}", "1", step["run"])
        for job in workflow["jobs"].values()
        for step in job["steps"]
        if "run" in step
    ]
    assert runs, f"{block.where}: a workflow with no run step"
    argvs = [argv for run in runs for argv in _argvs(" ".join(run.split()))]
    refused = [f"{a}: {why}" for a in argvs if (why := command_problem(a, pytester))]
    assert not refused


def test_the_yaml_check_loads_real_files_and_refuses_a_drifted_one(tmp_path: Path) -> None:
    from headerlock.errors import HeaderlockError

    for name in ("text-turn", "wire-turn"):  # a scenario recording, an app: wire one
        for folder in ("fixtures", "recordings"):
            code = (docs.ROOT / folder / f"{name}.yaml").read_text("utf-8")
            assert _yaml_kind(code) == folder.removesuffix("s"), (folder, name)
            assert load_yaml_file(code, tmp_path)
    scenario = docs.examples("example")["scenario"]
    with pytest.raises(HeaderlockError, match="modle"):
        load_yaml_file(scenario.replace("model: demo", "modle: demo"), tmp_path)


@pytest.mark.parametrize("block", _of("gitignore"))
def test_the_ignore_patterns_match_the_pending_files(block: docs.Block, tmp_path: Path) -> None:
    import fnmatch

    pending = [
        pending_path(Path("recordings/tests/test_agent/test_agent.yaml")),
        pending_path(Path("recordings/tests/test_agent/headers.lock.yaml")),
        pending_path(Path("recordings/text-turn.yaml")),
    ]
    patterns = [p for p in block.code.splitlines() if p.strip() and not p.startswith("#")]
    for path in pending:
        assert any(fnmatch.fnmatch(path.name, pattern) for pattern in patterns), path


# -- python fragments --------------------------------------------------------------------

PUBLIC = {
    name for module in (headerlock, headerlock.agent, headerlock.wire) for name in module.__all__
}
FLAGS = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT


def fragment_problems(code: str, reason: str) -> list[str]:
    """What in a fragment is not so: a ``headerlock`` import or attribute that does not
    exist, or a name used and never defined that is neither public nor in ``reason``."""
    tree = ast.parse(code)
    compile(code, "<fragment>", "exec", flags=FLAGS)
    problems: list[str] = []
    modules: dict[str, ModuleType] = {}
    functions: dict[str, Any] = {}
    defined = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("headerlock"):
            module = importlib.import_module(node.module or "")
            for alias in node.names:
                value = getattr(module, alias.name, None)
                if value is None:
                    problems.append(f"{node.module}.{alias.name}")
                elif isinstance(value, ModuleType):
                    modules[alias.asname or alias.name] = value
                else:
                    functions[alias.asname or alias.name] = value
        if isinstance(node, ast.Import | ast.ImportFrom):
            defined.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.arg) or (
            isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
        ):
            defined.add(node.arg if isinstance(node, ast.arg) else node.id)
    known = defined | PUBLIC
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            home = modules.get(node.value.id)
            if home is not None and not hasattr(home, node.attr):
                problems.append(f"{node.value.id}.{node.attr}")
        if isinstance(node, ast.Name) and node.id not in known and f"`{node.id}`" not in reason:
            problems.append(f"{node.id} (not defined, not public, not in the reason)")
        if isinstance(node, ast.Call):
            problems += _keywords(node, functions, modules)
    return sorted(set(problems))


def _keywords(
    call: ast.Call, functions: dict[str, Any], modules: dict[str, ModuleType]
) -> list[str]:
    """The keywords of a call to a ``headerlock`` callable that its signature lacks."""
    func = call.func
    if isinstance(func, ast.Name):
        target, shown = functions.get(func.id), func.id
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        target = getattr(modules.get(func.value.id), func.attr, None)
        shown = f"{func.value.id}.{func.attr}"
    else:
        return []
    if not callable(target):
        return []
    parameters = inspect.signature(target).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return []
    return [f"{shown}({k.arg}=)" for k in call.keywords if k.arg and k.arg not in parameters]


@pytest.mark.parametrize("block", _of("python", tag="fragment"))
def test_every_fragment_compiles_and_uses_names_that_exist(block: docs.Block) -> None:
    assert not fragment_problems(block.code, block.name)


def test_the_fragment_check_refuses_a_name_that_moved() -> None:
    assert fragment_problems("from headerlock.agent import AgentAp\n", "") == [
        "headerlock.agent.AgentAp"
    ]
    assert fragment_problems("from headerlock import wire\nwire.lokc()\n", "") == ["wire.lokc"]
    assert fragment_problems("from headerlock import wire\nwire.lock(None, mdoe='all')\n", "") == [
        "wire.lock(mdoe=)"
    ]
    called = (
        "from headerlock.agent import assert_plugin_order_invariant as check\ncheck(max_example=5)"
    )
    assert fragment_problems(called, "") == ["check(max_example=)"]
    assert fragment_problems("drive(app)\n", "`drive` is yours") == [
        "app (not defined, not public, not in the reason)"
    ]


# -- python examples this file runs --------------------------------------------------------


def test_the_runtime_example_runs_a_turn() -> None:
    code = docs.examples("example")["runtime"]
    namespace: dict[str, Any] = {"__name__": "docs_runtime"}
    coroutine = eval(compile(code, "runtime.md:runtime", "exec", flags=FLAGS), namespace)
    asyncio.run(coroutine)
    assert namespace["result"].reason.kind == "stop"
    types = [event.type for event in namespace["app"].session.events]
    shown = ["turn/start", "step/start", "request/header"]  # the comment's "..." aside
    assert [t for t in types if t in shown][:3] == shown


def test_the_tool_order_example_prints_what_its_comments_say() -> None:
    code = docs.examples("example")["tool-order"]
    namespace: dict[str, Any] = {"__name__": "docs_tool_order"}
    lines = code.splitlines()
    said = [
        (line.split("#")[0].strip(), line.split("#")[1].strip()) for line in lines if "#" in line
    ]
    exec(compile(code, "runtime.md:tool-order", "exec"), namespace)
    assert said
    for expression, comment in said:
        ordered = eval(expression, namespace)
        assert ", ".join(tool.name for tool in ordered) == comment


def test_the_cache_example_reports_the_lock_examples_recording(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("openai")
    monkeypatch.chdir(tmp_path)
    examples = docs.examples("example")
    exec(compile(examples["lock"], "wire.md:lock", "exec"), {"__name__": "docs_lock"})
    exec(compile(examples["cache-api"], "cache.md:cache-api", "exec"), {"__name__": "docs_cache"})
    assert capsys.readouterr().out.startswith("cache report: recordings/agent.yaml (")
    wire_recording = (tmp_path / "recordings" / "agent.yaml").read_text("utf-8")
    assert _yaml_kind(wire_recording) == "recording"  # a doc may show one: it would load
    (tmp_path / "shown").mkdir()
    assert load_yaml_file(wire_recording, tmp_path / "shown").requests
    (command,) = [b for b in BLOCKS if b.lang == "sh" and "headerlock cache recordings " in b.code]
    (argv,) = list(_argvs(command.code))
    assert main(argv[1:], out=io.StringIO()) in (0, 1)
    assert (tmp_path / "cache.html").read_text("utf-8").startswith("<!DOCTYPE html>")


def test_the_recorder_example_records_replays_and_catches_a_change(
    pytester: pytest.Pytester,
) -> None:
    code = docs.examples("example")["recorder"]
    pytester.mkpydir("tests")
    test = pytester.path / "tests" / "test_agent.py"
    test.write_text(code, encoding="utf-8")
    pytester.runpytest_inprocess("--snapshot-update").assert_outcomes(passed=1)
    (stated,) = re.findall(r"# (recordings/\S+)", code)  # where its comment says it goes
    assert (pytester.path / stated).is_file()
    pytester.runpytest_inprocess().assert_outcomes(passed=1)
    test.write_text(code.replace('"Read a file."', '"Read a text file."'), encoding="utf-8")
    pytester.runpytest_inprocess().assert_outcomes(failed=1)


def test_the_permutations_command_passes_on_the_scenario_example(
    pytester: pytest.Pytester,
) -> None:
    (block,) = [b for b in BLOCKS if b.lang == "sh" and "--headerlock-permutations" in b.code]
    (argv,) = list(_argvs(block.code))
    pytester.mkdir("fixtures")
    scenario = docs.examples("example")["scenario"]
    (pytester.path / "fixtures" / "notes.yaml").write_text(scenario + "\n", encoding="utf-8")
    pytester.runpytest_inprocess("fixtures", "--snapshot-update").assert_outcomes(passed=2)
    result = pytester.runpytest_inprocess("fixtures", *argv[1:])
    result.assert_outcomes(passed=2)  # the scenario under 6 orders, and the guards


# -- commands in the prose -------------------------------------------------------------

INLINE = re.compile(r"`((?:headerlock|pytest|pip install|python -m pytest) [^`\n]*)`")
OPTION = re.compile(r"(?<![\w<-])(--?[a-zA-Z][\w-]*)")


def inline_problems(text: str, pytest_options: set[str]) -> list[str]:
    """The commands in ``text``'s inline code (``headerlock review --list``, a usage
    line such as ``headerlock unused MANIFEST... [--remove]``) that name a command or an
    option the parser does not have, or an extra ``pyproject.toml`` does not."""
    commands = _subcommands()
    top = {o for a in build_parser()._actions for o in a.option_strings}
    problems = []
    for span in sorted(set(INLINE.findall(text))):
        words = span.split()
        if words[0] == "pip":
            problems += [f"{span}: {why}" for w in words[2:] if (why := _requirement(w.strip('"')))]
            continue
        if words[0] == "headerlock":
            sub = words[1] if len(words) > 1 and not words[1].startswith("-") else ""
            if sub and sub not in commands and sub != "COMMAND":
                problems.append(f"{span}: no command {sub!r}")
                continue
            actions = commands[sub]._actions if sub in commands else build_parser()._actions
            known = {o for a in actions for o in a.option_strings} if sub else top
        else:
            known = pytest_options
        problems += [f"{span}: {o}" for o in OPTION.findall(span) if o not in known]
    return problems


@pytest.fixture
def pytest_options(pytester: pytest.Pytester) -> set[str]:
    """Every option of pytest with every installed plugin (headerlock's included)."""
    config = pytester.parseconfig()
    return set(config._parser.optparser._option_string_actions)


def test_every_command_in_the_prose_names_what_exists(pytest_options: set[str]) -> None:
    assert not inline_problems(docs.text(), pytest_options)


def test_the_prose_check_refuses_what_does_not_exist(pytest_options: set[str]) -> None:
    text = "`headerlock reveiw --list` `headerlock unused M... [--remov]` `pytest --snapshot-updat`"
    assert inline_problems(text + ' `pip install "headerlock[wirre]"`', pytest_options) == [
        "headerlock reveiw --list: no command 'reveiw'",
        "headerlock unused M... [--remov]: --remov",
        "pip install \"headerlock[wirre]\": no extra ['wirre'] in pyproject.toml",
        "pytest --snapshot-updat: --snapshot-updat",
    ]
