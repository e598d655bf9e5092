"""The SystemPrompt service: owns section order and the model-side tool order."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from headerlock.errors import AssemblyError
from headerlock.runtime.canonical import code_unit_key
from headerlock.runtime.context import Context
from headerlock.runtime.tool_order import order_tools, validate_tool_order
from headerlock.runtime.tools import Dispose, ToolSchema

ASSEMBLE_EVENT: Final = "system-prompt/assemble"
"""Waterfall run on the ordered ``PromptAssembly``; listeners' output is final."""

PERSONA_SECTION: Final = "persona"
PERSONA_ORDER: Final = 0
DEFAULT_SECTION_ORDER: Final = 100


@dataclass(frozen=True, slots=True)
class Section:
    """A named block of system prompt text; sections sort by ``order``, then name."""

    name: str
    text: str
    order: int = DEFAULT_SECTION_ORDER


def section_key(section: Section) -> tuple[int, bytes]:
    """The sort key of sections: order, then code-unit order of the name."""
    return section.order, code_unit_key(section.name)


@dataclass(frozen=True, slots=True)
class PromptAssembly:
    """The assembled prompt: ordered sections and the model-side tool list."""

    sections: tuple[Section, ...] = ()
    tools: tuple[ToolSchema, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "sections", tuple(self.sections))
        object.__setattr__(self, "tools", tuple(self.tools))

    def render(self) -> str:
        """The system prompt text: non-empty sections joined by blank lines."""
        return "\n\n".join(s.text for s in self.sections if s.text)

    def tool_names(self) -> tuple[str, ...]:
        """Names of the tools, in order."""
        return tuple(t.name for t in self.tools)


class ToolProvider(Protocol):
    """Anything that offers tools to assembly (a ``ToolRegistry`` does)."""

    def schemas(self) -> Sequence[ToolSchema]: ...

    def known_names(self) -> Sequence[str]: ...


class SystemPrompt:
    """Assembles sections and tools into a ``PromptAssembly``.

    The ``tool_order`` shape is checked here, at construction; whether its
    names are registered is checked at every ``assemble()``.
    """

    def __init__(
        self,
        ctx: Context,
        *,
        persona: str | None = None,
        tool_order: Sequence[str] | None = None,
    ) -> None:
        self.ctx = ctx
        self.persona = persona
        self.tool_order = validate_tool_order(tool_order)
        self._sections: list[Section] = []
        self._providers: list[ToolProvider] = []
        self._owner: Context | None = None

    def bind(self, ctx: Context) -> SystemPrompt:
        """A view of this service whose additions belong to ``ctx`` (a plugin's
        sections and providers go away when the plugin is unloaded)."""
        view = copy.copy(self)  # shares the section and provider lists
        view._owner = ctx
        return view

    def _owned(self, dispose: Dispose) -> Dispose:
        return self._owner.collect(dispose) if self._owner is not None else dispose

    def add_section(self, section: Section) -> Dispose:
        """Add a section; the returned callable removes it."""
        self._sections.append(section)

        def dispose() -> None:
            if section in self._sections:
                self._sections.remove(section)

        return self._owned(dispose)

    def add_tool_provider(self, provider: ToolProvider) -> Dispose:
        """Collect tools from ``provider`` too, beside the ``tools`` registry."""
        self._providers.append(provider)

        def dispose() -> None:
            if provider in self._providers:
                self._providers.remove(provider)

        return self._owned(dispose)

    def sections(self) -> tuple[Section, ...]:
        """Persona and added sections in their authoritative order."""
        sections = list(self._sections)
        if self.persona:
            sections.append(Section(PERSONA_SECTION, self.persona, PERSONA_ORDER))
        return tuple(sorted(sections, key=section_key))

    def _collect(self) -> tuple[list[ToolSchema], list[str]]:
        providers: list[ToolProvider] = []
        if self.ctx.has("tools"):
            providers.append(self.ctx.tools)
        providers.extend(self._providers)
        tools: list[ToolSchema] = []
        known: list[str] = []
        for provider in providers:
            tools.extend(provider.schemas())
            known.extend(provider.known_names())
        return tools, known

    def ordered_tools(self) -> tuple[ToolSchema, ...]:
        """Collected tools in the authoritative order, validated against the policy."""
        tools, known = self._collect()
        return order_tools(tools, self.tool_order, known_names=known)

    async def assemble(self) -> PromptAssembly:
        """Order sections and tools, then run the ``system-prompt/assemble`` waterfall."""
        assembly = PromptAssembly(self.sections(), self.ordered_tools())
        result = await self.ctx.waterfall(ASSEMBLE_EVENT, assembly)
        if not isinstance(result, PromptAssembly):
            raise AssemblyError(
                f"a {ASSEMBLE_EVENT} listener returned {type(result).__name__},"
                " expected PromptAssembly"
            )
        return result

    async def render(self) -> str:
        """Assemble and render the system prompt text."""
        return (await self.assemble()).render()
