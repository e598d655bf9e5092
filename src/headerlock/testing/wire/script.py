"""A scripted model that answers in the wire format of each model API.

Replies use the fixture ``model:`` format (``{"text": ...}`` or
``{"tool_calls": [{"name", "arguments"}]}``); each is made a ``Turn`` (its
tool call ids, token counts, model and stream flag) and rendered by its API's
module (``apis``), as server-sent events when the request streams. Every id
and timestamp derives from the reply's index, so the same script gives the
same bytes in every run.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from headerlock.errors import ConfigError, ScriptExhaustedError
from headerlock.runtime.adapters.scripted import Reply, ReplySpec, parse_reply, reply_to_data
from headerlock.runtime.canonical import canonical_json
from headerlock.runtime.frozen import thaw
from headerlock.testing.wire.apis import model_api
from headerlock.testing.wire.apis.base import (
    JSON,
    SSE,
    Call,
    ModelApi,
    Rendered,
    Turn,
    dumps,
    script_id,
)
from headerlock.testing.wire.origins import Origin
from headerlock.testing.wire.script_match import RaceCheck, ReplyMatch, chosen

__all__ = ["JSON", "SSE", "Rendered", "WireScript", "render_reply"]


def _turn(spec: ModelApi, path: str, request: Mapping[str, Any], reply: Reply, index: int) -> Turn:
    calls = []
    for k, call in enumerate(reply.tool_calls):
        arguments = thaw(call.arguments)
        try:
            text = dumps(arguments, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ConfigError(
                f"script[{index}].tool_calls[{k}].arguments: not JSON ({exc})", key="arguments"
            ) from exc
        call_id = call.id or script_id(spec.call_id_prefix, index, k)
        calls.append(Call(call.name, text, arguments, call_id))
    input_tokens = max(1, len(canonical_json(request)) // 4)
    model = spec.model_of(path, request)
    stream = spec.streams(path, request)
    return Turn(request, reply, index, tuple(calls), input_tokens, model, stream, path)


def render_reply(
    api: ModelApi | str,
    request: Mapping[str, Any],
    reply: ReplySpec,
    *,
    index: int,
    path: str = "",
) -> Rendered:
    """The HTTP answer ``(status, content_type, body)`` of scripted reply ``index``.

    ``api`` is a registered API (or its name: ``apis.NAMES``); ``request`` is the parsed
    request body and ``path`` the request's path (its model is echoed; the
    request's stream flag, in the body or the path, selects server-sent
    events). A reply with ``error`` fails the stream after its text, or answers
    HTTP 400 (which the SDKs do not retry) when the request does not stream.
    Raises ``ConfigError`` naming ``script[index]`` for a malformed reply.
    """
    found = model_api(api) if isinstance(api, str) else api
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise ConfigError(f"a reply index must be an int >= 0, got {index!r}", key="index")
    if not isinstance(request, Mapping):
        raise ConfigError(f"script[{index}]: the request body is not a JSON object")
    parsed = parse_reply(reply, where=f"script[{index}]")
    return found.render(_turn(found, path, request, parsed, index))


class WireScript:
    """A script's replies for the requests of one lock.

    A request takes the first unused reply whose ``match:`` it satisfies, else the next
    unused reply without one (``script_match``). Replies are checked when the script is
    built; ``answer`` is thread-safe and raises ``ScriptExhaustedError`` once no reply
    is left for a request; ``races`` tells at exit whether concurrent requests raced
    for positional replies that differ.
    """

    served: list[tuple[Mapping[str, Any], int]] | None
    """Each answered request and the index of its reply, in answer order, once a caller
    sets a list (``app: wire`` does, to log the reply each request got)."""

    def __init__(self, replies: Sequence[ReplySpec]) -> None:
        if isinstance(replies, (str, Mapping)) or not isinstance(replies, Sequence):
            raise ConfigError(
                f"script: expected a list of replies, got {type(replies).__name__}", key="script"
            )
        self.replies = tuple(parse_reply(r, where=f"script[{i}]") for i, r in enumerate(replies))
        self._matches = [(reply, ReplyMatch.of(reply.match)) for reply in self.replies]
        self._taken = [False] * len(self.replies)
        self.served = None
        self._asked = 0
        self._lock = threading.Lock()
        self.races = RaceCheck()

    def answer(
        self,
        api: ModelApi | str,
        request: Mapping[str, Any],
        *,
        path: str = "",
        origin: Origin | None = None,
    ) -> Rendered:
        """Render the reply ``request`` (sent to ``path`` by ``origin``) takes, in the
        format of its api (or of the api of that name)."""
        api = model_api(api) if isinstance(api, str) else api
        with self._lock:
            self._asked += 1
            index, positional = chosen(self._matches, self._taken, api, request)
            if index is None:
                raise ScriptExhaustedError(
                    api=api.name, request=self._asked, replies=len(self.replies)
                )
            self._taken[index] = True
            if self.served is not None:
                self.served.append((request, index))
            if positional and origin is not None:
                shown = api.last_user_text(request)
                content = _seen(self.replies[index])
                self.races.took(self._asked, index, content, origin, shown)
        return render_reply(api, request, self.replies[index], index=index, path=path)


def _seen(reply: Reply) -> dict[str, Any]:
    """What the race check compares of a reply: all but its tool call ids, which every
    recording numbers in order of appearance (so which request got which id is moot)."""
    data = reply_to_data(reply)
    for call in data.get("tool_calls", ()):
        call.pop("id", None)
    return data
