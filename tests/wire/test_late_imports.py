"""A lock patches a client library imported in its block, and imports none itself."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
from headerlock.testing.wire.lock import lock
from headerlock.testing.wire.clients import aiohttp_client, httpx_client, urllib3_client

with lock(None, mode="record"):
    assert not {"aiohttp", "httpx", "urllib3"} & set(sys.modules), "imported by the lock"
    import aiohttp, requests
    assert aiohttp_client.patched_classes() == [aiohttp.ClientSession]
    assert urllib3_client.patched_classes(), "urllib3, imported by requests, is patched"
    assert aiohttp.__spec__.loader is aiohttp.__loader__
    assert type(aiohttp.__loader__).__module__.startswith("_frozen_importlib")
assert not aiohttp_client.patched_classes() and not urllib3_client.patched_classes()
assert not [f for f in sys.meta_path if type(f).__name__ == "LateImports"]
with lock(None, mode="record"):  # imported now: patched on entry
    assert aiohttp_client.patched_classes() == [aiohttp.ClientSession]
print("ok")
"""


def test_a_library_imported_in_the_block_is_patched_and_none_is_imported_before() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
