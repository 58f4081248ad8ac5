"""A room recorder on aiortc: one `aiortc.contrib.media.MediaRecorder` per subscribed audio
track, as aiortc's examples record, writing Ogg Opus (MediaRecorder picks libopus for .ogg).
aiortc has no LiveKit client, so the signalling is the devserver tests' small LiveKit v0
client (`lkclient.LKClient`, aiortc + aiohttp); only its track handling is replaced.
No mix: MediaRecorder writes each track on its own. Stops on SIGTERM/SIGINT.

    python -m bench_peers.aiortc_recorder LIVEKIT_HOST TOKEN OUT_DIR
"""
from __future__ import annotations

import asyncio
import os
import signal
import sys

from aiortc.contrib.media import MediaRecorder

from bedrud_devserver.tests.lkclient import LKClient


class RecordingClient(LKClient):
    def __init__(self, host: str, token: str, out_dir: str) -> None:
        super().__init__(host, token)
        self.out_dir = out_dir
        self.recorders: dict[str, MediaRecorder] = {}

    def _on_track(self, track) -> None:  # type: ignore[no-untyped-def]
        if track.kind != "audio":
            return
        recorder = MediaRecorder(os.path.join(self.out_dir, f"{track.id}.ogg"))
        recorder.addTrack(track)
        self.recorders[track.id] = recorder
        self._tasks.append(asyncio.ensure_future(recorder.start()))

    def owners(self) -> dict[str, str]:
        """Track sid → participant identity, from the join and update messages."""
        out: dict[str, str] = {}
        for m in self.messages:
            kind = m.WhichOneof("message")
            people = m.join.other_participants if kind == "join" else m.update.participants if kind == "update" else []
            for p in people:
                for t in p.tracks:
                    out[t.sid] = p.identity
        return out


async def main(host: str, token: str, out_dir: str) -> int:
    os.makedirs(out_dir, exist_ok=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    client = RecordingClient(host, token, out_dir)
    await client.connect()
    await stop.wait()
    for r in client.recorders.values():
        await r.stop()
    owners = client.owners()
    await client.close()
    for sid in client.recorders:
        if sid in owners:
            os.replace(os.path.join(out_dir, f"{sid}.ogg"), os.path.join(out_dir, f"{owners[sid]}.ogg"))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(*sys.argv[1:4])))
