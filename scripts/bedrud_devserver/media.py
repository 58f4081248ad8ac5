"""Audio for scripted participants: a paced 48 kHz stereo track fed from clips.

A `ScriptedAudioTrack` yields one 20 ms frame per 20 ms of wall time. What it
plays comes from a queue of clips (a tone, a decoded file, espeak-ng speech).
What it sends when quiet is its *idle mode*:
- `silence`: digital silence frames, one per 20 ms (a publisher with DTX off,
  LiveKit's `disable_dtx`);
- `dtx`: what a libwebrtc publisher with Opus DTX on sends (LiveKit answers
  `usedtx=1` unless the client disables it), modelled frame by frame by
  `DtxCadence`: after 200 ms of quiet one 1-byte packet, then every 400 ms a coded
  comfort-noise frame and another 1-byte packet; the first packet of the next talk
  spurt carries the RTP marker bit. This applies inside clips too (a pause of more
  than 200 ms between words is DTX, as from a real microphone);
- `pause`: nothing at all until the next clip (a sender that stopped; not what
  libwebrtc does, kept to test gap handling).
Nothing is sent while muted. Frame `pts` follows the wall clock, so a pause shows up
as an RTP timestamp gap, the way Opus DTX and a muted publisher look to a receiver.

With `--scripted-precode` (scenario clips only) each clip is coded once when its scenario
loads (`CodedClip`): a frame that is exactly the clip's frame k (the clip started on a
frame boundary, or its last frame with nothing queued behind it) goes out as the stored
packet, with its stored silence and level, instead of through libopus and two numpy
reductions on the event loop. That was most of the devserver's CPU with many rooms
(bench-peers --rooms --room-meeting: libopus 42 % of the busy time at 8 meeting rooms).
The packets are those of a fresh encoder per clip, so they are not byte for byte what one
encoder running across clips would give; frames the cache does not hold (a clip queued
mid-frame behind another) are coded live as before. A frame of digital silence with no
clip playing (the comfort-noise refresh of a quiet participant in DTX, every frame of one
with idle `silence`) is likewise one stored packet, `silent_payload()`.
"""
from __future__ import annotations

import asyncio
import fractions
import logging
import math
import os
import shutil
import subprocess
import tempfile
import time
from collections import deque
from typing import Optional

import numpy as np
from aiortc.mediastreams import MediaStreamError, MediaStreamTrack
from av import AudioFrame

log = logging.getLogger("devserver.media")

SAMPLE_RATE = 48000
FRAME_SAMPLES = 960  # 20 ms
FRAME_SECONDS = FRAME_SAMPLES / SAMPLE_RATE
TIME_BASE = fractions.Fraction(1, SAMPLE_RATE)
MAX_CLIP_SECONDS = 600


IDLE_MODES = ("silence", "dtx", "pause")

# libopus' DTX counters (1.3.1 src/opus_encoder.c decide_dtx_mode, silk/define.h;
# the SILK path counts the same way in silk/float/encode_frame_FLP.c): a frame with no
# activity counts up; above NB_SPEECH_FRAMES_BEFORE_DTX (200 ms of 20 ms frames) the
# encoder emits a TOC-only (1-byte) DTX frame, for at most MAX_CONSECUTIVE_DTX frames
# (400 ms) in a row; then the counter drops back to NB_SPEECH_FRAMES_BEFORE_DTX and one
# real frame codes the background (the comfort-noise refresh).
NB_SPEECH_FRAMES_BEFORE_DTX = 10
MAX_CONSECUTIVE_DTX = 20
# What counts as "no activity" for the model. libopus takes digital silence
# (is_digital_silence) or its analysis' activity_probability below DTX_ACTIVITY_THRESHOLD
# (0.1) on a quiet frame. The synthetic voices have no noise floor, so their pauses are
# (nearly) digital silence: a frame whose peak is 60 dB below full scale stands in.
SILENT_PEAK = 33
# The 1-byte DTX packet's TOC before the encoder made any packet: CELT-only, full band,
# 20 ms, stereo, one frame (RFC 6716 §3.1: config 31, s=1, c=0).
DEFAULT_TOC = 0xFC


def is_silent(samples: np.ndarray) -> bool:
    return samples.size == 0 or int(np.max(np.abs(samples.astype(np.int32)))) <= SILENT_PEAK


class DtxCadence:
    """Which 20 ms frames a libwebrtc publisher with Opus DTX sends, and with the marker
    bit, one frame at a time. Pure: no clock, no codec.

    `step(silent)` answers (kind, marker): kind is
    - "encode": a coded frame is sent (speech, the 200 ms hangover, or the refresh);
    - "dtx": the encoder gave a 1-byte DTX frame and libwebrtc sends it: only the first
      of a run is sent, "to let the decoder know that the encoder enters DTX mode"
      (modules/audio_coding/codecs/opus/opus_interface.cc WebRtcOpus_Encode: a result of
      1–2 bytes returns 0, nothing to send, while `in_dtx_mode`; a real frame clears it);
    - "skip": a DTX frame libwebrtc does not send.
    So in a long pause: frames 1–10 coded, 11 a 1-byte packet, 12–30 nothing, 31 the
    refresh, 32 a 1-byte packet, 33–51 nothing, 52 the refresh…: packets 20 ms and 400 ms
    apart in turn (RTP timestamp steps of 960 and 19200).

    The marker bit (RFC 3551 §4.1: first packet of a talk spurt after silence) follows
    libwebrtc's RTPSenderAudio::MarkerBit (modules/rtp_rtcp/source/rtp_sender_audio.cc):
    a sent comfort-noise frame sets `inband_vad_active_`, and the next speech frame
    clears it and carries the marker. A frame is comfort noise when it is a DTX frame or
    the refresh right after 20 of them (audio_encoder_opus.cc: `info.speech = !dtx_frame
    && (consecutive_dtx_frames_ != 20)`). So a pause shorter than 220 ms sends no marker.
    The stream's first packet carries it too when it is speech (MarkerBit's
    `last_payload_type_ == -1` case).

    Measured (sdk_record_probe.py, livekit 1.2.1's libwebrtc, 2026-12-06): every pause is
    coded frames, one 1-byte packet (TOC 0x78), then a 55-byte refresh and a 1-byte packet
    20 ms apart every 400 ms (15 timestamp steps of exactly 19200, none between 960 and
    19200 but where speech resumed); the stream's first packet and the first packet after
    each pause carry the marker; the stream starts with 10 coded frames and a 1-byte packet.
    """

    def __init__(self) -> None:
        self.no_activity = 0        # libopus nb_no_activity_frames
        self.in_dtx_mode = False    # libwebrtc OpusEncInst.in_dtx_mode
        self.consecutive_dtx = 0    # libwebrtc consecutive_dtx_frames_
        self.inband_vad_active = False  # libwebrtc RTPSenderAudio.inband_vad_active_
        self.first = True               # libwebrtc RTPSenderAudio.last_payload_type_ == -1

    def _encoder_dtx(self, silent: bool) -> bool:
        if not silent:
            self.no_activity = 0
            return False
        self.no_activity += 1
        if self.no_activity > NB_SPEECH_FRAMES_BEFORE_DTX:
            if self.no_activity <= NB_SPEECH_FRAMES_BEFORE_DTX + MAX_CONSECUTIVE_DTX:
                return True
            self.no_activity = NB_SPEECH_FRAMES_BEFORE_DTX
        return False

    def step(self, silent: bool) -> tuple[str, bool]:
        dtx_frame = self._encoder_dtx(silent)
        if dtx_frame:
            kind = "skip" if self.in_dtx_mode else "dtx"
            self.in_dtx_mode = True
        else:
            kind = "encode"
            self.in_dtx_mode = False
        speech = not dtx_frame and self.consecutive_dtx != MAX_CONSECUTIVE_DTX
        self.consecutive_dtx = self.consecutive_dtx + 1 if dtx_frame else 0
        marker = False
        if kind != "skip":  # an empty frame never reaches the RTP sender's marker logic
            if self.first:
                self.first = False
                marker = speech
                self.inband_vad_active = not speech
            elif not speech:
                self.inband_vad_active = True
            elif self.inband_vad_active:
                self.inband_vad_active = False
                marker = True
        return kind, marker

    def silent_skips_ahead(self) -> int:
        """How many of the next frames, all silent, would send nothing: the time a quiet
        track may sleep before its next packet."""
        probe = DtxCadence()
        probe.__dict__.update(self.__dict__)
        n = 0
        while n < NB_SPEECH_FRAMES_BEFORE_DTX + MAX_CONSECUTIVE_DTX + 1 and probe.step(True)[0] == "skip":
            n += 1
        return n


class ClipError(Exception):
    pass


def tone_clip(frequency: float, seconds: float, amplitude: float = 0.3) -> np.ndarray:
    """Stereo int16 samples (n, 2) of a sine at `frequency` Hz."""
    if not (20.0 <= frequency <= 20000.0):
        raise ClipError(f"tone frequency must be 20..20000 Hz, not {frequency}")
    if not (0.0 < seconds <= MAX_CLIP_SECONDS):
        raise ClipError(f"tone duration must be 0..{MAX_CLIP_SECONDS}s")
    if not (0.0 < amplitude <= 1.0):
        raise ClipError("tone amplitude must be in (0, 1]")
    n = int(round(seconds * SAMPLE_RATE))
    t = np.arange(n, dtype=np.float64) / SAMPLE_RATE
    mono = (np.sin(2 * math.pi * frequency * t) * amplitude * 32767).astype(np.int16)
    return np.stack([mono, mono], axis=1)


def file_clip(path: str) -> np.ndarray:
    """Any audio file PyAV/FFmpeg can read, as stereo int16 at 48 kHz."""
    import av
    from av.audio.resampler import AudioResampler

    if not os.path.isfile(path):
        raise ClipError(f"audio file not found: {path}")
    chunks: list[np.ndarray] = []
    total = 0
    try:
        with av.open(path) as container:
            streams = [s for s in container.streams if s.type == "audio"]
            if not streams:
                raise ClipError(f"no audio stream in {path}")
            resampler = AudioResampler(format="s16", layout="stereo", rate=SAMPLE_RATE)
            for frame in container.decode(streams[0]):
                for out in resampler.resample(frame):
                    arr = out.to_ndarray().reshape(-1, 2)
                    chunks.append(arr)
                    total += len(arr)
                    if total > MAX_CLIP_SECONDS * SAMPLE_RATE:
                        raise ClipError(f"{path} is longer than {MAX_CLIP_SECONDS}s")
            for out in resampler.resample(None):
                chunks.append(out.to_ndarray().reshape(-1, 2))
    except av.error.FFmpegError as exc:
        raise ClipError(f"cannot decode {path}: {exc}") from exc
    if not chunks:
        raise ClipError(f"{path} has no audio")
    return np.concatenate(chunks).astype(np.int16)


def speech_clip(text: str, voice: str = "en", timeout: float = 30.0) -> np.ndarray:
    """Text spoken by espeak-ng (a Debian package the bootstrap installs)."""
    exe = shutil.which("espeak-ng")
    if exe is None:
        raise ClipError("espeak-ng is not installed (scripts/bootstrap installs it)")
    if not text.strip():
        raise ClipError("nothing to say")
    with tempfile.TemporaryDirectory(prefix="devserver-say-") as tmp:
        wav = os.path.join(tmp, "say.wav")
        try:
            subprocess.run([exe, "-v", voice, "-w", wav, "--", text], check=True, timeout=timeout,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            raise ClipError(f"espeak-ng failed: {exc}") from exc
        return file_clip(wav)


class CodedClip:
    """A clip's 20 ms frames coded ahead of time by a fresh ScriptedEncoder: `payloads[k]`
    is the packet of clip samples 960·k…960·(k+1) (the last frame padded with zeros,
    None where the encoder did not give exactly one packet), `silent[k]` and `level[k]`
    that frame's is_silent and rms_level."""

    def __init__(self, clip: np.ndarray) -> None:
        enc = ScriptedEncoder()
        frames = -(-len(clip) // FRAME_SAMPLES)
        padded = np.zeros((frames * FRAME_SAMPLES, 2), np.int16)
        padded[:len(clip)] = clip.reshape(len(clip), -1)[:, :2] if clip.ndim == 2 else np.stack([clip, clip], axis=1)
        self.payloads: list[Optional[bytes]] = []
        self.silent: list[bool] = []
        self.level: list[float] = []
        for k in range(frames):
            samples = padded[k * FRAME_SAMPLES:(k + 1) * FRAME_SAMPLES]
            frame = AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="stereo")
            frame.sample_rate = SAMPLE_RATE
            frame.pts = k * FRAME_SAMPLES
            frame.time_base = TIME_BASE
            packets = [bytes(p) for p in enc.codec.encode(frame)]
            self.payloads.append(packets[0] if len(packets) == 1 and packets[0] else None)
            self.silent.append(is_silent(samples))
            self.level.append(rms_level(samples))


_SILENT_PAYLOAD: Optional[bytes] = None


def silent_payload() -> bytes:
    """The packet libopus gives for a frame of digital silence after silence (a fresh
    encoder's third such frame), made once per process."""
    global _SILENT_PAYLOAD
    if _SILENT_PAYLOAD is None:
        enc = ScriptedEncoder()
        payloads = []
        for k in range(3):
            frame = AudioFrame.from_ndarray(np.zeros((1, FRAME_SAMPLES * 2), np.int16), format="s16", layout="stereo")
            frame.sample_rate, frame.pts, frame.time_base = SAMPLE_RATE, k * FRAME_SAMPLES, TIME_BASE
            payloads += [bytes(p) for p in enc.codec.encode(frame)]
        _SILENT_PAYLOAD = payloads[-1]
    return _SILENT_PAYLOAD


def rms_level(samples: np.ndarray) -> float:
    """RMS of int16 samples as a fraction of full scale (0..1)."""
    if samples.size == 0:
        return 0.0
    f = samples.astype(np.float64) / 32768.0
    return float(np.sqrt(np.mean(f * f)))


class ScriptedAudioTrack(MediaStreamTrack):
    """The microphone of a scripted participant. Owned by the asyncio loop."""

    kind = "audio"

    def __init__(self) -> None:
        super().__init__()
        self._clips: deque[np.ndarray] = deque()
        self._coded: deque[Optional[CodedClip]] = deque()   # beside _clips: each one's CodedClip, if any
        self._pos = 0
        self._start: Optional[float] = None
        self._frame_index = 0
        self._wake = asyncio.Event()
        self.muted = False
        self.idle = "silence"     # what it sends when quiet: IDLE_MODES (see the module doc)
        self.cadence = DtxCadence()
        # What the publisher does with the frame recv() returned last: "encode" or "dtx"
        # (a 1-byte packet), and whether its packet carries the marker bit.
        self.last_kind = "encode"
        self.last_marker = False
        # The stored packet of the frame recv() returned last (CodedClip), or None: code it.
        self.last_payload: Optional[bytes] = None
        # (CodedClip, frame) when the frame _next_samples filled last is exactly a coded
        # clip's frame; ("zero", 0) when it was silence with no clip; else None.
        self._filled: Optional[tuple] = None
        # With --scripted-precode: a frame of silence with no clip goes out as silent_payload().
        self.precoded_silence = False
        self.level = 0.0          # RMS of the last frame sent, for speaker detection
        self.frames_sent = 0
        # Clip samples played so far, and every time the track fell behind the wall clock
        # and jumped its pts forward without skipping clip samples: (clip samples played
        # before the jump, samples of pts skipped). A room then carries the clip with those
        # silences inserted, which is what a recorder should be compared with.
        self.clip_samples_played = 0
        self.catch_ups: list[tuple[int, int]] = []

    # MARK: control (scenario side)

    def play(self, clip: np.ndarray, coded: Optional[CodedClip] = None) -> None:
        self._clips.append(clip)
        self._coded.append(coded)
        self._wake.set()

    def clear(self) -> None:
        self._clips.clear()
        self._coded.clear()
        self._pos = 0

    def set_muted(self, muted: bool) -> None:
        self.muted = muted
        self._wake.set()

    def set_idle(self, mode: str) -> None:
        if mode not in IDLE_MODES:
            raise ValueError(f"idle mode must be one of {', '.join(IDLE_MODES)}, not {mode!r}")
        self.idle = mode
        self._wake.set()

    @property
    def started_at(self) -> Optional[float]:
        """Monotonic time of frame 0 (pts 0); None before the first frame."""
        return self._start

    @property
    def busy(self) -> bool:
        return bool(self._clips)

    def _sending(self) -> bool:
        return not self.muted and (bool(self._clips) or self.idle != "pause")

    # MARK: MediaStreamTrack

    async def recv(self) -> AudioFrame:
        if self.readyState != "live":
            raise MediaStreamError
        if self._start is None:
            self._start = time.monotonic()
        while True:
            while not self._sending():
                self.level = 0.0
                self._wake.clear()
                await self._wake.wait()
                if self.readyState != "live":
                    raise MediaStreamError
                # Skip the frames that a paused sender never sent: the pts jumps.
                self._frame_index = max(self._frame_index, int((time.monotonic() - self._start) / FRAME_SECONDS))
            if self.idle == "dtx" and not self._clips and (ahead := self.cadence.silent_skips_ahead()):
                # Quiet in DTX: nothing goes out for `ahead` frames, so sleep through them
                # (one wake-up per packet, not per frame) unless a clip, a mute or a mode
                # change comes first.
                self.level = 0.0
                self._wake.clear()
                wait = self._start + (self._frame_index + ahead) * FRAME_SECONDS - time.monotonic()
                woken = False
                if wait > 0:
                    try:
                        await asyncio.wait_for(self._wake.wait(), wait)
                        woken = True
                    except asyncio.TimeoutError:
                        pass
                if self.readyState != "live":
                    raise MediaStreamError
                passed = ahead
                if woken:  # the frames that went by silent before the wake-up
                    passed = min(ahead, max(0, int((time.monotonic() - self._start) / FRAME_SECONDS) - self._frame_index))
                for _ in range(passed):
                    self.cadence.step(True)
                self._frame_index += passed
                continue
            deadline = self._start + self._frame_index * FRAME_SECONDS
            delay = deadline - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            elif delay < -0.2:
                # Fell behind (loaded machine): catch up instead of bursting.
                behind = int((time.monotonic() - self._start) / FRAME_SECONDS)
                if self._clips:
                    self.catch_ups.append((self.clip_samples_played, (behind - self._frame_index) * FRAME_SAMPLES))
                self._frame_index = behind
            samples = self._next_samples()
            silent = self._frame_silent(samples)
            kind, marker = self.cadence.step(silent) if self.idle == "dtx" else ("encode", False)
            if kind == "skip":
                # A DTX frame libwebrtc does not send: its clip samples are played (the
                # room carries them as silence), nothing goes out.
                self.level = 0.0
                self._frame_index += 1
                continue
            break
        self.last_kind, self.last_marker = kind, marker
        filled = self._filled
        if filled is None:
            self.level, self.last_payload = rms_level(samples), None
        elif filled[0] == "zero":
            self.level, self.last_payload = 0.0, silent_payload() if self.precoded_silence else None
        else:
            self.level, self.last_payload = filled[0].level[filled[1]], filled[0].payloads[filled[1]]
        frame = AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="stereo")
        frame.sample_rate = SAMPLE_RATE
        frame.pts = self._frame_index * FRAME_SAMPLES
        frame.time_base = TIME_BASE
        self._frame_index += 1
        self.frames_sent += 1
        return frame

    def _frame_silent(self, samples: np.ndarray) -> bool:
        filled = self._filled
        if filled is None:
            return is_silent(samples)
        return True if filled[0] == "zero" else filled[0].silent[filled[1]]

    def _next_samples(self) -> np.ndarray:
        out = np.zeros((FRAME_SAMPLES, 2), dtype=np.int16)
        self._filled = None
        if not self._clips:
            self._filled = ("zero", 0)
            return out
        coded = self._coded[0]
        if coded is not None and self._pos % FRAME_SAMPLES == 0 and (
                len(self._clips[0]) - self._pos >= FRAME_SAMPLES or len(self._clips) == 1):
            # Exactly the clip's frame k (its last one padded with zeros, nothing behind it).
            self._filled = (coded, self._pos // FRAME_SAMPLES)
        filled = 0
        while filled < FRAME_SAMPLES and self._clips:
            clip = self._clips[0]
            take = min(FRAME_SAMPLES - filled, len(clip) - self._pos)
            out[filled:filled + take] = clip[self._pos:self._pos + take]
            filled += take
            self._pos += take
            self.clip_samples_played += take
            if self._pos >= len(clip):
                self._clips.popleft()
                self._coded.popleft()
                self._pos = 0
        return out

    def stop(self) -> None:
        super().stop()
        self._wake.set()


class ScriptedEncoder:
    """Encodes a scripted track's frames with libopus (through PyAV) into the packets
    a publisher would send: one per 20 ms frame, sequence numbers counting up by one,
    RTP timestamps from the frames' pts, so an idle (DTX) or muted stretch is a
    timestamp jump with no sequence gap, as from a real client. Owned by the loop."""

    def __init__(self) -> None:
        import random

        from av import CodecContext
        self.codec = CodecContext.create("libopus", "w")
        self.codec.bit_rate = 64000
        self.codec.format = "s16"
        self.codec.layout = "stereo"
        self.codec.sample_rate = SAMPLE_RATE
        self.codec.time_base = TIME_BASE
        self.codec.options = {"application": "voip", "frame_duration": "20"}
        self.sequence = random.randint(0, 0x7FFF)
        self.timestamp_base = random.getrandbits(32)
        self.toc = DEFAULT_TOC        # of the last coded packet, single-frame (RFC 6716 §3.1)

    def timestamp_at(self, seconds: float) -> int:
        """The RTP timestamp of the instant `seconds` after the track's frame 0 (frame
        pts count samples from there)."""
        return (self.timestamp_base + int(seconds * SAMPLE_RATE)) & 0xFFFFFFFF

    def encode(self, frame: AudioFrame) -> list[tuple[int, int, bytes]]:
        """(sequence, timestamp, payload) of every packet the encoder gives back: one per
        20 ms frame, stamped with the frame's own pts, as libwebrtc stamps a packet with
        its frame's capture time. Not the packet's pts: FFmpeg's encoder queue gives the
        first packet after skipped frames the pts that would have followed the last one
        sent (after a 1 s pause, a packet 1 s early), which put the first packet of every
        talk spurt after a pause, a mute or a catch-up at the wrong time."""
        out = []
        for i, packet in enumerate(self.codec.encode(frame)):
            payload = bytes(packet)
            if payload:
                self.toc = payload[0] & 0xFC
            out.append((self.sequence, (self.timestamp_base + int(frame.pts) + i * FRAME_SAMPLES) & 0xFFFFFFFF, payload))
            self.sequence = (self.sequence + 1) & 0xFFFF
        return out

    def precoded(self, frame: AudioFrame, payload: bytes) -> tuple[int, int, bytes]:
        """The packet of `frame` from a CodedClip's stored `payload`, numbered and stamped
        as encode() would (the encoder's own state does not move)."""
        self.toc = payload[0] & 0xFC
        out = (self.sequence, (self.timestamp_base + int(frame.pts)) & 0xFFFFFFFF, payload)
        self.sequence = (self.sequence + 1) & 0xFFFF
        return out

    def dtx_packet(self, frame: AudioFrame) -> tuple[int, int, bytes]:
        """The 1-byte DTX packet libopus gives for `frame` and libwebrtc sends: the TOC
        byte of the encoder's current mode, bandwidth, frame size and channels with one
        frame of no data (opus_encoder.c: `data[0] = gen_toc(...); return 1`). The frame is
        not coded, so the encoder's state does not move (it would code nothing either)."""
        out = (self.sequence, (self.timestamp_base + int(frame.pts)) & 0xFFFFFFFF, bytes([self.toc]))
        self.sequence = (self.sequence + 1) & 0xFFFF
        return out
