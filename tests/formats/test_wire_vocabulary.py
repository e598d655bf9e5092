"""The format layer scrubs by what every model API declares, in any process.

``formats.wire_vocabulary`` is where the API modules hand the format layer their
credentials, id keys and volatile fields; the package root installs the registry as its
source, so a process that never imported the wire code still scrubs every API's keys.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from headerlock.formats import vocabulary_source, wire_vocabulary
from headerlock.formats.secrets import credentials, is_credential_name
from headerlock.formats.wire_vocabulary import Credentials, WireVocabulary, merge
from headerlock.testing.wire.apis import REGISTERED, ModelApi

ENV = {"ANTHROPIC_API_KEY": "anthropic-value-0001", "AWS_SESSION_TOKEN": "aws-session-0002"}


def test_a_process_that_never_imported_the_wire_code_scrubs_every_apis_keys() -> None:
    code = (
        "import json, sys\n"
        "from headerlock.formats.secrets import secret_values\n"
        "from headerlock.formats.scrub import redact_secrets\n"
        "found = secret_values()\n"
        "print(json.dumps([found, redact_secrets('key AKIA0123456789ABCDEF')]))\n"
    )
    env = {**os.environ, **ENV}
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60,
        check=True,
    )  # fmt: skip
    found, redacted = json.loads(result.stdout)
    assert set(ENV.values()) <= set(found)
    assert redacted == "key <<secret>>"


@pytest.mark.parametrize("api", REGISTERED, ids=lambda api: api.name)
def test_every_apis_credentials_are_known(api: ModelApi) -> None:
    declared = api.vocabulary.credentials
    known = credentials()
    assert set(declared.env) <= set(known.env)
    assert all(is_credential_name(header) for header in declared.headers)
    assert set(declared.key_shapes) <= set(known.key_shapes)


def test_without_a_source_nothing_is_scrubbed_with_less(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vocabulary_source, "SOURCES", [])
    with pytest.raises(RuntimeError, match="no model API vocabulary"):
        wire_vocabulary.vocabulary()


def test_merge_keeps_the_first_seen_order_and_the_first_fixed_value() -> None:
    a = WireVocabulary(Credentials(env=("B", "A")), message_ids=frozenset({"x"}), fixed=(("k", 1),))
    b = WireVocabulary(Credentials(env=("A", "C")), message_ids=frozenset({"y"}), fixed=(("k", 2),))
    merged = merge([a, b])
    assert merged.credentials.env == ("B", "A", "C")
    assert merged.message_ids == {"x", "y"}
    assert merged.fixed == (("k", 1),)
