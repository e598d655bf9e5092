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
from typing import Any

from headerlock.errors import ScriptAmbiguityError
from headerlock.runtime.canonical import canonical_json
from headerlock.testing.wire.apis import ModelApi
from headerlock.testing.wire.origins import Key, Origin, alive_unrelated


@dataclass(frozen=True, slots=True)
class ReplyMatch:
    """What a request must carry to take a reply (each given condition must hold)."""

    user: str | None = None
    tool_result: str | None = None

    @classmethod
    def of(cls, spec: Mapping[str, str] | None) -> ReplyMatch | None:
        """The match of a parsed reply's ``match`` (``parse_match`` checked it)."""
        if spec is None:
            return None
        return cls(user=spec.get("user"), tool_result=spec.get("tool_result"))

    def holds(self, found: ModelApi, request: Mapping[str, Any]) -> bool:
        """Whether ``request`` (a body of api ``found``) satisfies every condition."""
        if self.user is not None:
            text = found.last_user_text(request)
            if text is None or self.user not in text:
                return False
        return self.tool_result is None or found.last_tool_result(request) == self.tool_result


@dataclass(frozen=True, slots=True)
class _Taken:
    request: int
    reply: int
    content: str
    origin: Key
    concurrent: frozenset[Key]
    shown: str | None


class RaceCheck:
    """Remembers who took each positional reply, and whether a race decided it."""

    def __init__(self) -> None:
        self._taken: list[_Taken] = []

    def took(
        self,
        request: int,
        reply: int,
        content: Any,
        origin: Origin | None,
        shown: str | None = None,
    ) -> None:
        """Request ``request`` (1-based, by arrival; ``shown``: its last user message)
        took positional reply ``reply`` (``content``: what the agent sees of it)."""
        if origin is None:
            return
        concurrent = alive_unrelated(origin)
        text = canonical_json(content)
        self._taken.append(_Taken(request, reply, text, origin.path, concurrent, shown))

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
        shown = ""
        if first.shown is not None and later.shown is not None:
            shown = f" (last user messages {_short(first.shown)} and {_short(later.shown)})"
        raise ScriptAmbiguityError(
            f"script: requests {first.request} and {later.request} ran at the same time{shown}"
            f" and took positional replies {first.reply + 1} and {later.reply + 1}, which differ:"
            " which request got which reply was a race. Give those replies a match:"
            ' (e.g. {"text": ..., "match": {"user": "<text of its prompt>"}} or'
            ' {"match": {"tool_result": "<tool name>"}}) so each answers its own request',
            requests=requests,
        )


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _raced(first: _Taken, later: _Taken) -> bool:
    """Whether ``later``'s code (or an ancestor of it) ran beside ``first``'s."""
    path = later.origin
    return any(path[:n] in first.concurrent for n in range(len(path) + 1))


def chosen(
    replies: Sequence[tuple[Any, ReplyMatch | None]],
    used: Sequence[bool],
    api: ModelApi,
    request: Mapping[str, Any],
) -> tuple[int | None, bool]:
    """The index of the reply ``request`` takes and whether it is positional (``None``:
    none left)."""
    for index, (_, match) in enumerate(replies):
        if not used[index] and match is not None and match.holds(api, request):
            return index, False
    for index, (_, match) in enumerate(replies):
        if not used[index] and match is None:
            return index, True
    return None, True
