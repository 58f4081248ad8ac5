"""One Ogg Opus file written with PyAV (FFmpeg's libopus), as both peer recorders do."""
from __future__ import annotations

import av
import numpy as np


class OggOpusFile:
    """Mono 48 kHz PCM in, Ogg Opus out (libopus through PyAV, 32 kbit/s like bedrud-bot's mix)."""

    def __init__(self, path: str, bitrate: int = 32000) -> None:
        self.container = av.open(path, mode="w", format="ogg")
        self.stream = self.container.add_stream("libopus", rate=48000)
        self.stream.layout = "mono"
        self.stream.bit_rate = bitrate
        self.pts = 0

    def write(self, pcm16: np.ndarray) -> None:
        frame = av.AudioFrame.from_ndarray(pcm16.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = 48000
        frame.pts = self.pts
        self.pts += pcm16.shape[-1]
        for packet in self.stream.encode(frame):
            self.container.mux(packet)

    def close(self) -> None:
        for packet in self.stream.encode(None):
            self.container.mux(packet)
        self.container.close()
