"""How a request's header differs from the one its recording locked, said once.

A replay finds each request's recorded exchange by content (the header's placeholders
make that header-independent), then compares the header ids. A different id is one
``HeaderChange`` however many requests carry it: the segments that changed, each with
before -> after (``system`` as a unified diff of its text, ``tools`` per tool: added,
removed, reordered, or the schema paths that changed, ``config.<key>``, ``http.<name>``,
``query.<name>``). ``reordered`` says the tools only moved (a verdict such as an
order flake plugs in there).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from headerlock.formats.explain import changes, unified
from headerlock.testing.wire.apis import ModelApi, model_api
from headerlock.testing.wire.compare import HeaderChange, same, tool_differences

MAX_LINES: Final = 40


def explain_header(
    old_id: str | None,
    old: Mapping[str, Any] | None,
    new_id: str,
    new: Mapping[str, Any],
    *,
    model: ModelApi | None = None,
) -> HeaderChange:
    """How ``new`` differs from the locked header ``old`` (``None``: not in the lock);
    ``model`` is ``new``'s API when the caller holds it (else found by its name)."""
    if old is None:
        why = (
            f"the recorded header {old_id} is not in the header lock (deleted or edited?)"
            if old_id is not None
            else "the recording keeps no header id"
        )
        return HeaderChange(old_id, new_id, ("header",), (why,))
    api = str(new.get("api"))
    segments: list[str] = []
    lines: list[str] = []
    if old.get("api") != new.get("api"):
        segments.append("api")
        lines.append(f"api: {old.get('api')} -> {new.get('api')}")
    for segment in ("config", "http", "query"):
        a, b = old.get(segment, {}), new.get(segment, {})
        if not same(a, b):
            segments.append(segment)
            lines += changes(a, b, segment)
    if not same(old.get("system"), new.get("system")):
        segments.append("system")
        model = model_api(api) if model is None else model
        lines += _system(model, old.get("system"), new.get("system"))
    reordered = False
    if not same(old.get("tools"), new.get("tools")):
        segments.append("tools")
        model = model_api(api) if model is None else model
        found = tool_differences(0, model, old.get("tools"), new.get("tools"))
        reordered = all(d.reordered for d in found)
        lines += [f"tools: {difference.detail}" for difference in found]
    if len(lines) > MAX_LINES:
        lines = [*lines[:MAX_LINES], f"... and {len(lines) - MAX_LINES} more lines"]
    return HeaderChange(old_id, new_id, tuple(segments), tuple(lines), reordered)


def _system(model: ModelApi, old: Any, new: Any) -> list[str]:
    if old is None or new is None:
        had, has = ("none" if v is None else "one" for v in (old, new))
        return [f"system: recorded {had}, sent {has}"]
    text = model.system_text
    a, b = text(old), text(new)
    if a == b:
        return changes(old, new, "system")
    return ["system:", *(f"  {line}" for line in unified(a, b, names=("recorded", "sent")))]
