"""Which scripted reply answers which request: ``match:``, and the race check.

A scripted reply may say which request it answers::

    {"text": "Paris", "match": {"user": "capital of France"}}   # in the last user message
    {"text": "done", "match": {"tool_result": "search"}}       # carries search's result last

A request takes the first unused reply whose ``match`` it satisfies, else the next unused
reply without one (positional). Positional replies go by arrival, so when requests that
run at the same time (``origins``) take positional replies that differ, which request
got which reply was a race: the lock raises ``ScriptAmbiguityError`` naming them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from headerlock.errors import ConfigError, ScriptAmbiguityError
from headerlock.runtime.canonical import canonical_json
from headerlock.testing.wire.apis import model_api
from headerlock.testing.wire.origins import Key, Origin, alive_unrelated

MATCH_KEYS: Final = ("user", "tool_result")


@dataclass(frozen=True, slots=True)
class ReplyMatch:
    """What a request must carry to take a reply (each given condition must hold)."""

    user: str | None = None
    tool_result: str | None = None

    def holds(self, api_name: str, request: Mapping[str, Any]) -> bool:
        """Whether ``request`` (a body of api ``api_name``) satisfies every condition."""
        found = model_api(api_name)
        if self.user is not None:
            text = found.last_user_text(request)
            if text is None or self.user not in text:
                return False
        return self.tool_result is None or found.last_tool_result(request) == self.tool_result


def split_match(reply: Any, where: str) -> tuple[Any, ReplyMatch | None]:
    """``reply`` without its ``match`` key, and the match it gave (checked)."""
    if not isinstance(reply, Mapping) or "match" not in reply:
        return reply, None
    spec = reply["match"]
    rest = {k: v for k, v in reply.items() if k != "match"}
    if not isinstance(spec, Mapping) or not spec:
        raise ConfigError(
            f"{where}.match: expected a mapping with {' and/or '.join(MATCH_KEYS)}", key="match"
        )
    unknown = sorted(k for k in spec if k not in MATCH_KEYS)
    if unknown:
        raise ConfigError(
            f"{where}.match.{unknown[0]}: unknown key; expected {', '.join(MATCH_KEYS)}",
            key="match",
        )
    for name, value in spec.items():
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{where}.match.{name}: expected a non-empty string", key="match")
    return rest, ReplyMatch(user=spec.get("user"), tool_result=spec.get("tool_result"))


@dataclass(frozen=True, slots=True)
class _Taken:
    request: int
    reply: int
    content: str
    origin: Key
    concurrent: frozenset[Key]


class RaceCheck:
    """Remembers who took each positional reply, and whether a race decided it."""

    def __init__(self) -> None:
        self._taken: list[_Taken] = []

    def took(self, request: int, reply: int, content: Any, origin: Origin | None) -> None:
        """Request ``request`` (1-based, by arrival) took positional reply ``reply``."""
        if origin is None:
            return
        concurrent = alive_unrelated(origin)
        self._taken.append(_Taken(request, reply, canonical_json(content), origin.path, concurrent))

    def check(self) -> None:
        """Raise ``ScriptAmbiguityError`` when concurrent requests took differing replies."""
        pairs: list[tuple[_Taken, _Taken]] = []
        for i, first in enumerate(self._taken):
            for later in self._taken[i + 1 :]:
                if later.content != first.content and _raced(first, later):
                    pairs.append((first, later))
        if not pairs:
            return
        first, later = pairs[0]
        requests = sorted({n for pair in pairs for t in pair for n in (t.request,)})
        raise ScriptAmbiguityError(
            f"script: requests {first.request} and {later.request} ran at the same time and"
            f" took positional replies {first.reply + 1} and {later.reply + 1}, which differ:"
            " which request got which reply was a race. Give those replies a match:"
            ' (e.g. {"text": ..., "match": {"user": "<text of its prompt>"}} or'
            ' {"match": {"tool_result": "<tool name>"}}) so each answers its own request',
            requests=requests,
        )


def _raced(first: _Taken, later: _Taken) -> bool:
    """Whether ``later``'s code (or an ancestor of it) ran beside ``first``'s."""
    path = later.origin
    return any(path[:n] in first.concurrent for n in range(len(path) + 1))


def chosen(
    replies: Sequence[tuple[Any, ReplyMatch | None]],
    used: Sequence[bool],
    api_name: str,
    request: Mapping[str, Any],
) -> tuple[int | None, bool]:
    """The index of the reply ``request`` takes and whether it is positional (``None``:
    none left)."""
    for index, (_, match) in enumerate(replies):
        if not used[index] and match is not None and match.holds(api_name, request):
            return index, False
    for index, (_, match) in enumerate(replies):
        if not used[index] and match is None:
            return index, True
    return None, True
