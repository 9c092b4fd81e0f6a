"""The retry policy is a pure function: property tests."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from spark_pair.errors import (AuthError, BadRequest, EndpointError, ModelNotFound, RateLimited,
                               ServerError, StreamDropped, StreamTimeout)
from spark_pair.protocol.retry import MAX_DELAY_S, retry_delay

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
