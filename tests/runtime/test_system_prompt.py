"""SystemPrompt: the RFC's system-prompt test list."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence

import pytest
from hypothesis import given, settings, strategies as st

from headerlock.agent import (
    TOOL_ORDER_REST,
    Context,
    PromptAssembly,
    Section,
    SystemPrompt,
    ToolRegistry,
    ToolSchema,
    order_tools,
)
from headerlock.errors import AssemblyError, ToolOrderError
from headerlock.strategies import load_schedules, registration_orders, tool_orders, tool_sets
from headerlock.testing.order.schedules import LoadSchedule

NAMES = ["todo_write", "bash", "read", "edit", "write"]


def make(tool_order: Sequence[str] | None = None, persona: str | None = None) -> SystemPrompt:
    ctx = Context()
    ctx.provide("tools", ToolRegistry())
    prompt = SystemPrompt(ctx, persona=persona, tool_order=tool_order)
    ctx.provide("system_prompt", prompt)
    return prompt


def register(prompt: SystemPrompt, names: Sequence[str]) -> None:
    for name in names:
        prompt.ctx.tools.register(ToolSchema(name, f"the {name} tool"))


def assemble(prompt: SystemPrompt) -> PromptAssembly:
    return asyncio.run(prompt.assemble())


def test_lexicographic_default() -> None:
    prompt = make()
    register(prompt, NAMES)
    assert assemble(prompt).tool_names() == ("bash", "edit", "read", "todo_write", "write")


def test_listed_and_rest_positions() -> None:
    prompt = make(["todo_write", TOOL_ORDER_REST, "bash"])
    register(prompt, ["bash", "echo_b", "todo_write", "echo_a"])
    assert assemble(prompt).tool_names() == ("todo_write", "echo_a", "echo_b", "bash")


def test_shape_errors_fail_at_construction() -> None:
    with pytest.raises(ToolOrderError, match="rest entry"):
        make([])
    with pytest.raises(ToolOrderError, match='lists "bash" more than once'):
        make(["bash", TOOL_ORDER_REST, "bash"])


def test_unknown_names_fail_at_every_assemble_not_at_construction() -> None:
    prompt = make(["ghost", TOOL_ORDER_REST])  # constructing succeeds: tools come later
    register(prompt, ["bash"])
    for _ in range(2):
        with pytest.raises(ToolOrderError, match='unregistered tool "ghost"; known tools: bash'):
            assemble(prompt)
    register(prompt, ["ghost"])  # registration can change at any time
    assert assemble(prompt).tool_names() == ("ghost", "bash")


def test_hidden_tools_are_known_but_not_offered() -> None:
    prompt = make(["hidden", TOOL_ORDER_REST])
    register(prompt, ["b", "a"])
    prompt.ctx.tools.register(ToolSchema("hidden"), hidden=True)
    assert assemble(prompt).tool_names() == ("a", "b")


def test_reserved_name_rejected_even_without_tool_order() -> None:
    prompt = make()
    register(prompt, ["a", TOOL_ORDER_REST])
    with pytest.raises(ToolOrderError, match='reserved tool name "<unlisted-tools>"'):
        assemble(prompt)


class Provider:
    def __init__(self, tools: Sequence[ToolSchema]) -> None:
        self.tools = list(tools)

    def schemas(self) -> Sequence[ToolSchema]:
        return self.tools

    def known_names(self) -> Sequence[str]:
        return [t.name for t in self.tools]


def test_shared_names_from_two_providers_are_kept_and_deterministic() -> None:
    first = ToolSchema("read", "provider one")
    second = ToolSchema("read", "provider two")
    results = set()
    for providers in ([first], [second]), ([second], [first]):
        prompt = make(["read", TOOL_ORDER_REST])
        register(prompt, ["bash"])
        for tools in providers:
            prompt.add_tool_provider(Provider(tools))
        results.add(assemble(prompt).tools)
    assert results == {(first, second, ToolSchema("bash", "the bash tool"))}


def test_waterfall_sees_the_authoritative_list_and_is_not_resorted() -> None:
    prompt = make(["todo_write", TOOL_ORDER_REST])
    register(prompt, ["bash", "todo_write", "read"])
    seen: list[tuple[str, ...]] = []

    def listener(assembly: PromptAssembly) -> PromptAssembly:
        seen.append(assembly.tool_names())
        extra = ToolSchema("aaa_added_last")
        return dataclasses.replace(assembly, tools=(*assembly.tools, extra))

    prompt.ctx.on("system-prompt/assemble", listener)
    assert assemble(prompt).tool_names() == ("todo_write", "bash", "read", "aaa_added_last")
    assert seen == [("todo_write", "bash", "read")]


def test_waterfall_result_must_be_an_assembly() -> None:
    prompt = make()
    prompt.ctx.on("system-prompt/assemble", lambda assembly: list(assembly.tools))
    with pytest.raises(AssemblyError, match="returned list, expected PromptAssembly"):
        assemble(prompt)


def test_sections_sorted_by_order_then_name_and_rendered() -> None:
    prompt = make(persona="You are terse.")
    prompt.add_section(Section("zeta", "Z rules."))
    prompt.add_section(Section("alpha", "A rules."))
    dispose = prompt.add_section(Section("first", "First.", order=-1))
    assembly = assemble(prompt)
    assert [s.name for s in assembly.sections] == ["first", "persona", "alpha", "zeta"]
    assert assembly.render() == "First.\n\nYou are terse.\n\nA rules.\n\nZ rules."
    dispose()
    assert asyncio.run(prompt.render()) == "You are terse.\n\nA rules.\n\nZ rules."


def _plugin(name: str, delay: float, yields: int) -> object:
    async def plugin(ctx: Context) -> None:
        for _ in range(yields):
            await asyncio.sleep(0)
        await asyncio.sleep(delay)
        ctx.tools.register(ToolSchema(name, f"the {name} tool"))

    return plugin


@settings(max_examples=30)
@given(st.data())
def test_concurrent_loading_with_any_schedule_gives_the_same_assembly(data: st.DataObject) -> None:
    order = data.draw(registration_orders(NAMES))
    schedule: LoadSchedule = data.draw(load_schedules(order))

    async def run() -> tuple[tuple[str, ...], tuple[str, ...]]:
        prompt = make(["write", TOOL_ORDER_REST, "bash"])
        plugins = [
            _plugin(n, d, y)
            for n, d, y in zip(order, schedule.delays, schedule.yields, strict=True)
        ]
        await prompt.ctx.load_plugins(plugins)  # type: ignore[arg-type]
        return prompt.ctx.tools.known_names(), (await prompt.assemble()).tool_names()

    registered, assembled = asyncio.run(run())
    assert sorted(registered) == sorted(NAMES)
    assert assembled == ("write", "edit", "read", "todo_write", "bash")


@settings(max_examples=40)
@given(tool_sets(shared_names=True), st.data())
def test_assemble_equals_order_tools_for_any_set_policy_and_registration_order(
    tools: list[ToolSchema], data: st.DataObject
) -> None:
    policy = data.draw(st.none() | tool_orders([t.name for t in tools]))
    expected = order_tools(tools, policy)
    for order in (tools, data.draw(st.permutations(tools))):
        prompt = make(policy)
        firsts: list[ToolSchema] = []
        twins: list[ToolSchema] = []
        for tool in order:  # a registry holds one tool per name; twins come from a provider
            (twins if any(t.name == tool.name for t in firsts) else firsts).append(tool)
        for tool in firsts:
            prompt.ctx.tools.register(tool)
        prompt.add_tool_provider(Provider(twins))
        assert assemble(prompt).tools == expected


def test_a_plugins_sections_and_providers_go_away_with_it() -> None:
    prompt = make(persona="Base.")

    def plugin(ctx: Context) -> None:
        service: SystemPrompt = ctx.get("system_prompt")
        service.add_section(Section("extra", "Extra rules."))
        service.add_tool_provider(Provider([ToolSchema("provided")]))

    child = asyncio.run(prompt.ctx.plugin(plugin))
    assembly = assemble(prompt)
    assert assembly.render() == "Base.\n\nExtra rules."
    assert assembly.tool_names() == ("provided",)
    child.dispose()
    assembly = assemble(prompt)
    assert assembly.render() == "Base."
    assert assembly.tool_names() == ()
