"""A live OpenAI-compatible streaming chat-completions adapter (``openai`` SDK).

Configured from arguments or ``HEADERLOCK_BASE_URL``, ``HEADERLOCK_API_KEY``
(else ``OPENAI_API_KEY``), ``HEADERLOCK_MODEL`` and ``HEADERLOCK_TIMEOUT``. The
key is never logged, recorded or put in an error message.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

from headerlock.errors import ConfigError, ModelError
from headerlock.runtime.canonical import sorted_keys
from headerlock.runtime.frozen import thaw
from headerlock.runtime.llm import ModelRequest, StreamItem, TextDelta, ToolCallRequest

ENV_BASE_URL = "HEADERLOCK_BASE_URL"
ENV_API_KEY = "HEADERLOCK_API_KEY"
ENV_OPENAI_API_KEY = "OPENAI_API_KEY"
"""The fallback when ``HEADERLOCK_API_KEY`` is unset."""
ENV_MODEL = "HEADERLOCK_MODEL"
ENV_TIMEOUT = "HEADERLOCK_TIMEOUT"
_SAID: set[str] = set()
"""Which key ``from_env`` used, said once per process."""


def wire_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """The chat-completions ``messages``: system, then the conversation."""
    header = request.header
    messages: list[dict[str, Any]] = []
    if header.system:
        messages.append({"role": "system", "content": header.system})
    for message in request.messages:
        m = thaw(message)
        if m.get("role") == "assistant" and m.get("tool_calls"):
            m["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {
                        "name": c["name"],
                        "arguments": json.dumps(c["arguments"], sort_keys=True),
                    },
                }
                for c in m["tool_calls"]
            ]
        if m.get("role") == "tool":
            m.pop("name", None)
        messages.append(m)
    return messages


def wire_tools(request: ModelRequest) -> list[dict[str, Any]]:
    """The chat-completions ``tools``, in the header's order."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": thaw(t.parameters) or {"type": "object", "properties": {}},
            },
        }
        for t in request.header.tools
    ]


def wire_body(request: ModelRequest, model: str | None = None) -> dict[str, Any]:
    """The request body sent to ``/chat/completions`` (without ``stream``), with
    every key in canonical order (see ``sorted_keys``): the same request gives the
    same bytes whatever order a tool's schema was written in."""
    config = thaw(request.header.config)
    body: dict[str, Any] = {
        "model": model or config.get("model"),
        "messages": wire_messages(request),
    }
    tools = wire_tools(request)
    if tools:
        body["tools"] = tools
    for key in ("temperature", "max_tokens"):
        if config.get(key) is not None:
            body[key] = config[key]
    return dict(sorted_keys(body))


def env_seconds(env: Mapping[str, str], name: str, *, default: float) -> float:
    """The seconds in environment variable ``name`` (``default`` when unset or empty): a
    positive finite number, else a ``ConfigError`` naming the variable and the value."""
    raw = env.get(name, "")
    if not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ConfigError(
            f"{name} must be a positive finite number of seconds, got {raw!r}", key=name
        )
    return value


@dataclass(slots=True)
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: str = ""


class OpenAICompatAdapter:
    """Streams chat completions from an OpenAI-compatible endpoint."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None = None,
        model: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 0,
    ) -> None:
        try:
            import openai
        except ImportError:  # pragma: no cover - depends on the environment
            raise ConfigError(
                "the live adapter needs the openai SDK: pip install 'headerlock[openai]'"
            ) from None
        self.base_url = base_url
        self.model = model
        self.timeout = timeout
        self._secret = api_key or ""
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",
            timeout=timeout,
            max_retries=max_retries,
        )

    def __repr__(self) -> str:
        return f"OpenAICompatAdapter(base_url={self.base_url!r}, model={self.model!r})"

    @classmethod
    def from_env(
        cls, *, model: str | None = None, environ: Mapping[str, str] | None = None
    ) -> OpenAICompatAdapter:
        """Build from ``HEADERLOCK_*`` variables; a missing base URL is a ``ConfigError``.

        The key is ``HEADERLOCK_API_KEY``, else ``OPENAI_API_KEY``; which one (or
        none) is said once per process on stderr.
        """
        env = os.environ if environ is None else environ
        base_url = env.get(ENV_BASE_URL)
        if not base_url:
            raise ConfigError(
                "no model adapter configured: pass adapter=..., or set"
                f" {ENV_BASE_URL} (and {ENV_API_KEY}) for a live OpenAI-compatible endpoint",
                key=ENV_BASE_URL,
            )
        timeout = env_seconds(env, ENV_TIMEOUT, default=60.0)
        source = next((name for name in (ENV_API_KEY, ENV_OPENAI_API_KEY) if env.get(name)), None)
        if source == ENV_API_KEY:
            said = f"API key from {ENV_API_KEY}"
        elif source is not None:
            said = f"API key from {source} ({ENV_API_KEY} is unset)"
        else:
            said = f"no API key ({ENV_API_KEY} and {ENV_OPENAI_API_KEY} are unset)"
        if said not in _SAID:
            _SAID.add(said)
            print(f"headerlock: live model endpoint: {said}", file=sys.stderr, flush=True)
        return cls(
            base_url=base_url,
            api_key=env.get(source) if source else None,
            model=env.get(ENV_MODEL) or model,
            timeout=timeout,
        )

    def _redact(self, text: str) -> str:
        return text.replace(self._secret, "***") if self._secret else text

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        """Stream text deltas, then the completed tool calls."""
        import openai
        from openai.types.chat import ChatCompletion, ChatCompletionChunk

        # Posted as is (not through create(), which reorders the top-level keys):
        # the JSON body goes out with canonical key order at every depth.
        body = sorted_keys({**wire_body(request, self.model), "stream": True})
        partial: dict[int, _PartialCall] = {}
        try:
            stream = await self._client.post(
                "/chat/completions",
                cast_to=ChatCompletion,
                body=body,
                stream=True,
                stream_cls=openai.AsyncStream[ChatCompletionChunk],
            )
            async for chunk in stream:
                for choice in chunk.choices:
                    delta = choice.delta
                    if delta.content:
                        yield TextDelta(delta.content)
                    for call in delta.tool_calls or ():
                        entry = partial.setdefault(call.index, _PartialCall())
                        entry.id = call.id or entry.id
                        if call.function is not None:
                            entry.name += call.function.name or ""
                            entry.arguments += call.function.arguments or ""
        except openai.APITimeoutError:
            raise ModelError(f"the model endpoint timed out after {self.timeout:g}s") from None
        except openai.APIStatusError as error:
            detail = self._redact(_error_detail(error.body))
            raise ModelError(
                f"the model endpoint answered HTTP {error.status_code}: {detail}"
            ) from None
        except openai.APIConnectionError as error:
            raise ModelError(
                f"cannot reach the model endpoint: {self._redact(str(error))}"
            ) from None
        except openai.OpenAIError as error:
            raise ModelError(f"the model endpoint failed: {self._redact(str(error))}") from None
        for index in sorted(partial):
            yield _finish_call(index, partial[index])


def _error_detail(body: object) -> str:
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            return str(error["message"])
        return json.dumps(thaw(body), sort_keys=True)[:300]
    return str(body)[:300] if body else "(no body)"


def _finish_call(index: int, call: _PartialCall) -> ToolCallRequest:
    if not call.name:
        raise ModelError(f"the model sent tool call #{index} without a name")
    try:
        arguments = json.loads(call.arguments) if call.arguments.strip() else {}
    except json.JSONDecodeError as error:
        raise ModelError(
            f'the model sent malformed arguments for tool "{call.name}":'
            f" {error.msg} at position {error.pos}"
        ) from None
    if not isinstance(arguments, dict):
        raise ModelError(
            f'the model sent arguments for tool "{call.name}" that are not a JSON object'
        )
    return ToolCallRequest(call.id or f"call_{index}", call.name, arguments)
