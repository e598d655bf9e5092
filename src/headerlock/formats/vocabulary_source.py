"""Where the format layer's ``WireVocabulary`` comes from.

The package root installs the registry of model APIs here (``provide``) and imports
nothing else for it, so ``import headerlock`` stays light; ``wire_vocabulary.vocabulary``
calls the source on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

SOURCES: list[Callable[[], Any]] = []
"""The installed source (at most one): it returns a ``wire_vocabulary.WireVocabulary``."""


def provide(source: Callable[[], Any]) -> None:
    """Install the source of the vocabulary (the package root does, once)."""
    SOURCES[:] = [source]
