"""Pure pieces: JWT, SIDs, durations, fault knobs, body binding, SDP edits."""
from __future__ import annotations

import random

import pytest

from .. import jwt_hs256
from ..binding import BindError, bind, parse_json_body
from ..durations import parse_duration
from ..faults import FaultConfig, FaultShaper
from ..sdp import edit_description
from ..sids import check_sid, new_sid


def test_jwt_round_trip_and_failures():
    token = jwt_hs256.encode({"sub": "x", "exp": 1000, "nbf": 10}, "k")
    assert jwt_hs256.decode(token, "k", now=500)["sub"] == "x"
    for now, reason in ((1001, "expired"), (5, "not_yet_valid")):
        with pytest.raises(jwt_hs256.JWTError) as err:
            jwt_hs256.decode(token, "k", now=now)
        assert err.value.reason == reason
    assert jwt_hs256.decode(token, "k", now=1050, leeway=60)["sub"] == "x"
    with pytest.raises(jwt_hs256.JWTError) as err:
        jwt_hs256.decode(token, "other", now=500)
    assert err.value.reason == "signature"
    with pytest.raises(jwt_hs256.JWTError) as err:
        jwt_hs256.decode(jwt_hs256.encode({"sub": "x"}, "k"), "k", now=0, require_exp=True)
    assert err.value.reason == "missing_exp"


def test_jwt_garbage_never_raises_anything_else():
    rng = random.Random(1234)
    alphabet = "abcXYZ012._-=+/{}\"\x00é"
    for _ in range(2000):
        junk = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        try:
            jwt_hs256.decode(junk, "k", now=0)
        except jwt_hs256.JWTError:
            pass


def test_sids():
    for prefix in ("RM", "PA", "TR", "ND"):
        assert check_sid(new_sid(prefix), prefix).startswith(prefix + "_")
    for bad in ("PA_", "XX_abcdefghijkl", "PA_abc", 5, "TR_abcdefghijkl"):
        with pytest.raises(ValueError):
            check_sid(bad, "PA")  # type: ignore[arg-type]


@pytest.mark.parametrize("text,seconds", [("24h", 86400), ("90s", 90), ("1h30m", 5400), ("250ms", 0.25),
                                          ("5", 5), ("0.5s", 0.5), ("7d", 604800)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "5x", "h", "-3", "1h 30m"])
def test_bad_durations(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_fault_knobs_and_seeded_shaper():
    cfg = FaultConfig()
    cfg.update({"loss": "25%", "duplicate": "0.1", "seed": "3"})
    assert (cfg.loss, cfg.duplicate, cfg.seed) == (0.25, 0.1, 3)
    with pytest.raises(ValueError):
        cfg.update({"loss": "abc"})
    with pytest.raises(ValueError):
        cfg.update({"jitter": "10s"})
    shaper = FaultShaper(cfg)
    sent: list[bytes] = []

    async def send(p: bytes) -> None:
        sent.append(p)

    import asyncio

    async def go() -> None:
        for i in range(2000):
            shaper.submit(bytes([i % 256]), send)
        await asyncio.sleep(0.05)

    asyncio.run(go())
    st = shaper.stats
    assert 0.2 < st.lost / st.submitted < 0.3 and st.duplicated > 100
    assert len(sent) == st.submitted - st.lost + st.duplicated


def test_binding_is_case_insensitive_and_typed():
    assert bind({"EMAIL": "a", "password": "b"}, {"email": str, "password": str}) == {"email": "a", "password": "b"}
    assert bind({"email": None}, {"email": str}) == {}
    for bad in ({"email": 5}, [1], "x", {"n": 1.0}):
        with pytest.raises(BindError):
            bind(bad, {"email": str, "n": int})
    with pytest.raises(BindError):
        parse_json_body("text/plain", b"{}")
    assert parse_json_body("application/json; charset=utf-8", b'{"a":1}') == {"a": 1}


def test_sdp_edit_adds_msid_and_strips_what_livekit_does_not_send():
    sdp = "\r\n".join([
        "v=0", "o=- 1 1 IN IP4 0.0.0.0", "s=-", "t=0 0", "a=group:BUNDLE 0",
        "m=audio 40000 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 127.0.0.1", "a=sendonly", "a=mid:0",
        "a=extmap:1 urn:ietf:params:rtp-hdrext:sdes:mid", "a=extmap:2 urn:ietf:params:rtp-hdrext:ssrc-audio-level",
        "a=ssrc:42 cname:whatever", "a=rtpmap:111 opus/48000/2",
        "a=candidate:1 1 udp 2130706431 127.0.0.1 40000 typ host", "a=end-of-candidates",
        "a=fingerprint:sha-256 AA", "a=fingerprint:sha-512 BB", ""])
    e = edit_description(sdp, {42: ("PA_x|TR_y", "TR_y")})
    assert "m=audio 9 UDP" in e.sdp and "c=IN IP4 0.0.0.0" in e.sdp
    assert "a=ssrc:42 cname:PA_x|TR_y\r\na=ssrc:42 msid:PA_x|TR_y TR_y" in e.sdp
    assert "extmap" not in e.sdp and "a=candidate" not in e.sdp and "sha-512" not in e.sdp
    assert e.candidates == ["candidate:1 1 udp 2130706431 127.0.0.1 40000 typ host"] and e.first_mid == "0"


def test_a_scripted_track_that_falls_behind_logs_its_pts_jump_and_keeps_the_clip_whole():
    """Behind the wall clock by more than 200 ms, the track jumps its pts (the room hears
    a pause) but plays on from where the clip was: the log says where and how long, so a
    benchmark can compare a recording with what the room really carried."""
    import asyncio

    import numpy as np

    from ..media import FRAME_SAMPLES, ScriptedAudioTrack

    async def go() -> None:
        mic = ScriptedAudioTrack()
        clip = np.arange(FRAME_SAMPLES * 10 * 2, dtype=np.int16).reshape(-1, 2) % 1000
        mic.play(clip)
        first = await mic.recv()
        second = await mic.recv()
        assert (first.pts, second.pts) == (0, FRAME_SAMPLES)
        mic._start -= 0.5  # the loop stalled for half a second
        third = await mic.recv()
        jumped = third.pts // FRAME_SAMPLES - 2
        assert jumped >= 24 and mic.catch_ups == [(2 * FRAME_SAMPLES, jumped * FRAME_SAMPLES)]
        # the third frame carries the clip's third 20 ms, not a later stretch
        assert np.array_equal(third.to_ndarray().reshape(-1, 2), clip[2 * FRAME_SAMPLES:3 * FRAME_SAMPLES])
        assert mic.clip_samples_played == 3 * FRAME_SAMPLES
        mic.stop()

    asyncio.run(asyncio.wait_for(go(), 10))
