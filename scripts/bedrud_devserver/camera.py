"""A scripted participant's camera, so that subscriber offers carry video sections the
way LiveKit's do once anyone has a camera on (issue 14: the bot must decline them in a
shape LiveKit's pion accepts).

Tiny frames (64x48) at 5 fps keep aiortc's VP8 encoder cheap; the bot declines video,
so nothing is decoded. Kept apart from sfu.py/media.py: a `CameraTrack` is a
`PublishedTrack` that subscribers get although it is not audio. Only audio is forwarded
packet by packet; a camera is relayed (its frames encoded per subscriber) in both
media modes.
"""
from __future__ import annotations

import asyncio
import fractions
import time

from aiortc.mediastreams import MediaStreamError, MediaStreamTrack
from av import VideoFrame
from livekit.protocol import models as lkm

from .sfu import Participant, PublishedTrack

FPS = 5
WIDTH, HEIGHT = 64, 48
CLOCK = 90000


class ScriptedVideoTrack(MediaStreamTrack):
    """Flat grey frames, paced in real time."""

    kind = "video"

    def __init__(self) -> None:
        super().__init__()
        self._start: float | None = None
        self._n = 0

    async def recv(self) -> VideoFrame:
        if self.readyState != "live":
            raise MediaStreamError
        if self._start is None:
            self._start = time.monotonic()
        else:
            self._n += 1
            wait = self._start + self._n / FPS - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
        frame = VideoFrame(width=WIDTH, height=HEIGHT, format="yuv420p")
        for plane in frame.planes:
            plane.update(bytes([128]) * plane.buffer_size)
        frame.pts = self._n * (CLOCK // FPS)
        frame.time_base = fractions.Fraction(1, CLOCK)
        return frame


class CameraTrack(PublishedTrack):
    """A published VP8 camera that subscribers get as an m=video section."""

    def __init__(self, owner: Participant) -> None:
        super().__init__(owner, "camera", lkm.TrackSource.CAMERA, ScriptedVideoTrack(),
                         kind=lkm.TrackType.VIDEO, mime="video/VP8")

    @property
    def forwardable(self) -> bool:
        return self.source_track is not None

    def info(self) -> lkm.TrackInfo:
        info = super().info()
        info.width, info.height = WIDTH, HEIGHT
        info.codecs.add(mime_type=self.mime)
        return info
