"""Canonical JSON text of plain data: the same content gives the same string."""

from __future__ import annotations

import json
from typing import Any

from headerlock.runtime.frozen import thaw


def canonical_json(value: Any) -> str:
    """Serialize with sorted keys and no insignificant whitespace."""
    return json.dumps(thaw(value), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def code_unit_key(text: str) -> bytes:
    """Sort key giving UTF-16 code-unit order, as JavaScript compares strings."""
    return text.encode("utf-16-be", "surrogatepass")
