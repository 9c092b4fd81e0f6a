"""The retry policy is a pure function: property tests."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from spark_pair.base.errors import (
    AuthError,
    BadRequest,
    ConnectionFailed,
    EndpointError,
    ModelNotFound,
    RateLimited,
    ServerError,
    StreamDropped,
    StreamTimeout,
)
from spark_pair.protocol import errors_map
from spark_pair.protocol.retry import MAX_DELAY_S, give_up_note, retry_delay

retryable = st.sampled_from([ServerError, StreamDropped, StreamTimeout, RateLimited])
final = st.sampled_from([AuthError, BadRequest, EndpointError, ModelNotFound])
attempts = st.integers(min_value=1, max_value=40)
seeds = st.integers(min_value=0, max_value=2**32)


@given(final, attempts, seeds)
def test_never_retries_client_errors(cls, attempt, seed):
    assert retry_delay(cls("x", status=400), attempt, 0.0, 1e9, random.Random(seed)) is None


@given(retryable, attempts, seeds)
def test_backoff_doubles_with_bounded_jitter(cls, attempt, seed):
    delay = retry_delay(cls("x"), attempt, 0.0, 1e9, random.Random(seed))
    base = min(MAX_DELAY_S, 2.0 ** (attempt - 1))
    assert delay is not None and base <= delay <= base * 1.25


@given(st.floats(min_value=0, max_value=120), attempts, seeds)
def test_retry_after_is_honoured_exactly(after, attempt, seed):
    err = RateLimited("x", status=429, retry_after=after)
    assert retry_delay(err, attempt, 0.0, 1e9, random.Random(seed)) == after


@given(retryable, attempts, st.floats(min_value=0, max_value=100),
       st.floats(min_value=0, max_value=100), seeds)
def test_total_deadline_is_never_passed(cls, attempt, elapsed, deadline, seed):
    delay = retry_delay(cls("x"), attempt, elapsed, deadline, random.Random(seed))
    assert delay is None or elapsed + delay <= deadline


def test_first_delays_are_one_two_four_seconds():
    rng = random.Random(1)
    delays = [retry_delay(ServerError("x"), n, 0.0, 1e9, rng) for n in (1, 2, 3)]
    assert [int(d) for d in delays] == [1, 2, 4]


def test_attempt_zero_is_not_a_retry():
    assert retry_delay(ServerError("x"), 0, 0.0, 60.0) is None


def test_a_refused_connection_is_never_retried():
    err = errors_map.connection_failed(ConnectionRefusedError(111, "Connection refused"),
                                       "http://127.0.0.1:1/v1/responses")
    assert isinstance(err, ConnectionFailed)
    assert retry_delay(err, 1, 0.0, 1e9, random.Random(1)) is None


def test_a_connect_timeout_is_retried():
    err = errors_map.connect_timeout("http://h/v1/responses", 10)
    assert isinstance(err, StreamTimeout) and retry_delay(err, 1, 0.0, 1e9) is not None


def test_give_up_notes_say_why():
    wait = RateLimited("rate limited", status=429, retry_after=45)
    note = give_up_note(wait, 1, 4, 20.0, 60.0)
    assert "asked to wait 45 s" in note and "40.0 s left of the 60 s retry deadline" in note
    assert "deadline is reached (2 retries made)" in give_up_note(ServerError("x"), 2, 4, 59, 60)
    assert give_up_note(ServerError("x"), 4, 4, 1, 60) == " — gave up after 4 retries"
    assert give_up_note(ServerError("x"), 0, 0, 1, 60) == ""
    dropped = StreamDropped("the connection closed mid-response")
    assert give_up_note(AuthError("401"), 1, 4, 1, 60, dropped) == \
        " (while retrying after: the connection closed mid-response)"
    assert give_up_note(AuthError("401"), 0, 4, 1, 60) == ""
