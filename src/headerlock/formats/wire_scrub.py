"""Scrubbing wire traffic: secrets become ``<<secret>>``, provider ids ``<<id:N>>``.

Secrets are those ``headerlock.formats.secrets`` defines: the values of credential
headers (with and without a ``Bearer`` prefix), the credentials of each request's URL
(``url_secrets``) and of listed environment variables, each in every form text may carry
it in (``secret_forms``: JSON-escaped, URL-encoded, base64), in text and in bytes; a
user ``redact`` callable scrubs any string further; a scrubber's repr never shows them.
Ids are numbered by first appearance, so the same traffic always gets the same tokens.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import unquote_plus

from headerlock.formats import placeholders
from headerlock.formats.secrets import (
    MIN_SECRET_LENGTH,
    all_forms,
    is_credential_name,
    may_hold_shaped,
    shape_hints,
    shaped_secrets,
)
from headerlock.formats.wire_vocabulary import vocabulary

Redact = Callable[[str], str]


@functools.lru_cache(maxsize=64)
def _forms_of(
    secrets: tuple[str, ...], hints: tuple[str, ...]
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[bytes, ...], bool]:
    """A scrubber's forms, core forms and byte forms of ``secrets``, and whether the
    cores and the key-shape ``hints`` show as themselves in JSON text: computed once per
    set of secrets in a process, not once per lock (each lock makes its scrubber)."""
    forms = all_forms(secrets)
    raw = {f.encode(codec, "ignore") for f in forms for codec in ("utf-8", "latin-1")}
    cores = tuple(f for f in forms if not any(g in f for g in forms if g != f))
    plain = not any(map(_escaped_in_json, (*cores, *hints)))
    return forms, cores, tuple(sorted((r for r in raw if r), key=lambda r: (-len(r), r))), plain


_JSON_TEXT: Final = json.JSONEncoder(ensure_ascii=False, check_circular=False)
"""``Scrubber.untouched``'s encoder: every character as itself but ``"``, ``\\`` and
control characters (one encoder for every call)."""


def _escaped_in_json(text: str) -> bool:
    """Whether JSON text may write some character of ``text`` other than as itself."""
    return any(c in '"\\' or c < " " for c in text)


@dataclass(frozen=True, slots=True)
class Scrubber:
    """Replaces secrets (each form of each, longest first) and applies ``redact`` to
    every string."""

    secrets: tuple[str, ...] = field(default=(), repr=False)
    redact: Redact | None = None
    forms: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """Every form of every secret (``secret_forms``), longest first: what is replaced."""
    _cores: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """The forms that hold no other form: text holds a form only if it holds one of these."""
    _raw_forms: tuple[bytes, ...] = field(init=False, repr=False, compare=False)
    _plain: bool = field(init=False, repr=False, compare=False)
    """Whether every core form and key-shape hint shows as itself in JSON text
    (``untouched`` can decide)."""

    def __post_init__(self) -> None:
        forms, cores, raw, plain = _forms_of(self.secrets, shape_hints())
        object.__setattr__(self, "forms", forms)
        object.__setattr__(self, "_cores", cores)
        object.__setattr__(self, "_raw_forms", raw)
        object.__setattr__(self, "_plain", plain)

    def __repr__(self) -> str:
        return f"Scrubber(<{len(self.secrets)} secrets>, redact={self.redact!r})"

    @classmethod
    def of(cls, secrets: Iterable[str], redact: Redact | None = None) -> Scrubber:
        """A scrubber for ``secrets`` (short and duplicate values dropped, order fixed)."""
        kept = {s for s in secrets if len(s) >= MIN_SECRET_LENGTH}
        return cls(tuple(sorted(kept, key=lambda s: (-len(s), s))), redact)

    def plus(self, secrets: Iterable[str]) -> Scrubber:
        """This scrubber with more secrets (itself when none of them is new, so a lock
        that sees the same credentials on every request keeps one scrubber)."""
        more = [s for s in secrets if s not in self.secrets]
        if not any(len(s) >= MIN_SECRET_LENGTH for s in more):
            return self
        return Scrubber.of((*self.secrets, *more), self.redact)

    def text(self, text: str) -> str:
        """``text`` with every secret (in each of its forms) and AWS access key id
        replaced, then redacted."""
        if any(core in text for core in self._cores):
            for form in self.forms:
                if form in text:
                    text = text.replace(form, placeholders.SECRET)
        for key_id in shaped_secrets(text):
            text = text.replace(key_id, placeholders.SECRET)
        return self.redact(text) if self.redact is not None else text

    def raw(self, data: bytes) -> bytes:
        """Bytes (a body that is not UTF-8 text) with every secret form replaced, as
        UTF-8 or Latin-1 bytes."""
        for form in self._raw_forms:
            if form in data:
                data = data.replace(form, placeholders.SECRET.encode())
        return data

    def query(self, query: str) -> str:
        """A URL query with secrets scrubbed, and every value of a parameter whose name
        says it holds a credential (``key``, ``token``, ``secret``, ``auth``, ``sig``)."""
        if not query:
            return query
        parts = []
        for pair in query.split("&"):
            name, sep, value = pair.partition("=")
            if sep and value and is_credential_name(unquote_plus(name)):
                value = placeholders.SECRET
            parts.append(self.text(name) + sep + self.text(value))
        return "&".join(parts)

    def json_data(self, value: Any) -> Any:
        """``data(value)`` for JSON data as parsed (string keys): when no string in it
        can change (``clean_text``), a copy made at C speed from its JSON text instead of
        a walk string by string."""
        text = self.clean_text(value)
        return self.data(value) if text is None else json.loads(text)

    def json_raw(self, raw: bytes, value: Any) -> Any:
        """``json_data(value)`` for ``value`` parsed from the JSON text ``raw`` (UTF-8):
        when ``raw`` holds no backslash, its strings are in it as they are, so it proves
        by itself that scrubbing changes nothing (``untouched_text``) and a parse of it
        is the copy (no walk, no encoding)."""
        if b"\\" not in raw and self.redact is None and self._plain:
            text = raw.decode("utf-8", "surrogatepass")
            if self.untouched_text(text):
                return json.loads(text)
        return self.json_data(value)

    def json_owned(self, value: Any) -> Any:
        """``json_data(value)`` for JSON data the caller owns (a fresh copy that shares no
        list or mapping with anything: ``IdTokens.messages``'): ``value`` itself when
        scrubbing changes nothing in it (no second copy)."""
        return value if self.untouched(value) else self.data(value)

    def untouched(self, value: Any) -> bool:
        """Whether ``data(value)`` equals ``value``, proven from its JSON text."""
        return self.clean_text(value) is not None

    def clean_text(self, value: Any) -> str | None:
        """The JSON text of ``value`` when it proves that scrubbing changes nothing in
        it: no ``redact``, and the text holds no secret form and no hint of a key shape
        (``None`` otherwise, or when ``value`` is not JSON data).

        Sound because ``json.dumps(..., ensure_ascii=False)`` writes every character of
        every string and key as itself except ``"``, ``\\`` and control characters,
        which no form or hint checked here holds (``_plain``): whatever a string holds,
        the text holds too."""
        if self.redact is not None or not self._plain:
            return None
        try:
            text = _JSON_TEXT.encode(value)
        except (TypeError, ValueError, RecursionError):
            return None
        return text if self.untouched_text(text) else None

    def untouched_text(self, text: str) -> bool:
        """Whether scrubbing changes nothing in data whose every string ``text`` holds as
        that JSON writes it: the JSON itself (``clean_text``), or raw JSON with no
        backslash (its strings are then in it as they are: a stream as received,
        ``entry.scrub_response``)."""
        if self.redact is not None or not self._plain:
            return False
        return not any(core in text for core in self._cores) and not may_hold_shaped(text)

    def data(self, value: Any) -> Any:
        """A copy of plain data with every string scrubbed, mapping keys included."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, _LEAVES):
            return value
        if isinstance(value, Mapping):
            return {self.data(k): self.data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.data(v) for v in value]
        return value


@dataclass(slots=True)
class IdTokens:
    """Numbers provider ids by first appearance: ``<<id:1>>``, ``<<id:2>>``, ..."""

    tokens: dict[str, str] = field(default_factory=dict)

    def token(self, value: str) -> str:
        """The token of ``value``, numbering it if it is new."""
        if value not in self.tokens:
            self.tokens[value] = placeholders.id_token(len(self.tokens) + 1)
        return self.tokens[value]

    def messages(self, value: Any) -> Any:
        """A copy of messages with the values of id keys (every API's
        ``WireVocabulary.message_ids``) at any depth tokenized."""
        return self._messages(value, vocabulary().message_ids)

    def _messages(self, value: Any, keys: frozenset[str]) -> Any:
        if isinstance(value, _LEAVES):  # the common case first: no abc check
            return value
        if isinstance(value, Mapping):
            return {
                k: self.token(v) if k in keys and isinstance(v, str) else self._messages(v, keys)
                for k, v in value.items()
            }
        if isinstance(value, (list, tuple)):
            return [self._messages(v, keys) for v in value]
        return value

    def raw_message_ids(self, raw: bytes, value: Any) -> list[str]:
        """``message_ids(value)`` for ``value`` parsed from the JSON text ``raw``: none
        when ``raw`` holds no backslash and no id key as a JSON string (every key of
        ``value`` is then in ``raw`` as it is, quoted), without a walk."""
        if b"\\" not in raw and _id_keys(vocabulary().message_ids).search(raw) is None:
            return []
        return self.message_ids(value)

    def message_ids(self, value: Any) -> list[str]:
        """The distinct id values ``messages(value)`` tokenizes, in the order it numbers
        them (found by that very walk, on a fresh numbering); none are numbered here."""
        found: dict[str, None] = {}
        _ids(value, vocabulary().message_ids, found)
        return list(found)

    def config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of a request config with its top-level id keys tokenized."""
        keys = vocabulary().config_ids
        return {
            k: self.token(v) if k in keys and isinstance(v, str) else v for k, v in config.items()
        }


_LEAVES: Final = (str, int, float, type(None))
"""What JSON data holds that is neither a mapping nor a list (``bool`` is an ``int``)."""


def _ids(value: Any, keys: frozenset[str], found: dict[str, None]) -> None:
    """Add to ``found`` the values ``IdTokens._messages`` tokenizes in ``value``, in the
    order it meets them (the same walk, making no copy)."""
    if isinstance(value, _LEAVES):
        return
    if isinstance(value, Mapping):
        for k, v in value.items():
            if k in keys and isinstance(v, str):
                found.setdefault(v, None)
            else:
                _ids(v, keys, found)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _ids(v, keys, found)


@functools.lru_cache(maxsize=8)
def _id_keys(keys: frozenset[str]) -> re.Pattern[bytes]:
    """A search for any of ``keys`` written as a JSON string (``"id"``), in UTF-8 bytes
    (no keys: a search that finds one everywhere)."""
    quoted = (json.dumps(k, ensure_ascii=False).encode("utf-8", "surrogatepass") for k in keys)
    return re.compile(b"|".join(re.escape(q) for q in sorted(quoted)))
