"""A room recorder written the way the LiveKit Python SDK documents it: subscribe to every
audio track, read each through `rtc.AudioStream`, write it to Ogg Opus with PyAV, and mix
all of them with `rtc.AudioMixer` into room.ogg. Stops on SIGTERM/SIGINT.

    python -m bench_peers.sdk_recorder WS_URL TOKEN OUT_DIR
"""
from __future__ import annotations

import asyncio
import os
import signal
import sys

import numpy as np
from livekit import rtc

from .oggout import OggOpusFile


async def record_track(stream: rtc.AudioStream, out: OggOpusFile) -> None:
    async for event in stream:
        out.write(np.frombuffer(event.frame.data, dtype=np.int16))


async def record_mix(mixer: rtc.AudioMixer, out: OggOpusFile) -> None:
    async for frame in mixer:
        out.write(np.frombuffer(frame.data, dtype=np.int16))


async def main(url: str, token: str, out_dir: str) -> int:
    os.makedirs(out_dir, exist_ok=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    room = rtc.Room()
    files: list[OggOpusFile] = []
    tasks: list[asyncio.Task] = []
    mixer = rtc.AudioMixer(48000, 1, blocksize=960)
    mix_file = OggOpusFile(os.path.join(out_dir, "room.ogg"))
    files.append(mix_file)
    tasks.append(asyncio.create_task(record_mix(mixer, mix_file)))

    @room.on("track_subscribed")
    def on_track(track: rtc.Track, pub: rtc.RemoteTrackPublication, participant: rtc.RemoteParticipant) -> None:
        if track.kind != rtc.TrackKind.KIND_AUDIO:
            return
        out = OggOpusFile(os.path.join(out_dir, f"{participant.identity}.ogg"))
        files.append(out)
        tasks.append(asyncio.create_task(record_track(rtc.AudioStream(track, sample_rate=48000, num_channels=1), out)))
        mixer.add_stream(rtc.AudioStream(track, sample_rate=48000, num_channels=1))

    await room.connect(url, token, rtc.RoomOptions(auto_subscribe=True))
    await stop.wait()
    await room.disconnect()
    await mixer.aclose()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for f in files:
        f.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(*sys.argv[1:4])))
