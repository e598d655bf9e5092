"""The model API registry: every module in ``testing/wire/apis/`` is registered, found
by its paths, and the only place in the code that names an api."""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import re
from pathlib import Path
from typing import Any

import pytest

import headerlock
from headerlock.errors import ConfigError, WireRecordingError
from headerlock.formats.canonical_yaml import dump
from headerlock.testing.wire import apis
from headerlock.testing.wire.apis import NAMES, REGISTERED, detect_api, model_api, split_body
from headerlock.testing.wire.apis.tool_lists import wire_tool_name
from headerlock.testing.wire.lock import lock

SOURCE = Path(headerlock.__file__).parent
BASE_MODULES = {"base", "cache_rules", "tool_lists"}

BODIES: dict[str, bytes] = {
    "openai.chat": b'{"model": "m", "user": "u1", "messages": [{"role": "system", "content": "S"},'
    b' {"role": "user", "content": "hi"}], "tools": [{"type": "function", "function":'
    b' {"name": "b"}}, {"type": "function", "function": {"name": "a"}}]}',
    "openai.responses": b'{"model": "m", "instructions": "S", "input": "hi",'
    b' "tools": [{"type": "function", "name": "b"}, {"type": "web_search_preview"}]}',
    "anthropic.messages": b'{"model": "m", "system": [{"type": "text", "text": "S"}],'
    b' "metadata": {"user_id": "u1"}, "messages": [{"role": "user", "content": "hi"}],'
    b' "tools": [{"name": "b", "input_schema": {}}, {"name": "a", "input_schema": {}}]}',
    "gemini.generate": b'{"contents": [{"role": "user", "parts": [{"text": "hi"}]}],'
    b' "systemInstruction": {"parts": [{"text": "S"}]}, "generationConfig": {"topK": 3},'
    b' "tools": [{"functionDeclarations": [{"name": "b"}, {"name": "a"}]},'
    b' {"googleSearch": {}}]}',
    "bedrock.converse": b'{"messages": [{"role": "user", "content": [{"text": "hi"}]}],'
    b' "system": [{"text": "S"}], "inferenceConfig": {"maxTokens": 9}, "toolConfig":'
    b' {"tools": [{"toolSpec": {"name": "b", "inputSchema": {"json": {}}}},'
    b' {"toolSpec": {"name": "a", "inputSchema": {"json": {}}}}, {"cachePoint":'
    b' {"type": "default"}}], "toolChoice": {"auto": {}}}}',
}
SPLITS: dict[str, tuple[Any, Any, list[str], dict[str, Any]]] = {
    "openai.chat": (
        [{"role": "system", "content": "S"}],
        [{"role": "user", "content": "hi"}],
        ["b", "a"],
        {"model": "m"},
    ),
    "openai.responses": ("S", "hi", ["b", "web_search_preview"], {"model": "m"}),
    "anthropic.messages": (
        [{"type": "text", "text": "S"}],
        [{"role": "user", "content": "hi"}],
        ["b", "a"],
        {"model": "m", "metadata": {}},
    ),
    "gemini.generate": (
        {"parts": [{"text": "S"}]},
        [{"role": "user", "parts": [{"text": "hi"}]}],
        ["b", "a", "googleSearch"],
        {"generationConfig": {"topK": 3}},
    ),
    "bedrock.converse": (
        [{"text": "S"}],
        [{"role": "user", "content": [{"text": "hi"}]}],
        ["b", "a"],
        {"inferenceConfig": {"maxTokens": 9}, "toolConfig": {"toolChoice": {"auto": {}}}},
    ),
}


def test_every_api_module_is_registered_once() -> None:
    modules = sorted({m.name for m in pkgutil.iter_modules(apis.__path__)} - BASE_MODULES)
    declared = [importlib.import_module(f"{apis.__name__}.{name}").API for name in modules]
    assert sorted(id(m) for m in declared) == sorted(id(m) for m in REGISTERED)
    assert tuple(sorted(m.name for m in REGISTERED)) == tuple(NAMES)
    assert len(set(NAMES)) == len(REGISTERED) == len(BODIES)


@pytest.mark.parametrize("name", NAMES)
def test_detect_api_finds_each_api_by_each_of_its_paths(name: str) -> None:
    found = model_api(name)
    assert re.fullmatch(r"[a-z]+\.[a-z]+", name) and found.provider == name.split(".")[0]
    for suffix in found.path_suffixes:
        for path in (f"/v1{suffix}", f"/v1beta/models/x{suffix}", f"/proxy/v1{suffix}/"):
            assert detect_api("POST", path) == name, path
            assert detect_api("post", path) == name
            assert detect_api("GET", path) is None
    assert detect_api("POST", "/v1/embeddings") is None


def test_an_unknown_api_names_the_known_ones() -> None:
    with pytest.raises(ConfigError) as caught:
        model_api("openai.completions")
    assert str(caught.value) == (
        "unknown model api 'openai.completions'; expected one of " + ", ".join(NAMES)
    )


@pytest.mark.parametrize("name", NAMES)
def test_each_api_splits_its_body_and_spans_its_tools(name: str) -> None:
    body = BODIES[name]
    split = split_body(name, body)
    system, messages, tool_names, config = SPLITS[name]
    assert (split.system, split.messages, split.tool_names, split.config) == (
        system,
        messages,
        tool_names,
        config,
    )
    assert split.system_raw in body and split.prefix == split.tools_raw + split.system_raw
    assert body.index(split.tools_raw) > 0 and json.loads(split.tools_raw) == split.tools
    spans = model_api(name).tool_spans(split.tools_raw)
    assert len(spans) == len(split.tool_names)
    for (start, end), tool in zip(spans, model_api(name).tools_of(split.tools), strict=True):
        assert json.loads(split.tools_raw[start:end]) in (tool, *tool.values())
        assert wire_tool_name(tool, strict=False) in split.tool_names


@pytest.mark.parametrize("name", NAMES)
def test_each_api_has_an_error_body_naming_the_message(name: str) -> None:
    body = model_api(name).error_body("headerlock: it differs", "headerlock_mismatch")
    assert "headerlock: it differs" in json.dumps(body)
    assert model_api(name).cache_reason("tools") in (None, "tools_changed")


def _string_literals(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def test_no_module_outside_the_registry_names_an_api() -> None:
    outside = [path for path in sorted(SOURCE.rglob("*.py")) if apis.__path__[0] not in str(path)]
    named = {
        path.relative_to(SOURCE).as_posix(): _string_literals(path) & set(NAMES) for path in outside
    }
    assert {path: sorted(found) for path, found in named.items() if found} == {}


def test_a_recording_with_an_unknown_api_is_refused_naming_file_and_key(tmp_path: Path) -> None:
    path = tmp_path / "old.yaml"  # one entry, with an api nobody registered
    entry: dict[str, Any] = {
        "api": "openai.completions",
        "path": "/v1/completions",
        "config": {},
        "system": None,
        "tools": None,
        "tool_names": [],
        "prefix_sha256": "0" * 64,
        "messages": [],
        "response": {"status": 200, "content_type": None, "text": ""},
    }
    path.write_text(dump({"kind": "wire", "version": 1, "pinned": False, "requests": [entry]}))
    with pytest.raises(WireRecordingError) as caught, lock(path):
        pass
    assert str(caught.value) == (
        f"{path}: requests[0].api: unknown api 'openai.completions'; expected one of "
        + ", ".join(NAMES)
    )
