"""Audio for scripted participants: a paced 48 kHz stereo track fed from clips.

A `ScriptedAudioTrack` yields one 20 ms frame per 20 ms of wall time. What it
plays comes from a queue of clips (a tone, a decoded file, espeak-ng speech);
between clips it sends digital silence, or nothing at all in DTX mode or while
muted. Frame `pts` follows the wall clock, so a pause shows up as an RTP
timestamp gap, the way Opus DTX and a muted publisher look to a receiver.
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
        self._pos = 0
        self._start: Optional[float] = None
        self._frame_index = 0
        self._wake = asyncio.Event()
        self.muted = False
        self.dtx = False          # idle = send nothing (like Opus DTX / a paused sender)
        self.level = 0.0          # RMS of the last frame sent, for speaker detection
        self.frames_sent = 0
        # Clip samples played so far, and every time the track fell behind the wall clock
        # and jumped its pts forward without skipping clip samples: (clip samples played
        # before the jump, samples of pts skipped). A room then carries the clip with those
        # silences inserted, which is what a recorder should be compared with.
        self.clip_samples_played = 0
        self.catch_ups: list[tuple[int, int]] = []

    # MARK: control (scenario side)

    def play(self, clip: np.ndarray) -> None:
        self._clips.append(clip)
        self._wake.set()

    def clear(self) -> None:
        self._clips.clear()
        self._pos = 0

    def set_muted(self, muted: bool) -> None:
        self.muted = muted
        self._wake.set()

    def set_dtx(self, dtx: bool) -> None:
        self.dtx = dtx
        self._wake.set()

    @property
    def started_at(self) -> Optional[float]:
        """Monotonic time of frame 0 (pts 0); None before the first frame."""
        return self._start

    @property
    def busy(self) -> bool:
        return bool(self._clips)

    def _sending(self) -> bool:
        return not self.muted and (bool(self._clips) or not self.dtx)

    # MARK: MediaStreamTrack

    async def recv(self) -> AudioFrame:
        if self.readyState != "live":
            raise MediaStreamError
        if self._start is None:
            self._start = time.monotonic()
        while not self._sending():
            self.level = 0.0
            self._wake.clear()
            await self._wake.wait()
            if self.readyState != "live":
                raise MediaStreamError
            # Skip the frames that a paused sender never sent: the pts jumps.
            self._frame_index = max(self._frame_index, int((time.monotonic() - self._start) / FRAME_SECONDS))
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
        self.level = rms_level(samples)
        frame = AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="stereo")
        frame.sample_rate = SAMPLE_RATE
        frame.pts = self._frame_index * FRAME_SAMPLES
        frame.time_base = TIME_BASE
        self._frame_index += 1
        self.frames_sent += 1
        return frame

    def _next_samples(self) -> np.ndarray:
        out = np.zeros((FRAME_SAMPLES, 2), dtype=np.int16)
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

    def timestamp_at(self, seconds: float) -> int:
        """The RTP timestamp of the instant `seconds` after the track's frame 0 (frame
        pts count samples from there)."""
        return (self.timestamp_base + int(seconds * SAMPLE_RATE)) & 0xFFFFFFFF

    def encode(self, frame: AudioFrame) -> list[tuple[int, int, bytes]]:
        """(sequence, timestamp, payload) of every packet the encoder gives back."""
        out = []
        for packet in self.codec.encode(frame):
            if packet.pts is None:
                continue
            out.append((self.sequence, (self.timestamp_base + int(packet.pts)) & 0xFFFFFFFF, bytes(packet)))
            self.sequence = (self.sequence + 1) & 0xFFFF
        return out
