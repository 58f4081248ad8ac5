"""Scenario `camera ID` (subscriber offers with video, as in a LiveKit room with cameras
on) and the devserver's check of every answer against pion's rule."""
from __future__ import annotations

import asyncio
import os

import pytest
from livekit.protocol import models as lkm

from .. import patches, pion_rule
from ..scenario import ScenarioError, parse
from .helpers import REPO, DevServer
from .lkclient import LKClient
from .test_signal import lk_token

patches.apply(["127.0.0.1"])

CAMERAS = os.path.join(REPO, "samples", "scenarios", "cameras.scenario")


def answer(video: str) -> str:
    return "\r\n".join([
        "v=0", "o=- 1 1 IN IP4 0.0.0.0", "s=-", "t=0 0",
        "m=audio 9 UDP/TLS/RTP/SAVPF 111", "a=mid:0", "a=rtpmap:111 opus/48000/2",
        *video.split("\n"), ""])


@pytest.mark.parametrize("video,problems", [
    ("m=video 0 UDP/TLS/RTP/SAVPF 96\na=mid:1",
     ["section 1 (video): payload type 96 has no a=rtpmap (pion: payload type not found)",
      "section 1 (video): no codec but 0 (pion: codec is not supported by remote)"]),
    ("m=video 0 UDP/TLS/RTP/SAVPF 0\na=mid:1", ["section 1 (video): no codec but 0 (pion: codec is not supported by remote)"]),
    ("m=video 0 UDP/TLS/RTP/SAVPF 96 97\na=mid:1\na=rtpmap:96 VP8/90000\na=rtpmap:97 rtx/90000\na=fmtp:97 apt=96", []),
    ("m=video 9 UDP/TLS/RTP/SAVPF 96\na=mid:1\na=rtpmap:96 VP8/90000\na=inactive", []),
    ("m=application 9 UDP/DTLS/SCTP webrtc-datachannel\na=mid:1", []),
])
def test_pion_rule(video, problems):
    assert pion_rule.violations(answer(video)) == problems


def test_camera_parses_and_needs_a_joined_participant():
    sc = parse("room abc\nat 0s join a\nat 1s camera a\n", "t.scenario")
    assert [(s.command, s.args) for s in sc.steps] == [("join", ["a"]), ("camera", ["a"])]
    with pytest.raises(ScenarioError, match="t.scenario:2: camera: 'ghost' has not joined by this line"):
        parse("room abc\nat 1s camera ghost\n", "t.scenario")
    with pytest.raises(ScenarioError, match="t.scenario:2: camera: expected camera ID"):
        parse("room abc\nat 1s camera\n", "t.scenario")


def test_cameras_reach_subscriber_offers_as_video_sections():
    srv = DevServer("--scenario", CAMERAS)
    try:
        async def go() -> None:
            c = LKClient(srv.url + "/livekit", lk_token("cameras", identity="rec"))
            try:
                await c.connect()

                def cameras() -> set:
                    return {u.identity for m in c.of("update") for u in m.participants
                            for t in u.tracks if t.source == lkm.TrackSource.CAMERA and t.type == lkm.TrackType.VIDEO} | \
                           {p.identity for p in c.of("join")[0].other_participants
                            for t in p.tracks if t.source == lkm.TrackSource.CAMERA}
                await c.wait_for(lambda: cameras() == {"alice", "bob"}, 20, "both cameras published")
                await c.wait_for(lambda: len(c.video_tracks) == 2, 20, "two video tracks in the offers")
                offers = [o.sdp for o in c.of("offer")]
                assert any("m=video" in o and "VP8/90000" in o for o in offers)
                # The scripted audio keeps flowing beside the video.
                await c.wait_for(lambda: sum(m["frames"] for m in c.audio_meta.values()) > 200, 20, "audio frames")
            finally:
                await c.leave()

        asyncio.run(asyncio.wait_for(go(), 60))
        state = srv.state()
        assert state["scenarios"][0]["errors"] == []
    finally:
        srv.stop()
