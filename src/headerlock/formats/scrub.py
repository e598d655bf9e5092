"""Normalization of session logs: scrub placeholders, tokenize ids and paths, restore.

Scrub replaces ``header.system`` with ``<<system>>`` and ``header.tools`` with
``<<tools>>`` (pinned scenarios keep them), keeps only tool names in deltas,
zeroes times, turns tool-call ids into ``<<id:N>>`` and the workspace path into
``<<workspace>>``, and keeps ``seq``. Scrubbing twice changes nothing.

Secrets become ``<<secret>>`` everywhere (events and transcripts, keys too,
pinned or not): any AWS access key id (``AKIA…``/``ASIA…``), the values of
``HEADERLOCK_API_KEY``, ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, of the variables
named in ``HEADERLOCK_REDACT_ENV`` and of those registered with ``redact_env`` (the
pytest ini option ``headerlock_redact_env``, ``headerlock record --redact-env``). Values
shorter than ``MIN_SECRET_LENGTH`` characters are not secrets. Each secret is found in
every form text may carry it in (``secrets.secret_forms``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from headerlock.formats import placeholders
from headerlock.formats.secrets import (
    all_forms,
    may_hold_shaped,
    secret_env,
    secret_forms,
    secret_values,
    shaped_secrets,
)
from headerlock.runtime.header import RequestHeader
from headerlock.runtime.session import (
    ASSISTANT_MESSAGE,
    REQUEST_HEADER,
    REQUEST_HEADER_DELTA,
    REQUEST_MESSAGES,
    TOOL_CALL,
    TOOL_RESULT,
    TURN_END,
)

WORKSPACE_TOKEN: Final = "<<workspace>>"
TIME_KEYS: Final = ("elapsed_ms",)

Events = list[dict[str, Any]]


def _redact(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, placeholders.SECRET)
    for key_id in shaped_secrets(text):
        text = text.replace(key_id, placeholders.SECRET)
    return text


def redact_secrets(value: Any, secrets: Sequence[str] | None = None) -> Any:
    """A copy of plain data with every secret (in strings and keys) replaced by ``<<secret>>``."""
    return _copy(value, None, all_forms(secret_values() if secrets is None else secrets))


@functools.lru_cache(maxsize=16)
def _form_table(secrets: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """Each form of each secret and the variable it came from (once per environment;
    read-only for callers)."""
    return {form: name for secret, name in secrets for form in secret_forms(secret)}


def find_secret(value: Any, environ: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """``(path, variable)`` of the first string in plain data that holds a secret
    (the path never shows the secret itself); each secret in any of its forms
    (``secret_forms``)."""
    table = _form_table(tuple(secret_env(environ).items()))
    if not table or not _holds_secret(value, tuple(table)):
        return None  # the common case, without building a path for every node

    def walk(item: Any, path: str) -> tuple[str, str] | None:
        if isinstance(item, str):
            return next(((path, name) for secret, name in table.items() if secret in item), None)
        if isinstance(item, Mapping):
            for key, child in item.items():
                where = f"{path}.{key}" if path else str(key)
                found = walk(key, f"{path or '(top level)'}, a key") or walk(child, where)
                if found:
                    return found
        elif isinstance(item, (list, tuple)):
            for index, child in enumerate(item):
                found = walk(child, f"{path}[{index}]")
                if found:
                    return found
        return None

    return walk(value, "")


def _holds_secret(value: Any, secrets: tuple[str, ...]) -> bool:
    """Whether any string (key or value) in plain data holds one of ``secrets``."""
    stack = [value]
    pop, push = stack.pop, stack.extend
    while stack:
        item = pop()
        if isinstance(item, str):
            if any(secret in item for secret in secrets):
                return True
        elif isinstance(item, Mapping):
            push(item.keys())
            push(item.values())
        elif isinstance(item, (list, tuple)):
            push(item)
    return False


def _ids_in_order(events: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    mapping: dict[str, str] = {}
    for event in events:
        _see_ids(event, mapping)
    return mapping


def _see_ids(event: Mapping[str, Any], mapping: dict[str, str]) -> None:
    """Give each tool-call id of ``event`` not seen before the next ``<<id:N>>`` token."""
    data = event.get("data")
    if not isinstance(data, Mapping):
        return
    kind = event.get("type")
    if kind == ASSISTANT_MESSAGE:
        ids = [call.get("id") for call in _calls(data)]
    elif kind in (TOOL_CALL, TOOL_RESULT):
        ids = [data.get("id")]
    else:
        return
    for call_id in ids:
        if isinstance(call_id, str) and call_id not in mapping:
            mapping[call_id] = placeholders.id_token(len(mapping) + 1)


def _calls(data: Mapping[str, Any]) -> list[Any]:
    calls = data.get("tool_calls")
    return [c for c in calls if isinstance(c, Mapping)] if isinstance(calls, list) else []


def _copy(value: Any, workspace: str | None, secrets: Sequence[str] = ()) -> Any:
    """A copy of plain data (dicts and lists) with secrets and the workspace path replaced."""
    kind = type(value)
    if kind is int or kind is bool or kind is float or value is None:
        return value
    if isinstance(value, str):
        if secrets or may_hold_shaped(value):  # a key found by its shape (an AWS key id)
            value = _redact(value, secrets)
        return (
            value.replace(workspace, WORKSPACE_TOKEN) if workspace and workspace in value else value
        )
    if kind is dict or isinstance(value, Mapping):
        if secrets:
            return {
                _redact(k, secrets) if isinstance(k, str) else k: _copy(v, workspace, secrets)
                for k, v in value.items()
            }
        return {k: _copy(v, workspace) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy(v, workspace, secrets) for v in value]
    return value


def _tool_name(tool: Any) -> Any:
    return tool.get("name") if isinstance(tool, Mapping) else tool


def scrub_events(
    events: Sequence[Mapping[str, Any]],
    *,
    pinned: bool = False,
    workspace: str | None = None,
    secrets: Sequence[str] | None = None,
) -> Events:
    """The normalized copy of ``events`` (plain data, as ``Event.to_data`` gives);
    ``secrets`` default to ``secret_values()``."""
    return list(_scrubbed(events, pinned, workspace, secrets))


def is_scrubbed(events: Sequence[Mapping[str, Any]], *, pinned: bool = False) -> bool:
    """``scrub_events(events, pinned=pinned) == events``, one event at a time (no copy
    of the whole log is kept)."""
    if not isinstance(events, list):
        return scrub_events(events, pinned=pinned) == events
    scrubbed = _scrubbed(events, pinned, None, None)
    return all(mine == event for mine, event in zip(scrubbed, events, strict=True))


def _scrubbed(
    events: Sequence[Mapping[str, Any]],
    pinned: bool,
    workspace: str | None,
    secrets: Sequence[str] | None,
) -> Iterator[Any]:
    """Each event of ``scrub_events`` in turn. An id's token depends only on the
    events up to its first appearance, so one pass gives every token."""
    hidden = all_forms(secret_values() if secrets is None else secrets)
    ids: dict[str, str] = {}
    for original in events:
        event = _copy(original, workspace, hidden)
        _see_ids(event, ids)
        _scrub_event(event, ids, pinned)
        yield event


def _scrub_event(event: Any, ids: Mapping[str, str], pinned: bool) -> None:
    """Scrub one copied event in place (see the module docstring)."""
    data = event.get("data")
    if not isinstance(data, dict):
        return
    kind = event.get("type")
    if kind == REQUEST_HEADER and isinstance(data.get("header"), dict) and not pinned:
        header = data["header"]
        if "system" in header:
            header["system"] = placeholders.SYSTEM
        if "tools" in header:
            header["tools"] = placeholders.TOOLS
    elif kind == REQUEST_HEADER_DELTA and not pinned:
        tools = data.get("tools")
        if isinstance(tools, dict):
            for part in ("added", "changed"):
                if isinstance(tools.get(part), list):
                    tools[part] = [_tool_name(t) for t in tools[part]]
        system = data.get("system")
        if isinstance(system, dict) and "insert" in system:
            system["insert"] = placeholders.SYSTEM
    elif kind == TURN_END:
        for key in TIME_KEYS:
            if key in data:
                data[key] = 0
    if kind == ASSISTANT_MESSAGE:
        for call in _calls(data):
            if isinstance(call.get("id"), str) and call["id"] in ids:
                call["id"] = ids[call["id"]]
    elif kind in (TOOL_CALL, TOOL_RESULT) and isinstance(data.get("id"), str) and data["id"] in ids:
        data["id"] = ids[data["id"]]
    elif kind == REQUEST_MESSAGES and ids:
        data["messages"] = _with_ids(data.get("messages"), ids)


def _with_ids(value: Any, ids: Mapping[str, str]) -> Any:
    """``value`` with every string that is a known tool-call id replaced by its token
    (the ids an ``app: wire`` agent sends back, in whatever shape its API has)."""
    if isinstance(value, str):
        return ids.get(value, value)
    if isinstance(value, dict):
        return {k: _with_ids(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_ids(v, ids) for v in value]
    return value


def full_headers(events: Sequence[Mapping[str, Any]]) -> list[tuple[int, RequestHeader, str]]:
    """``(seq, header, reason)`` of every full ``request/header`` event."""
    return [
        (int(e["seq"]), RequestHeader.from_data(e["data"]["header"]), str(e["data"].get("reason")))
        for e in events
        if e.get("type") == REQUEST_HEADER
        and isinstance(e["data"].get("header"), Mapping)
        and e["data"]["header"].get("tools") != placeholders.TOOLS
        and e["data"]["header"].get("system") != placeholders.SYSTEM
    ]


def scrub_transcript(
    transcript: Sequence[Any],
    events: Sequence[Mapping[str, Any]],
    *,
    workspace: str | None,
    secrets: Sequence[str] | None = None,
) -> list[Any]:
    """Tokenize the tool-call ids (as in ``events``) and the workspace path in a
    transcript, and replace secrets (``secrets`` default to ``secret_values()``)."""
    ids = _ids_in_order(events)
    hidden = all_forms(secret_values() if secrets is None else secrets)

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            value = _redact(ids.get(value, value), hidden)
            return value.replace(workspace, WORKSPACE_TOKEN) if workspace else value
        if isinstance(value, Mapping):
            return {
                _redact(k, hidden) if isinstance(k, str) else k: walk(v) for k, v in value.items()
            }
        if isinstance(value, (list, tuple)):
            return [walk(v) for v in value]
        return value

    return [walk(entry) for entry in transcript]
