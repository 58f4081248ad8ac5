"""Scenario `camera ID` (subscriber offers with video, as in a LiveKit room with cameras
on) and the devserver's check of every answer against pion's rule."""
from __future__ import annotations

import asyncio
import os

import pytest
from livekit.protocol import models as lkm
from livekit.protocol import rtc as lkr

from .. import patches, pion_rule
from ..config import ServerConfig
from ..scenario import ScenarioError, parse
from ..scripted import ScriptedParticipant
from ..sfu import SFU
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


def test_muting_a_scripted_camera_leaves_its_microphone_alone():
    async def go() -> None:
        sfu = SFU(ServerConfig())
        room = sfu.create_room("r")
        alice = ScriptedParticipant(room, "alice", "Alice")
        alice.join()
        alice.camera_on()
        camera = next(t for t in alice.tracks.values() if t.source == lkm.TrackSource.CAMERA)
        try:
            assert sfu.server_mute("r", "alice", ("CAMERA",))
            assert camera.muted and not alice.track.muted and not alice.audio.muted
            assert sfu.server_mute("r", "alice", ("AUDIO",))
            assert alice.track.muted and alice.audio.muted
        finally:
            await room.close(lkm.DisconnectReason.ROOM_DELETED)
    asyncio.run(go())


def video_sections(sdp: str) -> list[str]:
    sections = ("\n" + sdp.replace("\r\n", "\n")).split("\nm=")[1:]
    return ["m=" + s for s in sections if s.startswith("video ")]


@pytest.mark.parametrize("media", ["forward", "reencode"])
def test_cameras_reach_subscriber_offers_as_video_sections(media):
    # Audio is forwarded packet by packet under `--media forward`; cameras are relayed
    # (encoded per subscriber) in both modes, and must reach the offers either way.
    srv = DevServer("--scenario", CAMERAS, "--media", media)
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
                last = c.of("offer")[-1].sdp
                videos = video_sections(last)
                assert len(videos) == 2
                for section in videos:
                    codecs = sorted({line.split(" ", 1)[1].split("/")[0]
                                     for line in section.split("\n") if line.startswith("a=rtpmap:")})
                    assert codecs == ["VP8", "rtx"], section
                # Frames really arrive from both cameras (5 fps each).
                await c.wait_for(lambda: len(c.video_frames) == 2 and min(c.video_frames.values()) >= 3, 20,
                                 "frames from both cameras")
                # The scripted audio keeps flowing beside the video.
                await c.wait_for(lambda: sum(m["frames"] for m in c.audio_meta.values()) > 200, 20, "audio frames")
            finally:
                await c.leave()

        asyncio.run(asyncio.wait_for(go(), 60))
        state = srv.state()
        assert state["scenarios"][0]["errors"] == []
    finally:
        srv.stop()


def camera_subscription(srv: DevServer, room: str, identity: str) -> dict:
    for r in srv.state()["rooms"]:
        if r["name"] != room:
            continue
        for p in r["participants"]:
            if p["identity"] == identity:
                return next(s for s in p["subscriptions"] if s["codec"].startswith("video/"))
    raise AssertionError(f"{identity} has no video subscription in {room}")


def test_a_disabled_camera_is_not_forwarded_until_enabled_again(tmp_path):
    # LiveKit: UpdateTrackSettings{disabled} mutes the subscriber's down track, whose
    # forwarder then drops every packet; enabled again, it starts at a key frame.
    scenario = tmp_path / "vidoff.scenario"
    scenario.write_text("room vidoff public\nat 0s join alice\nat 0s camera alice\nat 0s tone alice 440Hz 120s\n")
    srv = DevServer("--scenario", str(scenario))
    try:
        async def go() -> None:
            c = LKClient(srv.url + "/livekit", lk_token("vidoff", identity="rec"), answer_offers=False)
            try:
                first = await c.connect()
                camera = next(t.sid for p in first.join.other_participants for t in p.tracks
                              if t.type == lkm.TrackType.VIDEO)
                # Disabled before the first answer (as the bot does right after `join`).
                await c.send(lkr.SignalRequest(track_setting=lkr.UpdateTrackSettings(track_sids=[camera], disabled=True)))
                c.answer_offers = True
                offers = await c.wait_for(lambda: c.of("offer"), 10, "the first offer")
                await c._answer(offers[-1])
                await c.wait_for(lambda: sum(m["frames"] for m in c.audio_meta.values()) > 300, 30, "6 s of audio")
                sub = camera_subscription(srv, "vidoff", "rec")
                assert (sub["paused"], sub["payloadBytesSent"], sub["videoSent"]) == (True, 0, 0)
                assert c.video_frames.get(camera, 0) == 0

                await c.send(lkr.SignalRequest(track_setting=lkr.UpdateTrackSettings(track_sids=[camera], disabled=False)))
                await c.wait_for(lambda: c.video_frames.get(camera, 0) >= 5, 30, "frames once enabled")

                await c.send(lkr.SignalRequest(track_setting=lkr.UpdateTrackSettings(track_sids=[camera], disabled=True)))
                await c.wait_for(lambda: camera_subscription(srv, "vidoff", "rec")["paused"], 10, "paused again")
                before = camera_subscription(srv, "vidoff", "rec")["payloadBytesSent"]
                assert before > 0
                frames = sum(m["frames"] for m in c.audio_meta.values())
                await c.wait_for(lambda: sum(m["frames"] for m in c.audio_meta.values()) > frames + 100, 20, "2 s more audio")
                assert camera_subscription(srv, "vidoff", "rec")["payloadBytesSent"] == before
            finally:
                await c.leave()

        asyncio.run(asyncio.wait_for(go(), 120))
    finally:
        srv.stop()
