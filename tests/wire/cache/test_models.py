"""Sessions are per model: a request is compared with the previous request on the same
model of its API, since providers cache per model. Another model starts its own session,
cold, with no finding; coming back to a model reads what its earlier request left."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from headerlock import wire
from tests.model_server import ModelServer
from tests.wire.cache.corpus import base, record

OTHER = {"openai.chat": "gpt-4o-mini", "gemini.generate": "gemini-2.0-flash"}


@pytest.mark.parametrize("api", sorted(OTHER))
def test_each_model_is_its_own_session(model_server: ModelServer, tmp_path: Path, api: str) -> None:
    first, second, third = base(api)
    reqs = [first, replace(second, model=OTHER[api]), third]  # models A, B, A
    path = tmp_path / "models.yaml"
    run = record(model_server, api, reqs, path)
    for report in (wire.cache_report(run), wire.cache_report(path)):
        text = report.to_text()
        assert report.findings == (), text
        requests = report.requests
        assert [r.model for r in requests] == [first.model, OTHER[api], first.model]
        assert [r.session for r in requests] == [1, 2, 1] and report.sessions == 2
        assert [r.previous for r in requests] == [None, None, 1]
        assert (requests[1].shared_bytes, requests[1].predicted) == (0, 0), text  # cold
        # request 3 only appends to request 1: all of it is shared, and read from the cache
        assert requests[2].shared_bytes == requests[0].prefix_bytes, text
        assert requests[2].predicted > 1024, text
        assert f"  session 2: {api}, {OTHER[api]} (new: starts cold)\n" in text
        assert f"  session 1: {api}, {first.model} (continued: compared with request 1)\n" in text


def test_a_keyed_config_change_on_the_same_model_still_breaks(
    model_server: ModelServer, tmp_path: Path
) -> None:
    reqs = base("openai.chat")
    reqs[2] = replace(reqs[2], extra={"response_format": {"type": "json_object"}})
    report = wire.cache_report(record(model_server, "openai.chat", reqs, tmp_path / "s.yaml"))
    assert [f.line() for f in report.findings] == [
        'request 3 config: config-changed: response_format null -> {"type": "json_object"}'
    ]
    assert [r.session for r in report.requests] == [1, 1, 1]
