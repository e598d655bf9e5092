"""AWS's binary event-stream framing (``application/vnd.amazon.eventstream``), as text.

Bedrock streams (``ConverseStream``, ``InvokeModelWithResponseStream``) answer in
frames: a prelude (total length, headers length, CRC32), headers, a payload and a
CRC32 of the whole frame. A recording keeps each frame as one decoded event, so it
reads like a server-sent stream: the ``:event-type`` header as the event name and
the JSON payload as its data (an ``exception`` frame is named
``exception:<:exception-type>``). The padding AWS adds to hide payload lengths
(the payload's ``p`` field) is dropped, so a re-record does not churn. A ``chunk``
event (``InvokeModelWithResponseStream``) whose ``bytes`` hold a JSON object, an
Anthropic event, keeps that object as its data. ``frame`` builds the bytes again
on replay, which botocore's parser checks CRC by CRC. A stream that is not all such
frames is not decoded (``decode`` returns ``None``: the body is kept as bytes).
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
from typing import Any, Final

MEDIA_TYPE: Final = "application/vnd.amazon.eventstream"
PADDING_KEY: Final = "p"
"""The random padding field of a Bedrock stream event's payload."""
CHUNK: Final = "chunk"
"""The event of ``InvokeModelWithResponseStream``: ``{"bytes": base64 of the model's event}``."""
EXCEPTION: Final = "exception:"
_STRING: Final = 7
_PRELUDE: Final = struct.Struct(">II")

Decoded = tuple[str, Any]
"""One frame as a recording keeps it: ``(event name, JSON data)``."""


def _crc(data: bytes, start: int = 0) -> int:
    return binascii.crc32(data, start) & 0xFFFFFFFF


def _headers(raw: bytes) -> dict[str, str] | None:
    """String headers of a frame; ``None`` when any header is of another type."""
    found: dict[str, str] = {}
    at = 0
    while at < len(raw):
        size = raw[at]
        name = raw[at + 1 : at + 1 + size].decode("utf-8", errors="strict")
        at += 1 + size
        if at >= len(raw) or raw[at] != _STRING:
            return None
        (length,) = struct.unpack_from(">H", raw, at + 1)
        found[name] = raw[at + 3 : at + 3 + length].decode("utf-8", errors="strict")
        at += 3 + length
    return found


def _payload(event: str, payload: Any) -> Any:
    if isinstance(payload, dict):
        payload = {k: v for k, v in payload.items() if k != PADDING_KEY}
    if event != CHUNK:
        return payload
    if not isinstance(payload, dict) or set(payload) != {"bytes"}:
        return None
    try:
        inner = json.loads(base64.b64decode(str(payload["bytes"]), validate=True))
    except ValueError:
        return None
    return inner if isinstance(inner, dict) else None


def decode(body: bytes) -> tuple[Decoded, ...] | None:
    """The frames of ``body`` as events, or ``None`` when it is not all well-formed
    event or exception frames with string headers and a JSON payload."""
    events: list[Decoded] = []
    at = 0
    try:
        while at < len(body):
            total, headers_length = _PRELUDE.unpack_from(body, at)
            frame = body[at : at + total]
            if total < 16 or len(frame) != total:
                return None
            if _crc(frame[:8]) != struct.unpack_from(">I", frame, 8)[0]:
                return None
            if _crc(frame[:-4]) != struct.unpack_from(">I", frame, total - 4)[0]:
                return None
            headers = _headers(frame[12 : 12 + headers_length])
            if headers is None:
                return None
            kind = headers.get(":message-type")
            if kind == "event":
                name = headers.get(":event-type")
            elif kind == "exception":
                name = EXCEPTION + headers.get(":exception-type", "")
            else:
                return None
            if not name:
                return None
            payload = _payload(name, json.loads(frame[12 + headers_length : -4] or b"{}"))
            if payload is None:
                return None
            events.append((name, payload))
            at += total
    except (struct.error, ValueError, IndexError):
        return None
    return tuple(events)


def _header(name: str, value: str) -> bytes:
    key, text = name.encode(), value.encode()
    return bytes([len(key)]) + key + bytes([_STRING]) + struct.pack(">H", len(text)) + text


def frame(event: str, data: Any) -> bytes:
    """The bytes of one frame: event ``event`` (``exception:<type>`` an exception) with
    ``data`` as its JSON payload (a ``chunk``'s data is wrapped back into ``bytes``)."""
    return frame_text(event, json.dumps(data, ensure_ascii=False, separators=(",", ":")))


def frame_text(event: str, payload_text: str) -> bytes:
    """``frame`` of the JSON text ``payload_text`` as it stands."""
    if event.startswith(EXCEPTION):
        kind = [(":exception-type", event[len(EXCEPTION) :]), (":message-type", "exception")]
    else:
        kind = [(":event-type", event), (":message-type", "event")]
    payload = payload_text.encode()
    if event == CHUNK:
        wrapped = base64.b64encode(payload).decode("ascii")
        payload = f'{{"bytes":"{wrapped}"}}'.encode()
    headers = b"".join(
        _header(name, value) for name, value in [*kind, (":content-type", "application/json")]
    )
    total = 12 + len(headers) + len(payload) + 4
    prelude = _PRELUDE.pack(total, len(headers))
    head = prelude + struct.pack(">I", _crc(prelude)) + headers + payload
    return head + struct.pack(">I", _crc(head))


def frames(events: Any) -> bytes:
    """The bytes of a whole stream of ``(event, data)`` pairs."""
    return b"".join(frame(name, data) for name, data in events)


def split_frames(body: bytes) -> list[bytes]:
    """``body`` cut into its frames (by their prelude's length), for sending one by one."""
    pieces: list[bytes] = []
    at = 0
    while at + 4 <= len(body):
        (total,) = struct.unpack_from(">I", body, at)
        if total < 16:
            break
        pieces.append(body[at : at + total])
        at += total
    if at < len(body):
        pieces.append(body[at:])
    return pieces
