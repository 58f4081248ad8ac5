"""The devserver's ICE liveness is pion's as LiveKit v1.10.1 sets it (patches.py): a peer
that keeps sending but answers no STUN check stays connected; a peer that goes silent is
dropped once the disconnected and failed timeouts have passed. The timeouts are shrunk
here (10 s + 5 s and a 2 s keepalive in the devserver) so the test takes seconds."""
from __future__ import annotations

import asyncio
import time

import aioice
import aioice.ice
import pytest

from .. import patches

patches.apply(["127.0.0.1"])


@pytest.fixture
def short_timeouts(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(patches, "ICE_DISCONNECTED_TIMEOUT", 1.0)
    monkeypatch.setattr(patches, "ICE_FAILED_TIMEOUT", 0.5)
    monkeypatch.setattr(patches, "ICE_KEEPALIVE_INTERVAL", 0.2)
    # aioice's own rule, were it still in force, would then give up within about 4 s.
    monkeypatch.setattr(aioice.ice, "CONSENT_INTERVAL", 0.1)


async def connected_pair() -> tuple[aioice.Connection, aioice.Connection]:
    server = aioice.Connection(ice_controlling=False)
    peer = aioice.Connection(ice_controlling=True)
    await server.gather_candidates()
    await peer.gather_candidates()
    for here, there in ((server, peer), (peer, server)):
        here.remote_username, here.remote_password = there.local_username, there.local_password
        for candidate in there.local_candidates:
            await here.add_remote_candidate(candidate)
        await here.add_remote_candidate(None)
    await asyncio.wait_for(asyncio.gather(server.connect(), peer.connect()), 10)
    return server, peer


async def drain_until_closed(server: aioice.Connection, seconds: float) -> float | None:
    """Reads what reaches the server; returns when it closed (seconds from now), or None."""
    started = time.monotonic()
    deadline = started + seconds
    while time.monotonic() < deadline:
        try:
            await asyncio.wait_for(server.recv(), max(0.01, deadline - time.monotonic()))
        except asyncio.TimeoutError:
            break
        except ConnectionError:
            return time.monotonic() - started
    return None


def test_a_peer_that_sends_but_answers_no_stun_check_stays_connected(short_timeouts):  # type: ignore[no-untyped-def]
    async def go() -> float | None:
        server, peer = await connected_pair()
        peer.request_received = lambda *args, **kwargs: None  # the server's checks go unanswered

        async def send() -> None:
            while True:
                await peer.send(b"\x17data")  # not STUN: a DTLS application-data record's first byte
                await asyncio.sleep(0.05)
        sender = asyncio.create_task(send())
        try:
            return await drain_until_closed(server, 5.0)  # over 3 times the time to failure
        finally:
            sender.cancel()
            await server.close()
            await peer.close()
    assert asyncio.run(go()) is None


def test_a_silent_peer_is_dropped_after_the_disconnected_and_failed_timeouts(short_timeouts):  # type: ignore[no-untyped-def]
    async def go() -> float | None:
        server, peer = await connected_pair()
        # Silence: the peer answers nothing and sends nothing from now on.
        peer.request_received = lambda *args, **kwargs: None
        task = peer._query_consent_task
        peer._query_consent_task = None
        if task is not None:
            task.cancel()
        try:
            return await drain_until_closed(server, 6.0)
        finally:
            await server.close()
            await peer.close()
    closed_after = asyncio.run(go())
    assert closed_after is not None, "the server kept a silent peer"
    assert 1.5 <= closed_after <= 3.0, closed_after  # the time to failure, one keepalive tick, slack for a busy machine
