"""A scripted participant's camera: a real VP8 stream, forwarded packet by packet to
every subscriber the way LiveKit forwards video (forward.VideoDownTrack), so that a
subscriber which does not turn video off receives what it would from LiveKit.

The picture (640x360 at 15 fps, about 500 kbit/s CBR, a modest camera) is a moving
block texture with a little noise, so libvpx spends its bit rate on it. A two-second loop is encoded once per
process in a worker thread (a key frame first, then delta frames) and replayed by every
camera with its own sequence numbers, timestamps and picture ids; each replay starts
with the key frame, so a subscriber that resumes gets a decodable picture within two
seconds. Packetised per RFC 7741 (aiortc's VP8 payload descriptor, 1300-byte packets).
"""
from __future__ import annotations

import asyncio
import fractions
import functools
import logging
import os
import random
import struct
import tempfile
import time
from typing import Optional

from livekit.protocol import models as lkm

from .forward import VIDEO_CLOCK, Forwarder, SourcePacket
from .sfu import Participant, PublishedTrack

log = logging.getLogger("devserver.camera")

FPS = 15
WIDTH, HEIGHT = 640, 360
BITRATE = 500_000
LOOP_FRAMES = 2 * FPS
VIDEO_LOG_LIMIT = 600   # packets kept for /_dev/ packet logs (video is not analysed there)


CACHE_VERSION = 1


def cache_path() -> str:
    """Where the encoded loop is kept between runs (encoding takes seconds on a loaded
    machine; every devserver of a test run would pay it again)."""
    key = f"v{CACHE_VERSION}-{WIDTH}x{HEIGHT}-{FPS}-{BITRATE}-{LOOP_FRAMES}"
    return os.path.join(tempfile.gettempdir(), f"bedrud-devserver-camera-{key}.bin")


@functools.lru_cache(maxsize=1)
def encoded_loop() -> tuple[tuple[bool, bytes], ...]:
    """(key frame?, VP8 frame) for LOOP_FRAMES frames; only the first is a key frame.
    Seeded: every run sends the same bytes. Read from the cache file when it is whole."""
    path = cache_path()
    try:
        with open(path, "rb") as fh:
            frames = _unpack(fh.read())
        if len(frames) == LOOP_FRAMES and frames[0][0]:
            return frames
    except (OSError, ValueError):
        pass
    frames = _encode()
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            fh.write(_pack(frames))
        os.replace(tmp, path)
    except OSError as exc:
        log.info("camera loop not cached (%s)", exc)
    return frames


def _pack(frames: tuple[tuple[bool, bytes], ...]) -> bytes:
    return b"".join(struct.pack(">?I", key, len(data)) + data for key, data in frames)


def _unpack(blob: bytes) -> tuple[tuple[bool, bytes], ...]:
    frames: list[tuple[bool, bytes]] = []
    i = 0
    while i < len(blob):
        if i + 5 > len(blob):
            raise ValueError("truncated")
        key, n = struct.unpack_from(">?I", blob, i)
        if i + 5 + n > len(blob):
            raise ValueError("truncated")
        frames.append((key, blob[i + 5:i + 5 + n]))
        i += 5 + n
    return tuple(frames)


def _encode() -> tuple[tuple[bool, bytes], ...]:
    import av
    import numpy as np

    codec = av.CodecContext.create("libvpx", "w")
    codec.width, codec.height = WIDTH, HEIGHT
    codec.pix_fmt = "yuv420p"
    codec.bit_rate = BITRATE
    codec.framerate = FPS
    codec.time_base = fractions.Fraction(1, FPS)
    codec.gop_size = LOOP_FRAMES
    codec.options = {"deadline": "realtime", "cpu-used": "16", "lag-in-frames": "0",
                     "minrate": str(BITRATE), "maxrate": str(BITRATE), "bufsize": str(BITRATE)}
    rng = np.random.default_rng(22)
    block = 20
    texture = np.kron(rng.integers(40, 216, (HEIGHT // block, 2 * WIDTH // block), dtype=np.uint8),
                      np.ones((block, block), np.uint8))
    chroma = np.full((HEIGHT // 2, WIDTH), 128, np.uint8)
    frames: list[tuple[bool, bytes]] = []
    for i in range(LOOP_FRAMES):
        luma = np.roll(texture, -4 * i, axis=1)[:, :WIDTH].astype(np.int16)
        luma = (luma + rng.integers(-6, 7, luma.shape)).clip(0, 255).astype(np.uint8)
        frame = av.VideoFrame.from_ndarray(np.concatenate([luma, chroma]), format="yuv420p")
        frame.pts = i
        if i == 0:
            frame.pict_type = av.video.frame.PictureType.I
        frames += [(packet.is_keyframe, bytes(packet)) for packet in codec.encode(frame)]
    frames += [(packet.is_keyframe, bytes(packet)) for packet in codec.encode(None)]
    if len(frames) != LOOP_FRAMES or not frames[0][0]:
        raise RuntimeError(f"libvpx gave {len(frames)} frames for {LOOP_FRAMES}, first key frame: {frames[:1]}")
    return tuple(frames)


_loop_task: Optional[asyncio.Future] = None


def shared_loop() -> asyncio.Future:
    """The encoded loop, made once per process in a worker thread (a few seconds on a
    loaded machine) while the event loop goes on; every camera waits for the same one."""
    global _loop_task
    if _loop_task is None or (_loop_task.done() and _loop_task.exception() is not None):
        _loop_task = asyncio.ensure_future(asyncio.to_thread(encoded_loop))
    return _loop_task


def packetize(frame: bytes, picture_id: int) -> list[bytes]:
    """RTP payloads of one VP8 frame (RFC 7741 §4.2 descriptor with a 15-bit picture id)."""
    from aiortc.codecs.vpx import Vp8Encoder
    return Vp8Encoder._packetize(frame, picture_id)


class CameraTrack(PublishedTrack):
    """A published VP8 camera: subscribers get an m=video section and its packets."""

    def __init__(self, owner: Participant) -> None:
        super().__init__(owner, "camera", lkm.TrackSource.CAMERA, None, kind=lkm.TrackType.VIDEO, mime="video/VP8")
        self.forwarder = Forwarder(log_limit=VIDEO_LOG_LIMIT)
        self.frames_sent = 0
        self._task: Optional[asyncio.Task] = None

    @property
    def forwardable(self) -> bool:
        return True

    def info(self) -> lkm.TrackInfo:
        info = super().info()
        info.width, info.height = WIDTH, HEIGHT
        info.codecs.add(mime_type=self.mime)
        return info

    def start(self) -> None:
        """A publisher sends whether or not anyone subscribes: the clock keeps running."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _run(self) -> None:
        try:
            frames = await shared_loop()
            sequence = random.randint(0, 0xFFFF)
            timestamp = random.getrandbits(32)
            picture_id = random.randint(0, 0x7FFF)
            start = time.monotonic()
            n = 0
            while True:
                keyframe, data = frames[n % len(frames)]
                payloads = packetize(data, picture_id)
                for i, payload in enumerate(payloads):
                    await self.forwarder.on_packet(SourcePacket(
                        sequence=sequence, timestamp=timestamp, marker=i == len(payloads) - 1, payload=payload,
                        keyframe=keyframe and i == 0))
                    sequence = (sequence + 1) & 0xFFFF
                n += 1
                self.frames_sent = n
                timestamp = (timestamp + VIDEO_CLOCK // FPS) & 0xFFFFFFFF
                picture_id = (picture_id + 1) & 0x7FFF
                wait = start + n / FPS - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
        except asyncio.CancelledError:
            pass
        except Exception:  # noqa: BLE001 — one camera must not take the server down
            log.exception("scripted camera failed")
