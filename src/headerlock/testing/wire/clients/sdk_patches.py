"""The SDK methods the model APIs ask a lock to patch (``ModelApi.client_patches``).

An API whose SDK sends through one of the client modules' libraries may need more of
that SDK than its HTTP requests (the secrets a request is signed with): it declares a
``ClientPatch``, and this module, one client module like the others, patches each while
a lock is open and restores it after. An SDK not imported yet is patched when it is
(``late``), one not installed is skipped. No provider is named here: the registry says.
"""

from __future__ import annotations

from typing import Any, Final

from headerlock.testing.wire import apis
from headerlock.testing.wire.apis.base import ClientPatch
from headerlock.testing.wire.clients.libraries import Patches, find_library


def _declared() -> tuple[ClientPatch, ...]:
    """Every registered API's patches, in the registry's order."""
    return tuple(patch for api in apis.REGISTERED for patch in api.client_patches)


LIBRARIES: Final = tuple(dict.fromkeys(patch.library for patch in _declared()))
"""The SDKs whose requests a lock sees through another client's library."""
_patches = Patches()
_found: dict[str, Any] = {}
_absent: dict[str, tuple[str, ...]] = {}


def install() -> None:
    """Patch every declared method whose SDK module is installed (and imported)."""
    for patch in _declared():
        module = find_library(patch.module, _found, _absent)
        if module is not None:
            _patches.patch(getattr(module, patch.owner), patch.method, patch.wrap)


def uninstall() -> None:
    """Restore every patched method."""
    _patches.restore()


def patched_classes() -> list[type[Any]]:
    """The classes patched right now (for tests and diagnostics)."""
    return _patches.classes()
