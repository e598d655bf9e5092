"""Which values are secrets: they become ``<<secret>>`` in every recording.

The values of ``HEADERLOCK_API_KEY``, ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``,
``GEMINI_API_KEY`` and ``GOOGLE_API_KEY``, of the variables named in
``HEADERLOCK_REDACT_ENV`` and of those registered with ``redact_env`` (the
pytest ini option ``headerlock_redact_env``, ``headerlock record
--redact-env``), of the request headers ``authorization``, ``x-api-key``,
``api-key``, ``x-goog-api-key`` and any whose name holds ``key``, ``token``,
``secret``, ``auth``, ``sig`` or ``password`` (a gateway's own header), and of a
URL's userinfo. Values shorter than ``MIN_SECRET_LENGTH``
characters are never secrets: scrubbing a common word everywhere helps no one.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Final
from urllib.parse import urlsplit

from headerlock.errors import ConfigError

SECRET_HEADERS: Final = ("authorization", "x-api-key", "api-key", "x-goog-api-key")
DEFAULT_SECRET_ENV: Final = (
    "HEADERLOCK_API_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
)
REDACT_ENV_VAR: Final = "HEADERLOCK_REDACT_ENV"
"""Names more environment variables whose values are secrets (comma- or space-separated)."""
MIN_SECRET_LENGTH: Final = 8
"""Shorter values are never secrets."""

_registered_env: list[str] = []


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
    """Each secret value (longest first) and the environment variable it came from."""
    env = os.environ if environ is None else environ
    listed = (*DEFAULT_SECRET_ENV, *_registered_env, *env_names(env.get(REDACT_ENV_VAR, "")))
    found: dict[str, str] = {}
    for name in listed:
        value = env.get(name) or ""
        if len(value) >= MIN_SECRET_LENGTH:
            found.setdefault(value, name)
    return {value: found[value] for value in sorted(found, key=lambda v: (-len(v), v))}


def secret_values(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The secrets to scrub (see ``secret_env``), longest first."""
    return tuple(secret_env(environ))


CREDENTIAL_WORDS: Final = ("key", "token", "secret", "auth", "sig", "password")
"""A header or query parameter whose name holds one of these carries a credential."""


def is_credential_name(name: str) -> bool:
    """Whether a header or query parameter named ``name`` carries a credential."""
    lowered = name.lower()
    return lowered in SECRET_HEADERS or any(word in lowered for word in CREDENTIAL_WORDS)


def header_secrets(headers: Iterable[tuple[str, str]]) -> list[str]:
    """The secret values among request ``headers``: every credential header's value, also
    without its scheme (``Bearer``, ``Basic``, ...), and a Basic credential's password."""
    found: list[str] = []
    for name, value in headers:
        if not is_credential_name(name):
            continue
        found.append(value)
        scheme, _, token = value.partition(" ")
        token = token.strip()
        if not token:
            continue
        found.append(token)
        if scheme.lower() == "basic":
            found += _basic_secrets(token)
    return found


def _basic_secrets(token: str) -> list[str]:
    try:
        decoded = base64.b64decode(token, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return []
    _, colon, password = decoded.partition(":")
    return [decoded, password] if colon and password else [decoded]


def url_secrets(url: str) -> list[str]:
    """The credentials in a URL's userinfo (``https://user:password@host``)."""
    parts = urlsplit(url)
    if parts.password:
        return [parts.password, f"{parts.username or ''}:{parts.password}"]
    return [parts.username] if parts.username and "@" in parts.netloc else []


def env_secrets(names: Iterable[str], environ: Mapping[str, str] | None = None) -> list[str]:
    """The values of the environment variables ``names`` that are set."""
    env = os.environ if environ is None else environ
    return [env[name] for name in names if env.get(name)]
