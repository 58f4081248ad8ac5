"""--scripted-precode (media.CodedClip): a clip coded once when its scenario loads sends
the same frames, kinds, markers and levels as one coded live, its packets decode to the
clip, and a frame the cache does not hold is coded live."""
from __future__ import annotations

import asyncio

import av
import numpy as np

from ..media import CodedClip, ScriptedAudioTrack, ScriptedEncoder, is_silent, rms_level, silent_payload, tone_clip

FRAME = 960


def speechlike(seconds: float) -> np.ndarray:
    """A tone in bursts with 300 ms pauses (DTX inside the clip), not a multiple of 20 ms."""
    clip = tone_clip(220, seconds, 0.3)
    for k in range(int(seconds / 0.6)):
        a = int((k * 0.6 + 0.3) * 48000)
        clip[a:a + int(0.3 * 48000)] = 0
    return clip


def decode(payloads: list[bytes]) -> np.ndarray:
    codec = av.CodecContext.create("libopus", "r")
    codec.sample_rate, codec.layout = 48000, "stereo"
    out = []
    for p in payloads:
        for f in codec.decode(av.Packet(p)):
            out.append(f.to_ndarray().reshape(-1, 2)[:, 0] if f.format.is_packed else f.to_ndarray()[0])
    return np.concatenate(out).astype(np.float64)


def test_a_coded_clip_holds_every_frame_its_silence_and_level():
    clip = speechlike(1.01)
    coded = CodedClip(clip)
    frames = -(-len(clip) // FRAME)
    assert len(coded.payloads) == frames and all(coded.payloads)
    padded = np.zeros((frames * FRAME, 2), np.int16)
    padded[:len(clip)] = clip
    for k in range(frames):
        samples = padded[k * FRAME:(k + 1) * FRAME]
        assert coded.silent[k] == is_silent(samples)
        assert coded.level[k] == rms_level(samples)
    x = decode([p for p in coded.payloads if p])
    ref = clip[:, 0].astype(np.float64)
    # libopus' 312-sample look-ahead: the decoded clip sits that much later.
    lag = max(range(0, 1000), key=lambda d: float(np.dot(x[d:d + 24000], ref[:24000])))
    m = min(len(x) - lag, len(ref))
    assert np.corrcoef(x[lag:lag + m], ref[:m])[0, 1] > 0.95


def run_track(clips: list[tuple[np.ndarray, CodedClip | None]], seconds: float, idle: str = "dtx",
              precoded_silence: bool = False) -> list[tuple]:
    async def go() -> list[tuple]:
        track = ScriptedAudioTrack()
        track.set_idle(idle)
        track.precoded_silence = precoded_silence
        for clip, coded in clips:
            track.play(clip, coded)
        encoder = ScriptedEncoder()
        out = []
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        while loop.time() < end:
            try:
                f = await asyncio.wait_for(track.recv(), max(0.01, end - loop.time()))
            except asyncio.TimeoutError:
                break
            if track.last_kind == "dtx":
                packet = encoder.dtx_packet(f)
            elif track.last_payload is not None:
                packet = encoder.precoded(f, track.last_payload)
            else:
                packet = encoder.encode(f)[0]
            out.append((f.pts // FRAME, track.last_kind, track.last_marker, round(track.level, 9),
                        track.last_payload is not None, packet[1] - encoder.timestamp_base & 0xFFFFFFFF, packet[2]))
        track.stop()
        return out
    return asyncio.run(go())


def test_a_precoded_track_sends_what_a_live_one_does():
    clip = speechlike(0.93)
    live, pre = [run_track([(clip, c)], 1.6) for c in (None, CodedClip(clip))]
    n = min(len(live), len(pre))
    assert n > 40
    # Same frames (pts), kinds, markers, levels and timestamps; on a loaded machine a run
    # may catch up (skip pts) where the other did not, so compare the common prefix.
    same = 0
    for a, b in zip(live[:n], pre[:n]):
        if a[0] != b[0]:
            break
        assert (a[1], a[2], a[3], a[5]) == (b[1], b[2], b[3], b[5])
        same += 1
    assert same > 30
    clip_frames = -(-len(clip) // FRAME)
    assert not any(x[4] for x in live)
    # Every coded frame of the clip came from the cache; the quiet after it is coded live.
    assert all(x[4] for x in pre if x[0] < clip_frames and x[1] == "encode")
    assert not any(x[4] for x in pre if x[0] >= clip_frames)


def test_a_clip_queued_mid_frame_is_coded_live():
    first = tone_clip(300, 0.21, 0.3)     # 10 080 samples: the second clip starts mid-frame
    second = tone_clip(500, 0.2, 0.3)
    out = run_track([(first, CodedClip(first)), (second, CodedClip(second))], 0.6)
    by_pts = {x[0]: x[4] for x in out}
    assert all(by_pts[k] for k in range(10) if k in by_pts)      # the first clip's whole frames
    assert not any(by_pts.get(k) for k in range(10, 21))          # the shared frame and the second clip


def test_silence_with_no_clip_is_one_stored_packet():
    clip = tone_clip(300, 0.2, 0.3)
    for idle in ("dtx", "silence"):
        out = run_track([(clip, CodedClip(clip))], 0.8, idle, precoded_silence=True)
        quiet = [x for x in out if x[0] >= 10 and x[1] == "encode"]
        assert quiet and all(x[6] == silent_payload() for x in quiet), idle
        assert all(x[3] == 0.0 for x in quiet)
    assert len(silent_payload()) <= 8   # a few bytes: CELT's silence flag
