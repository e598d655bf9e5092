"""Demo ``system-prompt/assemble`` listeners (expert plugins that change the tool list)."""

from __future__ import annotations

import dataclasses

from headerlock.runtime.context import Context
from headerlock.runtime.system_prompt import ASSEMBLE_EVENT, PromptAssembly


def reverse_tools_after_first_step(ctx: Context) -> None:
    """From the second assembly on, reverse the tool list (a pure reorder: a fallback header)."""
    assemblies = 0

    def listener(assembly: PromptAssembly) -> PromptAssembly:
        nonlocal assemblies
        assemblies += 1
        if assemblies == 1:
            return assembly
        return dataclasses.replace(assembly, tools=tuple(reversed(assembly.tools)))

    ctx.on(ASSEMBLE_EVENT, listener)
