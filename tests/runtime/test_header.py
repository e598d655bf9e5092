"""Request headers: canonical form, deltas, folding and the record rule."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from headerlock.errors import CorruptLogError
from headerlock.runtime.header import (
    HeaderDelta,
    RequestHeader,
    apply_header_delta,
    diff_header,
    fold_request_header,
    header_record,
)
from headerlock.runtime.session import REQUEST_HEADER, REQUEST_HEADER_DELTA, Event, SessionLog
from headerlock.runtime.tools import ToolSchema
from headerlock.strategies import tool_sets

A, B, C = ToolSchema("a", "A"), ToolSchema("b", "B"), ToolSchema("c", "C")


def test_canonical_form_omits_empty_parts() -> None:
    assert RequestHeader({"model": "m"}).to_data() == {"config": {"model": "m"}}
    full = RequestHeader({"model": "m"}, "sys", (A,))
    assert set(full.to_data()) == {"config", "system", "tools"}
    assert RequestHeader.from_data(full.to_data()) == full


def test_added_tool_is_a_delta_and_reorder_is_a_fallback() -> None:
    old = RequestHeader({"model": "m"}, "sys", (A, B))
    added = RequestHeader({"model": "m"}, "sys", (A, B, C))
    record = header_record(old, added, first_of_loop=False)
    assert record is not None
    assert record.type == REQUEST_HEADER_DELTA
    assert record.data == {"tools": {"added": [C.to_data()]}}
    reordered = RequestHeader({"model": "m"}, "sys", (B, A))
    record = header_record(old, reordered, first_of_loop=False)
    assert record is not None
    assert (record.type, record.data["reason"]) == (REQUEST_HEADER, "fallback")
    assert header_record(old, old, first_of_loop=False) is None


def test_first_request_of_a_loop_is_initial_or_resume() -> None:
    header = RequestHeader({"model": "m"})
    first = header_record(None, header, first_of_loop=True)
    resumed = header_record(header, header, first_of_loop=True)
    assert first is not None and first.data["reason"] == "initial"
    assert resumed is not None and resumed.data["reason"] == "resume"


def test_system_delta_is_line_level() -> None:
    old = RequestHeader({}, "one\ntwo\nthree")
    new = RequestHeader({}, "one\n2\n2b\nthree")
    delta = diff_header(old, new)
    assert delta.to_data() == {"system": {"keep_start": 1, "keep_end": 1, "insert": ["2", "2b"]}}
    assert apply_header_delta(old, HeaderDelta.from_data(delta.to_data())) == new


def test_delta_before_any_header_is_a_corrupt_log() -> None:
    log = [Event(REQUEST_HEADER_DELTA, 1, {"tools": {"removed": ["a"]}})]
    with pytest.raises(CorruptLogError, match="corrupt log at seq 1: request/header-delta before"):
        fold_request_header(log)


def test_log_seq_must_be_monotonic() -> None:
    with pytest.raises(CorruptLogError, match="expected seq 2, got 3"):
        SessionLog([Event("turn/start", 1), Event("turn/end", 3)])


systems = st.lists(st.sampled_from(["intro", "rules", "", "tools", "end"]), max_size=4).map(
    "\n".join
)
configs = st.fixed_dictionaries(
    {"model": st.sampled_from(["m1", "m2"])}, optional={"temperature": st.sampled_from([0.0, 0.5])}
)
headers = st.builds(RequestHeader, configs, systems, tool_sets(max_size=4).map(tuple))


@given(st.lists(headers, min_size=1, max_size=6))
def test_recording_then_folding_gives_back_every_header(sequence: list[RequestHeader]) -> None:
    log = SessionLog()
    for i, header in enumerate(sequence):
        record = header_record(fold_request_header(log.events), header, first_of_loop=i == 0)
        if record is not None:
            log.append(record.type, record.data)
        roundtrip = SessionLog.from_data(log.to_data())
        assert fold_request_header(roundtrip.events) == header


@given(headers, headers)
def test_delta_when_recorded_reproduces_exactly(old: RequestHeader, new: RequestHeader) -> None:
    record = header_record(old, new, first_of_loop=False)
    if record is not None and record.type == REQUEST_HEADER_DELTA:
        assert apply_header_delta(old, HeaderDelta.from_data(record.data)) == new
