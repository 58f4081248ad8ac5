"""Scripted participants in DTX send what a libwebrtc publisher sends (media.DtxCadence):
the cadence and shapes as pure values, then a scripted track and its encoder run for a
few seconds on the event loop (no network)."""
from __future__ import annotations

import asyncio

import numpy as np
import pytest

from ..media import (DEFAULT_TOC, MAX_CONSECUTIVE_DTX, NB_SPEECH_FRAMES_BEFORE_DTX, DtxCadence, ScriptedAudioTrack,
                     ScriptedEncoder, is_silent, tone_clip)

FRAME = 960


def run(cadence: DtxCadence, silent: list[bool]) -> list[tuple[str, bool]]:
    return [cadence.step(s) for s in silent]


def test_a_long_pause_is_hangover_then_a_packet_per_400_ms():
    steps = run(DtxCadence(), [False] * 5 + [True] * 200)
    kinds = [k for k, _ in steps]
    # 200 ms of coded frames after the speech stops (libopus' NB_SPEECH_FRAMES_BEFORE_DTX).
    assert kinds[5:5 + NB_SPEECH_FRAMES_BEFORE_DTX] == ["encode"] * NB_SPEECH_FRAMES_BEFORE_DTX
    # Then the first DTX frame (sent), 19 not sent, the refresh, the next DTX frame...
    cycle = ["dtx"] + ["skip"] * (MAX_CONSECUTIVE_DTX - 1) + ["encode"]
    start = 5 + NB_SPEECH_FRAMES_BEFORE_DTX
    assert kinds[start:start + 3 * len(cycle)] == cycle * 3
    sent = [i for i, k in enumerate(kinds) if k != "skip"]
    steps_ms = [(b - a) * 20 for a, b in zip(sent, sent[1:])][start:]
    # Packets 400 ms and 20 ms apart in turn: RTP timestamp steps of 19200 and 960.
    assert set(steps_ms) == {20, 400} and steps_ms.count(400) >= 8


def test_marker_on_the_first_speech_after_dtx_only():
    steps = run(DtxCadence(), [False] * 5 + [True] * 40 + [False] * 5)
    markers = [i for i, (_, m) in enumerate(steps) if m]
    assert markers == [0, 45]  # the stream's first packet, and the first frame of the next talk spurt
    assert steps[45][0] == "encode"
    # A pause that never reaches DTX (under 220 ms) carries no marker.
    short = run(DtxCadence(), [False] * 5 + [True] * NB_SPEECH_FRAMES_BEFORE_DTX + [False] * 5)
    assert [i for i, (_, m) in enumerate(short) if m] == [0] and all(k == "encode" for k, _ in short)


def test_speech_resets_the_count_and_the_first_dtx_frame_is_sent_again():
    c = DtxCadence()
    assert c.step(True) == ("encode", True)   # the stream's first packet, a coded quiet frame
    run(c, [True] * 14)               # in DTX
    assert c.step(False) == ("encode", True)
    kinds = [k for k, _ in run(c, [True] * 12)]
    assert kinds == ["encode"] * 10 + ["dtx", "skip"]


def test_skips_ahead_is_the_sleep_until_the_next_packet():
    c = DtxCadence()
    assert c.silent_skips_ahead() == 0
    run(c, [True] * (NB_SPEECH_FRAMES_BEFORE_DTX + 1))  # the 1-byte packet just went out
    assert c.silent_skips_ahead() == MAX_CONSECUTIVE_DTX - 1
    probe = DtxCadence()
    probe.__dict__.update(c.__dict__)
    assert [k for k, _ in run(probe, [True] * MAX_CONSECUTIVE_DTX)] == ["skip"] * 19 + ["encode"]


def test_is_silent_is_60_db_below_full_scale():
    assert is_silent(np.zeros((FRAME, 2), np.int16))
    assert is_silent(np.full((FRAME, 2), 30, np.int16))
    assert not is_silent(tone_clip(440, 0.02, 0.01))


def test_dtx_packet_is_one_toc_byte_of_the_encoders_mode_and_follows_its_timestamps():
    from av import AudioFrame
    enc = ScriptedEncoder()
    assert enc.toc == DEFAULT_TOC

    def frame(i: int, x: np.ndarray) -> AudioFrame:
        f = AudioFrame.from_ndarray(x.reshape(1, -1), format="s16", layout="stereo")
        f.sample_rate, f.pts = 48000, i * FRAME
        from ..media import TIME_BASE
        f.time_base = TIME_BASE
        return f
    tone = tone_clip(300, 0.2, 0.3)
    coded = []
    for i in range(10):
        coded += enc.encode(frame(i, tone[i * FRAME:(i + 1) * FRAME]))
    seq, ts, payload = enc.dtx_packet(frame(30, np.zeros((FRAME, 2), np.int16)))
    assert len(payload) == 1 and payload[0] == coded[-1][2][0] & 0xFC   # code 0: one frame, no data
    assert seq == (coded[-1][0] + 1) & 0xFFFF
    assert (ts - coded[-1][1]) & 0xFFFFFFFF == (30 - 9) * FRAME


@pytest.mark.parametrize("idle", ["dtx", "silence", "pause"])
def test_a_scripted_track_in_virtual_time(idle):
    """Talk 0.4 s, then quiet for 2.6 s: what each idle mode sends, frame by frame."""
    async def go() -> list[tuple[int, str, bool]]:
        track = ScriptedAudioTrack()
        track.set_idle(idle)
        track.play(tone_clip(300, 0.4, 0.3))
        out = []
        loop = asyncio.get_running_loop()
        end = loop.time() + 3.0
        while loop.time() < end:
            try:
                f = await asyncio.wait_for(track.recv(), max(0.01, end - loop.time()))
            except asyncio.TimeoutError:
                break
            out.append((f.pts // FRAME, track.last_kind, track.last_marker))
        track.stop()
        return out
    out = asyncio.run(go())
    talk = [o for o in out if o[0] < 20]
    assert len(talk) >= 18  # the 0.4 s tone went out frame by frame
    quiet = [o for o in out if o[0] >= 20]
    if idle == "pause":
        assert quiet == []
    elif idle == "silence":
        assert len(quiet) > 100 and {k for _, k, _ in quiet} == {"encode"}
    else:
        kinds = [k for _, k, _ in quiet]
        # 10 hangover frames, then per 420 ms a 1-byte packet and a refresh: a handful, not 130.
        assert kinds[:NB_SPEECH_FRAMES_BEFORE_DTX] == ["encode"] * NB_SPEECH_FRAMES_BEFORE_DTX
        assert kinds[NB_SPEECH_FRAMES_BEFORE_DTX] == "dtx"
        assert 18 <= len(quiet) <= 24, quiet
        dtx_frames = [i for i, k, _ in quiet if k == "dtx"]
        assert all(b - a == MAX_CONSECUTIVE_DTX + 1 for a, b in zip(dtx_frames, dtx_frames[1:])), dtx_frames


def test_packets_after_skipped_frames_carry_their_own_frames_timestamp():
    # FFmpeg's queue would stamp the first packet after a gap as if no frame had been
    # skipped; the encoder stamps every packet with its frame's pts instead.
    from av import AudioFrame

    from ..media import TIME_BASE
    enc = ScriptedEncoder()
    stamps = []
    for i in (0, 1, 2, 30, 31, 52):
        f = AudioFrame.from_ndarray(np.zeros((FRAME, 2), np.int16).reshape(1, -1), format="s16", layout="stereo")
        f.sample_rate, f.pts, f.time_base = 48000, i * FRAME, TIME_BASE
        stamps += [ts for _, ts, _ in enc.encode(f)]
    assert [(b - a) & 0xFFFFFFFF for a, b in zip(stamps, stamps[1:])] == [960, 960, 28 * 960, 960, 21 * 960]
