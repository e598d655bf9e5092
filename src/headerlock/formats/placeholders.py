"""The placeholders recordings write instead of what they keep out, for scenario and
wire recordings alike: the class header's tools and system prompt (unpinned
recordings), secrets, and volatile ids (numbered in order of first use)."""

from __future__ import annotations

from typing import Final

TOOLS: Final = "<<tools>>"
SYSTEM: Final = "<<system>>"
SECRET: Final = "<<secret>>"


def id_token(number: int) -> str:
    """The placeholder of the ``number``-th distinct id of a recording (1-based)."""
    return f"<<id:{number}>>"


IGNORED: Final = "<<ignored>>"
"""A request value an ignore rule (``ignore=["config.seed"]``) keeps out: never compared."""
FINGERPRINT: Final = "<<fingerprint>>"
"""A live response's ``system_fingerprint`` (it changes with the provider's deployment)."""
