"""The forwarding path: header rewrite (pure), RED, publisher answers, and both media modes end to end."""
from __future__ import annotations

import asyncio
from types import SimpleNamespace

from .. import patches
from ..forward import (DownTrack, Forwarder, RtpMunger, SourcePacket, Unwrapper, VideoDownTrack, red_blocks,
                       downtracks_json, red_encode, red_primary, sender_report_timestamps)
from ..sdp import AudioPublishPrefs, configure_publisher_answer, publisher_red_mids
from .helpers import DevServer
from .lkclient import LKClient, dominant_frequency, rms

patches.apply(["127.0.0.1"])


# MARK: - RED (RFC 2198)

def test_red_round_trip_and_primary():
    payload = red_encode(b"\x78primary", [(1920, b"\x78older"), (960, b"\x78old")])
    assert red_blocks(payload) == [(111, 1920, b"\x78older"), (111, 960, b"\x78old"), (111, 0, b"\x78primary")]
    assert red_primary(payload) == b"\x78primary"
    assert red_primary(red_encode(b"\x78only", [])) == b"\x78only"  # no redundancy: one 1-byte header


def test_red_malformed_is_none():
    good = red_encode(b"\x78primary", [(960, b"\x78old")])
    assert red_primary(good[:3]) is None            # header cut short
    assert red_primary(good[:6]) is None            # redundant block longer than what is left
    assert red_primary(b"") is None
    assert red_primary(bytes([0x80 | 111, 0, 0, 0])) is None  # no final header


# MARK: - the munger (LiveKit's RTPMunger decisions)

def run_packets(m: RtpMunger, seqs, ts_step=960, t0=0.0):  # type: ignore[no-untyped-def]
    return [m.forward(s, s * ts_step, t0 + i * 0.02) for i, s in enumerate(seqs)]


def test_first_packet_starts_at_the_subscribers_own_numbers_and_offsets_stay():
    m = RtpMunger(first_sequence=1000, first_timestamp=5000)
    out = run_packets(m, range(50, 55))
    assert [o[0] for o in out] == [1000, 1001, 1002, 1003, 1004]
    assert [o[1] for o in out] == [5000 + 960 * i for i in range(5)]
    # DTX: the publisher's timestamp jumps 400 ms with the next sequence number: passed on as is.
    assert m.forward(55, 55 * 960 + 19200, 1.0) == (1005, 5000 + 5 * 960 + 19200)


def test_a_dropped_run_leaves_no_sequence_hole_and_timestamps_follow_the_wall_clock():
    m = RtpMunger(first_sequence=10, first_timestamp=0)
    run_packets(m, range(0, 10))                     # out 10..19, last sent at t=0.18
    for s in range(10, 110):                         # 2 s muted: the server withholds them
        m.drop(s)
    sn, ts = m.forward(110, 110 * 960, 2.18)
    assert sn == 20                                  # contiguous
    assert ts == 9 * 960 + 2 * 48000                 # moved on by the 2 s that passed
    assert m.forward(111, 111 * 960, 2.2) == (21, ts + 960)


def test_publisher_loss_stays_loss_and_late_packets_keep_their_run():
    m = RtpMunger(first_sequence=0, first_timestamp=0)
    run_packets(m, [0, 1, 2, 4])                     # 3 lost upstream: a hole downstream too
    assert m.last_out_sn == 4
    assert m.forward(3, 3 * 960, 0.1) == (3, 2880)   # arrives late: same offset
    assert m.forward(3, 3 * 960, 0.1) is None        # duplicate
    m.drop(5)
    assert m.forward(5, 5 * 960, 0.2) is None        # late copy of a withheld packet stays withheld


def test_sequence_numbers_wrap():
    u = Unwrapper(16)
    assert [u.extend(s) for s in (65534, 65535, 0, 1, 65535)] == [65534, 65535, 65536, 65537, 65535]
    m = RtpMunger(first_sequence=65534, first_timestamp=0xFFFFFF00)
    out = run_packets(m, range(100, 104))
    assert [o[0] for o in out] == [65534, 65535, 0, 1]
    assert out[1][1] == (0xFFFFFF00 + 960) & 0xFFFFFFFF and out[2][1] == (0xFFFFFF00 + 1920) & 0xFFFFFFFF


# MARK: - one subscriber: codec choice

class FakeSender:
    def __init__(self, codecs: list[str], ssrc: int = 1234) -> None:
        pts = {"audio/red": 63, "audio/opus": 111, "video/VP8": 96, "video/rtx": 97}
        self._lk_parameters = SimpleNamespace(codecs=[SimpleNamespace(mimeType=m, payloadType=pts[m]) for m in codecs])
        self.transport = object()
        self._ssrc = ssrc
        self.sent: list[tuple] = []

    async def _lk_send_forwarded(self, sequence, timestamp, payload_type, payload, marker):  # type: ignore[no-untyped-def]
        self.sent.append((sequence, timestamp, payload_type, payload, marker))


def test_red_goes_to_red_subscribers_and_the_primary_to_the_others():
    red_sub, opus_sub, paused = FakeSender(["audio/red", "audio/opus"]), FakeSender(["audio/opus"]), FakeSender(["audio/opus"])
    f = Forwarder()
    downs = [DownTrack(s, {}) for s in (red_sub, opus_sub, paused)]
    for d in downs:
        f.add(d)
    downs[2].paused = True
    red = red_encode(b"\x78new", [(960, b"\x78old")])

    async def go() -> None:
        await f.on_packet(SourcePacket(sequence=7, timestamp=960 * 7, marker=True, payload=red, red=True))
        await f.on_packet(SourcePacket(sequence=8, timestamp=960 * 8, marker=False, payload=b"\x01", red=False))
    asyncio.run(go())
    assert [(p[2], p[3], p[4]) for p in red_sub.sent] == [(63, red, True), (111, b"\x01", False)]
    assert [(p[2], p[3]) for p in opus_sub.sent] == [(111, b"\x78new"), (111, b"\x01")]
    assert paused.sent == []
    assert downs[0].codec == "audio/red" and downs[1].codec == "audio/opus"
    assert (downs[0].sent_red, downs[1].sent_opus) == (1, 2)
    # Each subscriber has its own numbering, each contiguous.
    for s in (red_sub, opus_sub):
        assert (s.sent[1][0] - s.sent[0][0]) & 0xFFFF == 1 and s.sent[1][1] - s.sent[0][1] == 960


def test_a_finished_subscription_keeps_the_codec_it_was_forwarded_with():
    # The sender's transceiver is reused after an unsubscribe and renegotiated with the
    # offer's codec list (RED first); the finished stream was Opus and stays reported so
    # (an SDK record probe run read "audio/red" for the bot's finished Opus stream).
    sub = FakeSender(["audio/opus"])
    f = Forwarder()
    d = DownTrack(sub, {})
    f.add(d)
    f.remove(sub)
    sub._lk_parameters = FakeSender(["audio/red", "audio/opus"])._lk_parameters
    assert d.codec == "audio/opus"
    assert [x["codec"] for x in downtracks_json(f)] == ["audio/opus"]


def test_muted_publisher_is_withheld_and_sender_reports_use_the_subscribers_timestamps():
    sub = FakeSender(["audio/opus"])
    f = Forwarder()
    d = DownTrack(sub, {})
    f.add(d)

    async def go() -> None:
        await f.on_packet(SourcePacket(sequence=1, timestamp=1000, marker=False, payload=b"\x01"))
        f.muted = True
        await f.on_packet(SourcePacket(sequence=2, timestamp=1960, marker=False, payload=b"\x02"))
    asyncio.run(go())
    assert [p[3] for p in sub.sent] == [b"\x01"]
    f.on_sender_report(ntp=0xAAAA_0000_0000_0000, rtp=1000)
    at = f.last_sr[2]
    ntp, rtp = sender_report_timestamps(d, f, at + 0.5)
    # Passed through: the publisher's own NTP clock, half a second on.
    assert ntp == 0xAAAA_0000_8000_0000 and rtp == (sub.sent[0][1] + 24000) & 0xFFFFFFFF



def test_no_sender_report_before_the_publisher_sent_one():
    sub = FakeSender(["audio/opus"])
    f = Forwarder()
    d = DownTrack(sub, {})
    f.add(d)
    asyncio.run(f.on_packet(SourcePacket(sequence=1, timestamp=1000, marker=False, payload=b"\x01")))
    assert sender_report_timestamps(d, f, 1.0) is None


def test_a_scripted_publisher_that_fell_behind_reports_its_capture_clock():
    """The server's loop is blocked for 1 s (a loaded machine): the frame due then is sent
    late and the ones after it jump ahead to the wall clock. A report written as that late
    frame goes out must agree with the frames that follow it, not pair the late frame's
    timestamp with the time it was sent (a report 1 s off, which moved a recording back)."""
    import time

    from ..media import ScriptedAudioTrack
    from ..scripted import _publish

    sub = FakeSender(["audio/opus"])
    f = Forwarder()
    d = DownTrack(sub, {})
    f.add(d)
    audio = ScriptedAudioTrack()
    reports: list[tuple[int, int]] = []   # (report timestamp, index of the packet sent as it was written)
    blocked = {"at": None}

    async def record(sequence, timestamp, payload_type, payload, marker):  # type: ignore[no-untyped-def]
        sub.sent.append((sequence, timestamp, payload_type, payload, marker))
        if blocked["at"] is not None and len(reports) < 3:
            stamps = sender_report_timestamps(d, f, time.monotonic())
            assert stamps is not None
            reports.append((stamps[1], len(sub.sent) - 1))
    sub._lk_send_forwarded = record

    async def go() -> None:
        task = asyncio.ensure_future(_publish(audio, SimpleNamespace(forwarder=f)))
        await asyncio.sleep(0.3)
        blocked["at"] = len(sub.sent)
        time.sleep(1.0)  # noqa: ASYNC251 — the point: the loop stops
        await asyncio.sleep(0.2)
        audio.stop()
        task.cancel()
    asyncio.run(go())
    def step(a: int, b: int) -> int:
        return ((b - a + 0x80000000) & 0xFFFFFFFF) - 0x80000000
    late, index = reports[0]
    # The first frame after the jump carries the wall clock's timestamp, as the report does.
    jump = next(i for i in range(index + 1, len(sub.sent)) if step(sub.sent[i - 1][1], sub.sent[i][1]) > 960)
    assert step(sub.sent[jump - 1][1], sub.sent[jump][1]) > 0.8 * 48000
    assert abs(step(late, sub.sent[jump][1])) < 0.06 * 48000


# MARK: - publisher answers (LiveKit's RED-first and usedtx=1)

OFFER = "\r\n".join([
    "v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "t=0 0",
    "m=audio 9 UDP/TLS/RTP/SAVPF 111 63 0", "a=mid:0", "a=msid:stream TR_cid",
    "a=rtpmap:111 opus/48000/2", "a=fmtp:111 minptime=10;useinbandfec=1",
    "a=rtpmap:63 red/48000/2", "a=fmtp:63 111/111", "a=rtpmap:0 PCMU/8000", ""])


def test_publisher_answer_puts_red_first_and_turns_dtx_on():
    prefs = {"TR_cid": AudioPublishPrefs()}
    answer = configure_publisher_answer(OFFER, OFFER, prefs)
    assert "m=audio 9 UDP/TLS/RTP/SAVPF 63 111 0" in answer
    assert "a=fmtp:111 minptime=10;useinbandfec=1;usedtx=1" in answer
    assert publisher_red_mids(OFFER, prefs) == {"0"}


def test_publisher_answer_honours_disable_red_and_disable_dtx():
    prefs = {"TR_cid": AudioPublishPrefs(dtx=False, red=False, stereo=True)}
    answer = configure_publisher_answer(OFFER, OFFER, prefs)
    assert "m=audio 9 UDP/TLS/RTP/SAVPF 111 63 0" in answer
    assert "a=fmtp:111 minptime=10;useinbandfec=1;stereo=1" in answer and "usedtx" not in answer
    assert publisher_red_mids(OFFER, prefs) == set()


# MARK: - both media modes carry a scripted participant's audio

def scripted_tone_reaches_a_client(mode: str) -> dict:
    srv = DevServer("--media", mode, "--seed-room", "fwd")
    try:
        r = srv.request("POST", "/_dev/rooms/fwd/scenario", raw=b"at 0s join alice\nat 0s tone alice 440Hz 30s\n")
        assert r.status == 200, r
        join = srv.request("POST", "/api/room/guest-join", {"roomName": "fwd", "guestName": "G"}).json()

        async def go() -> dict:
            c = LKClient(join["livekitHost"], join["token"])
            try:
                first = await c.connect()
                track = first.join.other_participants[0].tracks[0].sid
                offer = (await c.wait_for(lambda: c.of("offer"), 10, "offer"))[0]
                await c.wait_for(lambda: len(c.audio.get(track, [])) > 100, 20, "2 s of audio")
                x = c.samples(track)[-48000:]
                return {"frequency": dominant_frequency(x), "rms": rms(x), "sdp": offer.sdp}
            finally:
                await c.close()
        return asyncio.run(asyncio.wait_for(go(), 60))
    finally:
        srv.stop()


def test_forward_and_reencode_modes_both_carry_scripted_audio():
    for mode in ("forward", "reencode"):
        got = scripted_tone_reaches_a_client(mode)
        assert abs(got["frequency"] - 440) < 3 and 0.17 < got["rms"] < 0.25, (mode, got["frequency"], got["rms"])
        # A scripted track is plain Opus: no RED offered for it in either mode.
        assert "red/48000" not in got["sdp"] and "a=rtpmap:111 opus/48000/2" in got["sdp"], mode


# MARK: - video (a scripted camera's VP8)

def test_video_starts_at_a_key_frame_stops_while_disabled_and_resumes_at_the_next_key_frame():
    sub, off = FakeSender(["video/VP8", "video/rtx"]), FakeSender(["video/VP8"])
    f = Forwarder()
    d, never = VideoDownTrack(sub, {}), VideoDownTrack(off, {})
    f.add(d)
    f.add(never)
    never.paused = True     # disabled before the first packet: nothing, ever

    # Frames of 3 packets every 1/15 s (6000 ticks at 90 kHz); a key frame every 4th frame.
    def frame(n: int) -> list[SourcePacket]:
        return [SourcePacket(sequence=3 * n + i, timestamp=6000 * n, marker=i == 2, payload=bytes([n, i]),
                             keyframe=n % 4 == 0 and i == 0) for i in range(3)]

    async def go() -> None:
        for n in range(2, 14):              # joins mid-stream: frames 2, 3 are skipped
            if n == 6:
                d.paused = True             # UpdateTrackSettings{disabled: true}
            if n == 9:
                d.paused = False            # enabled again: waits for frame 12, the next key frame
            for p in frame(n):
                await f.on_packet(p)
    asyncio.run(go())
    assert [p[3][0] for p in sub.sent] == [4, 4, 4, 5, 5, 5, 12, 12, 12, 13, 13, 13]
    assert {p[2] for p in sub.sent} == {96} and [p[4] for p in sub.sent][:3] == [False, False, True]
    # Sequence numbers follow on without a hole; the timestamp moves on (here by the
    # minimum 10 ms, the packets came faster than real time), never backwards.
    seqs = [p[0] for p in sub.sent]
    assert all((b - a) & 0xFFFF == 1 for a, b in zip(seqs, seqs[1:]))
    assert sub.sent[6][1] - sub.sent[5][1] == 900 and sub.sent[9][1] - sub.sent[6][1] == 6000
    assert (d.codec, d.sent_video, d.video_bytes) == ("video/vp8", 12, 24)
    assert off.sent == [] and never.sent_video == 0
