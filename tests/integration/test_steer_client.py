"""The model client steering a running response (protocol.steer) against the simulator
process: accepted (a rewind, then the correction's reply), refused by a server without it
(the reply goes on), and not offered over HTTP."""

from __future__ import annotations

import pytest
from support.clients import MODEL, turn

from spark_pair.protocol.client import ClientOptions, ModelClient
from spark_pair.protocol.events import Completed, Rewound, TextDelta
from spark_pair.protocol.steer import Steered, SteerState

pytestmark = pytest.mark.timeout(60)
FIXED = "the corrected reply"


def client(sim, transport: str = "ws") -> ModelClient:
    return ModelClient(ClientOptions(base_url=sim.base_url, api_key="test-key-123", model=MODEL,
                                     transport=transport))


async def steered_run(c: ModelClient, correction: str) -> tuple[list, bool]:
    events, sent = [], None
    async for event in c.stream(turn("write a lot")):
        events.append(event)
        if sent is None and isinstance(event, TextDelta):
            sent = await c.steer(correction)
    return events, bool(sent)


def text_after_rewind(events: list) -> str:
    at = max((i for i, e in enumerate(events) if isinstance(e, Rewound)), default=-1)
    return "".join(e.text for e in events[at + 1:] if isinstance(e, TextDelta))


async def test_an_accepted_steer_rewinds_and_streams_the_corrected_reply(sim):
    sim.configure(tps=400, tokens=3000, replies=[{"match": "FIX", "text": FIXED}])
    async with client(sim) as c:
        events, sent = await steered_run(c, "FIX it")
    assert sent
    rewinds = [e for e in events if isinstance(e, Rewound)]
    assert len(rewinds) == 1 and rewinds[0].keep == 0
    at = events.index(rewinds[0])
    assert events[at + 1] == Steered(SteerState.ACCEPTED)
    assert text_after_rewind(events) == FIXED
    assert isinstance(events[-1], Completed)
    final = events[-1]
    # the conversation goes on from the corrected reply, on the same socket
    log = [e for e in sim.requests() if (e["body"] or {}).get("type") != "response.steer"]
    assert final.response_id == log[-1]["response_id"]
    assert log[-1]["body"]["previous_response_id"] == log[-2]["response_id"]


async def test_a_server_without_steering_refuses_and_the_reply_goes_on(sim):
    sim.configure(tps=2000, tokens=600, steer=False)
    async with client(sim) as c:
        events, sent = await steered_run(c, "FIX it")
    assert sent
    answers = [e for e in events if isinstance(e, Steered)]
    assert [a.state for a in answers] == [SteerState.REFUSED]
    assert "response.steer" in answers[0].detail
    assert not [e for e in events if isinstance(e, Rewound)]
    assert isinstance(events[-1], Completed)
    assert len("".join(e.text for e in events if isinstance(e, TextDelta))) == 600 * 4


async def test_no_steer_over_http_or_with_nothing_running(sim):
    sim.configure(tps=2000, tokens=200)
    async with client(sim, "responses") as c:
        events, sent = await steered_run(c, "FIX it")
    assert not sent and isinstance(events[-1], Completed)
    async with client(sim) as c:
        assert not await c.steer("FIX it")  # no response in flight
