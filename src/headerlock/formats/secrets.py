"""Which values are secrets: they become ``<<secret>>`` in every recording.

The values of ``HEADERLOCK_API_KEY`` and of the environment variables each model API's
module declares its clients read (``Credentials.env`` in ``formats.wire_vocabulary``:
``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY``, ``GOOGLE_API_KEY``, the AWS
credentials), those a client signed a request with (``add_signing_secrets``: botocore's
secret key and session token), of the variables named in ``HEADERLOCK_REDACT_ENV`` and of
those registered with ``redact_env`` (the pytest ini option ``headerlock_redact_env``,
``headerlock record --redact-env``), of the request headers ``authorization``, those the
APIs declare (``x-api-key``, ``api-key``, ``x-goog-api-key``) and any whose name holds
``key``, ``token``, ``secret``, ``auth``, ``sig`` or ``password`` (a gateway's own header;
``X-Amz-Security-Token`` too, and the parts an API declares secret inside such a value: a
SigV4 ``Authorization``'s access key id and signature), the keys an API declares by their
shape in any text (an AWS access key id), and the credentials of a URL (``url_secrets``: its
userinfo, its query parameters named like a credential header, the well-known key shapes
the APIs declare in its path or query), of each request and of the base URL variables
(``HEADERLOCK_BASE_URL`` and those the APIs declare). Values shorter
than ``MIN_SECRET_LENGTH`` characters are never secrets: scrubbing a common word
everywhere helps no one. A secret is found in each form text may carry it in
(``secret_forms``: JSON-escaped, URL-encoded, base64).
"""

from __future__ import annotations

import base64
import functools
import json
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final
from urllib.parse import SplitResult, quote, quote_plus, unquote, unquote_plus, urlsplit

from headerlock.errors import ConfigError
from headerlock.formats.wire_vocabulary import Credentials, vocabulary

OWN: Final = Credentials(
    env=("HEADERLOCK_API_KEY",), url_env=("HEADERLOCK_BASE_URL",), headers=("authorization",)
)
"""headerlock's own: its key and base URL variables, and the ``authorization`` header."""


def credentials() -> Credentials:
    """headerlock's own credentials, then every registered model API's."""
    return _known().credentials


@dataclass(frozen=True, slots=True)
class _Known:
    """What one registry's declared credentials give (``credentials`` and the names,
    hints and pattern derived from them), kept while the registry hands the same object:
    every scrubbed string asks, so this is found by identity, not rebuilt or hashed."""

    declared: Credentials
    credentials: Credentials
    names: dict[str, bool]
    hints: tuple[str, ...]
    key_shape: re.Pattern[str]


_held: list[_Known] = []


def _known() -> _Known:
    declared = vocabulary().credentials
    held = _held[0] if _held else None
    if held is not None and held.declared is declared:
        return held
    known = Credentials(
        env=tuple(dict.fromkeys((*OWN.env, *declared.env))),
        url_env=tuple(dict.fromkeys((*OWN.url_env, *declared.url_env))),
        headers=tuple(dict.fromkeys((*OWN.headers, *declared.headers))),
        key_shapes=declared.key_shapes,
        text_shapes=declared.text_shapes,
        header_parts=declared.header_parts,
    )
    hints = tuple(dict.fromkeys(hint for shape in known.text_shapes for hint in shape.hints))
    fresh = _Known(declared, known, {}, hints, _key_shape(known.key_shapes))
    _held[:] = [fresh]
    return fresh


REDACT_ENV_VAR: Final = "HEADERLOCK_REDACT_ENV"
"""Names more environment variables whose values are secrets (comma- or space-separated)."""
MIN_SECRET_LENGTH: Final = 8
"""Shorter values are never secrets."""

_registered_env: list[str] = []
_signing: list[str] = []
SIGNING_SOURCE: Final = "the credentials a request was signed with"


def add_signing_secrets(values: Iterable[str | None]) -> None:
    """Keep the credentials a client signed a request with (botocore's secret key and
    session token, which never travel themselves) as secrets of this process."""
    for value in values:
        if value and len(value) >= MIN_SECRET_LENGTH and value not in _signing:
            _signing.append(value)


def signing_secrets() -> tuple[str, ...]:
    """The credentials ``add_signing_secrets`` kept, oldest first."""
    return tuple(_signing)


def env_names(text: str, *, source: str = REDACT_ENV_VAR) -> tuple[str, ...]:
    """The environment variable names in a comma- or space-separated list."""
    names = tuple(name for name in re.split(r"[\s,]+", text) if name)
    for name in names:
        if "=" in name or "\x00" in name:
            raise ConfigError(f"{source}: {name!r} is not an environment variable name", key=source)
    return names


def redact_env(names: Iterable[str], *, source: str = "--redact-env") -> Callable[[], None]:
    """Treat the values of the environment variables ``names`` (each may be a list, as
    for ``env_names``) as secrets in this process, until the returned function is called."""
    added = [name for text in names for name in env_names(text, source=source)]
    _registered_env.extend(added)

    def undo() -> None:
        for name in added:
            if name in _registered_env:
                _registered_env.remove(name)

    return undo


def secret_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Each secret value (longest first) and the environment variable it came from
    (inside ``held_secrets``, this thread's table of when it began)."""
    if environ is None:
        held: dict[str, str] | None = getattr(_hold, "table", None)
        if held is not None:
            return dict(held)
    get = (os.environ if environ is None else environ).get
    known = credentials()
    listed = (*known.env, *_registered_env, *env_names(get(REDACT_ENV_VAR) or ""))
    named = tuple((name, get(name) or "") for name in listed)
    urls = tuple((name, get(name) or "") for name in known.url_env)
    return dict(_secret_table(known, named, urls, tuple(_signing)))


_hold = threading.local()


@contextmanager
def held_secrets() -> Iterator[dict[str, str]]:
    """Read ``secret_env()`` once and give that table to every ``secret_env()`` and
    ``secret_values()`` of this thread until the block ends (a test's lock opens in a
    few steps that each ask: the environment is read once, not in each)."""
    outer: dict[str, str] | None = getattr(_hold, "table", None)
    table = secret_env() if outer is None else outer
    _hold.table = table
    try:
        yield dict(table)
    finally:
        _hold.table = outer


@functools.lru_cache(maxsize=16)
def _secret_table(
    known: Credentials,
    named: tuple[tuple[str, str], ...],
    urls: tuple[tuple[str, str], ...],
    signing: tuple[str, ...],
) -> dict[str, str]:
    """``secret_env`` of these variable values under the ``known`` credential names
    (``url_secrets`` reads them): built once per environment, not per lock (callers get
    a copy)."""
    found: dict[str, str] = {}
    for name, value in named:
        if len(value) >= MIN_SECRET_LENGTH:
            found.setdefault(value, name)
    for value in signing:
        found.setdefault(value, SIGNING_SOURCE)
    for name, url in urls:
        for value in url_secrets(url):
            if len(value) >= MIN_SECRET_LENGTH:
                found.setdefault(value, f"{name} (a credential in the URL)")
    return {value: found[value] for value in sorted(found, key=lambda v: (-len(v), v))}


def secret_values(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The secrets to scrub (see ``secret_env``), longest first."""
    return tuple(secret_env(environ))


MAX_NAMES_KEPT: Final = 4096
"""Header and parameter names whose verdict ``is_credential_name`` keeps."""
CREDENTIAL_WORDS: Final = ("key", "token", "secret", "auth", "sig", "password")
"""A header or query parameter whose name holds one of these carries a credential."""


def is_credential_name(name: str) -> bool:
    """Whether a header or query parameter named ``name`` carries a credential."""
    names = _known().names
    found = names.get(name)
    if found is None:
        lowered = name.lower()
        found = lowered in credentials().headers or any(w in lowered for w in CREDENTIAL_WORDS)
        if len(names) < MAX_NAMES_KEPT:
            names[name] = found
    return found


def header_secrets(headers: Iterable[tuple[str, str]]) -> list[str]:
    """The secret values among request ``headers``: every credential header's value, also
    without its scheme (``Bearer``, ``Basic``, ...), and a Basic credential's password."""
    found: list[str] = []
    for name, value in headers:
        if not is_credential_name(name):
            continue
        found.append(value)
        for parts in credentials().header_parts:
            found += parts(value)
        scheme, _, token = value.partition(" ")
        token = token.strip()
        if not token:
            continue
        found.append(token)
        if scheme.lower() == "basic":
            found += _basic_secrets(token)
    return found


def request_secrets(headers: tuple[tuple[str, str], ...], url: str) -> tuple[str, ...]:
    """The secrets a request carries: its credential headers' values and its URL's
    credentials (``header_secrets``, ``url_secrets``), and those an AWS request was
    signed with (``signing_secrets``)."""
    return _request_secrets(headers, url, tuple(_signing), _known().declared)


@functools.lru_cache(maxsize=64)
def _request_secrets(
    headers: tuple[tuple[str, str], ...],
    url: str,
    signing: tuple[str, ...],
    declared: Credentials,
) -> tuple[str, ...]:
    """``request_secrets`` of these headers and URL under the registry's ``declared``
    credentials: found once, not for every request and again when its lock closes (an
    agent sends the same credentials every time)."""
    return (*header_secrets(headers), *url_secrets(url), *signing)


def _basic_secrets(token: str) -> list[str]:
    try:
        decoded = base64.b64decode(token, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return []
    _, colon, password = decoded.partition(":")
    return [decoded, password] if colon and password else [decoded]


def shaped_secrets(text: str) -> list[str]:
    """The keys an API declares by their shape (``Credentials.text_shapes``: an AWS access
    key id) in any text."""
    found: list[str] = []
    known = _known()
    if not any(hint in text for hint in known.hints):
        return found
    for shape in known.credentials.text_shapes:
        if any(hint in text for hint in shape.hints):
            found += _pattern(shape.pattern).findall(text)
    return found


def shape_hints() -> tuple[str, ...]:
    """Every hint of every key shape (``Credentials.text_shapes``) of the registry."""
    return _known().hints


def may_hold_shaped(text: str) -> bool:
    """Whether ``text`` holds a hint of a key shape (else ``shaped_secrets`` finds none)."""
    return any(hint in text for hint in _known().hints)


@functools.lru_cache(maxsize=64)
def _pattern(shape: str) -> re.Pattern[str]:
    """``shape`` found alone: not inside a longer run of letters and digits."""
    return re.compile(r"(?<![A-Za-z0-9])" + shape + r"(?![A-Za-z0-9])")


@functools.lru_cache(maxsize=4)
def _key_shape(shapes: tuple[tuple[str, str], ...]) -> re.Pattern[str]:
    joined = "|".join(shape for _, shape in shapes) or r"(?!)"
    return re.compile(r"(?<![A-Za-z0-9_-])(?:" + joined + r")(?![A-Za-z0-9_-])")


def key_shapes(text: str) -> list[str]:
    """The values in ``text`` shaped like a well-known API key (``Credentials.key_shapes``
    of every API)."""
    return _known().key_shape.findall(text)


def url_secrets(url: str) -> list[str]:
    """The credentials a URL carries: its userinfo (also as the base64 a ``Basic``
    header sends), the values of its query parameters named like a credential
    (``is_credential_name``), and the well-known key shapes in its path or query."""
    try:
        parts = urlsplit(url)
        found = _userinfo_secrets(parts)
    except ValueError:  # not a URL: nothing to find
        return []
    found += query_secrets(parts.query)
    for text in (parts.path, unquote(parts.path), parts.query, unquote_plus(parts.query)):
        found += key_shapes(text)
    return list(dict.fromkeys(found))


def _userinfo_secrets(parts: SplitResult) -> list[str]:
    if "@" not in parts.netloc:
        return []
    raw_user, _, raw_password = parts.netloc.rpartition("@")[0].partition(":")
    user, password = unquote(raw_user), unquote(raw_password)
    basic = base64.b64encode(f"{user}:{password}".encode()).decode()
    if password:
        return [raw_password, password, f"{raw_user}:{raw_password}", f"{user}:{password}", basic]
    return [raw_user, user, basic] if user else []


def query_secrets(query: str) -> list[str]:
    """The values (as sent and decoded) of the query parameters named like a credential."""
    found: list[str] = []
    for pair in query.split("&"):
        raw_name, _, raw_value = pair.partition("=")
        if raw_value and is_credential_name(unquote_plus(raw_name)):
            found += [raw_value, unquote_plus(raw_value)]
    return found


def env_secrets(names: Iterable[str], environ: Mapping[str, str] | None = None) -> list[str]:
    """The values of the environment variables ``names`` that are set."""
    get = (os.environ if environ is None else environ).get
    return [value for value in map(get, names) if value]


_UNICODE_ESCAPE = re.compile(r"\\u[0-9a-f]{4}")
_PERCENT_ESCAPE = re.compile(r"%[0-9A-F]{2}")


@functools.lru_cache(maxsize=1024)
def secret_forms(secret: str) -> tuple[str, ...]:
    """``secret`` and each escaped form text may carry it in, longest first: JSON string
    escapes once and twice (``\\"``, ``\\\\``, ``\\u00e9``-style as ``ensure_ascii`` writes
    non-ASCII, in either case), URL encoding (``%XX`` in either case, ``+`` for a space)
    and base64 (standard and URL-safe, whole, and at each alignment inside a longer
    base64 text: the characters only the secret's bytes decide)."""
    forms = {secret}
    for ascii_only in (True, False):
        once = json.dumps(secret, ensure_ascii=ascii_only)[1:-1]
        forms.update((once, json.dumps(once, ensure_ascii=ascii_only)[1:-1]))
    for escaped in [f for f in forms if "\\u" in f]:
        forms.add(_UNICODE_ESCAPE.sub(lambda m: m[0][:2] + m[0][2:].upper(), escaped))
    for encoded in (quote(secret, safe=""), quote_plus(secret, safe=""), quote(secret)):
        forms.update((encoded, _PERCENT_ESCAPE.sub(lambda m: m[0].lower(), encoded)))
    raw = secret.encode("utf-8", "surrogatepass")
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        forms.add(encode(raw).decode("ascii"))
        for shift in range(3):
            text = encode(b"\0" * shift + raw).decode("ascii")
            start, end = (0, 2, 3)[shift], (shift + len(raw)) * 8 // 6
            if end - start >= MIN_SECRET_LENGTH:
                forms.add(text[start:end])
    return tuple(sorted(forms, key=lambda f: (-len(f), f)))


def all_forms(secrets: Iterable[str]) -> tuple[str, ...]:
    """Every form (``secret_forms``) of each of ``secrets``, longest first."""
    found = {form for secret in secrets for form in secret_forms(secret)}
    return tuple(sorted(found, key=lambda f: (-len(f), f)))
