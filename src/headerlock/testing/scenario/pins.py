"""Pins and their guards.

A pinned scenario keeps the full header of its header class; every other
scenario of the class records ``<<tools>>`` and ``<<system>>``. A class with no
pin is locked by ``recordings/headers.lock.yaml`` (``header_locks``). The guards:
at most one pin per class; every unpinned scenario's live headers equal the
pinned header after restore (config, system and tools, empty ones included);
unpinned recordings on disk are fixed points of the scrub, pinned ones keep a
full header.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from headerlock.errors import PinError, ToolOrderError
from headerlock.formats.explain import changed_paths
from headerlock.formats.fixture import Scenario
from headerlock.formats.recording import Recording
from headerlock.formats.scrub import full_headers, is_scrubbed
from headerlock.runtime.header import RequestHeader
from headerlock.runtime.tool_order import order_tools


def pins_by_class(scenarios: Sequence[Scenario]) -> dict[str, Scenario]:
    """The pinned scenario of each header class that has one; raises ``PinError`` when a
    class has more than one. A class with none is locked by its header lock instead
    (``header_locks``)."""
    classes: dict[str, list[Scenario]] = {}
    for scenario in scenarios:
        classes.setdefault(scenario.header_class, [])
        if scenario.pin:
            classes[scenario.header_class].append(scenario)
    problems = []
    for name in sorted(classes):
        pinned = classes[name]
        if len(pinned) > 1:
            problems.append(
                f"header class {name!r} has {len(pinned)} pinned scenarios"
                f" ({', '.join(s.name for s in pinned)}); keep exactly one"
            )
    if problems:
        raise PinError(problems)
    return {name: pinned[0] for name, pinned in classes.items() if pinned}


def pinned_header(pin: Scenario, events: Sequence[Mapping[str, Any]]) -> RequestHeader:
    """The class header a pinned scenario's run shows (its first full header)."""
    headers = full_headers(events)
    if not headers:
        raise PinError(
            [f"pinned scenario {pin.name!r} records no request header to pin (does its turn fail?)"]
        )
    return headers[0][1]


def restore_header(pin: RequestHeader, tool_order: Sequence[str] | None) -> RequestHeader:
    """The class header as a member of the class sends it: what ``<<system>>`` and
    ``<<tools>>`` stand for. The pin's config and system prompt, and the pin's tools
    in the member's own ``tool_order`` (raises ``ToolOrderError`` when it does not fit)."""
    return RequestHeader(pin.config, pin.system, order_tools(pin.tools, tool_order))


def check_against_pin(
    scenario: Scenario, events: Sequence[Mapping[str, Any]], pin: Scenario, header: RequestHeader
) -> list[str]:
    """Problems where ``scenario``'s live headers differ from the pin after restore.

    ``events`` are the live run's events (not scrubbed). Restoring the pin's
    class header for this scenario gives the pin's config (every key), system
    prompt and tools in the scenario's own ``tool_order``; each full header of
    the run must equal it, an empty system prompt or tool list included. A
    ``fallback`` header (a listener reordered tools) must hold the pin's tools
    in any order.
    """
    problems = []
    where = f"the pinned header of class {scenario.header_class!r} ({pin.name}) after restore"
    try:
        restored = restore_header(header, scenario.tool_order)
    except ToolOrderError as error:
        return [f"{scenario.name}: cannot restore {where}: {error}"]
    for seq, live, reason in full_headers(events):
        expected = restored
        if reason == "fallback":
            expected = RequestHeader(expected.config, expected.system, _by_name(expected.tools))
            live = RequestHeader(live.config, live.system, _by_name(live.tools))
        if live != expected:
            paths = changed_paths(expected.to_data(), live.to_data())
            problems.append(
                f"{scenario.name}: request/header at seq {seq} differs from {where}"
                " (pin -> this run):\n    " + "\n    ".join(paths)
            )
    return problems


def _by_name(tools: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(sorted(tools, key=lambda t: t.name))


def check_fixed_point(recording: Recording, path: Path) -> str | None:
    """A problem unless unpinned recordings are scrub fixed points and pinned ones keep
    a full header (an empty system prompt and tool list are a full header too)."""
    if recording.pinned and not full_headers(recording.events):
        return (
            f"{path.as_posix()}: pinned recording keeps no full header (only placeholders or"
            " none); a pin must hold the class header"
        )
    if not recording.pinned and not is_scrubbed(recording.events):
        return f"{path.as_posix()}: unpinned recording is not a fixed point of the scrub"
    return None
