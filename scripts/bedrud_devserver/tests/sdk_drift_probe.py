"""By hand, not in the suite: `bedrud-bot play WAV --loop --duration D` while the official
LiveKit SDK listens; prints the SDK-side sample count against the wall clock every
minute and a final JSON line (issue 10's one-hour drift run).

    PYTHONPATH=scripts scripts/netns-run .venv/bin/python -m bedrud_devserver.tests.sdk_drift_probe 3600

Drift is measured as sdk_play_probe.py does: each frame's arrival minus its place in the
stream; the least-delayed frame of the first minute against that of the last minute
(scheduling delays only add, so the minimum is the clock).
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
from livekit import rtc

from .helpers import REPO, DevServer
from .lkclient import run_bot, sdk_guest_join

ROOM = "driftroom"
BOT = os.path.join(REPO, ".build", "release", "bedrud-bot")
RATE = 48000


async def run(seconds: int) -> dict:
    srv = DevServer("--seed-room", ROOM)
    work = tempfile.mkdtemp(prefix="sdk-drift-")
    try:
        wav = os.path.join(work, "speech.wav")
        subprocess.run(["espeak-ng", "-w", wav, "Counting the samples for an hour: one, two, three, four, five."],
                       check=True, capture_output=True, timeout=60)
        state = {"total": 0, "first_min": None, "last_min": None, "minute": -1, "start": None}
        minutes: list[dict] = []

        async def collect(track: rtc.Track) -> None:
            stream = rtc.AudioStream(track, sample_rate=RATE, num_channels=1)
            async for ev in stream:
                now = time.monotonic()
                state["total"] += ev.frame.samples_per_channel
                offset = now - state["total"] / RATE
                at = state["total"] / RATE
                if at <= 60:
                    state["first_min"] = offset if state["first_min"] is None else min(state["first_min"], offset)
                minute = int(at // 60)
                if minute != state["minute"]:
                    if state["minute"] >= 1 and state["last_min"] is not None:
                        minutes.append({"minute": state["minute"], "drift_ms": round((state["last_min"] - state["first_min"]) * 1000, 2)})
                        print(json.dumps(minutes[-1]), flush=True)
                    state["minute"], state["last_min"] = minute, offset
                else:
                    state["last_min"] = min(state["last_min"], offset)

        tasks: list[asyncio.Task] = []
        room = await sdk_guest_join(srv, ROOM, "Listener", on={
            "track_subscribed": lambda track, pub, p: tasks.append(asyncio.ensure_future(collect(track)))})
        home = os.path.join(work, "home")
        os.makedirs(home)
        code, _, err = await run_bot(BOT, "-q", "play", f"{srv.url}/m/{ROOM}", wav, "--loop", "--duration", f"{seconds}s",
                                     "--guest-name", "Player", env=dict(os.environ, HOME=home), cwd=home, timeout=seconds + 120)
        await asyncio.sleep(1)
        for t in tasks:
            t.cancel()
        await room.disconnect()
        return {"bot_exit": code, "bot_stderr": err[-500:],
                "stream_seconds": round(state["total"] / RATE, 3), "minutes": minutes,
                "final_drift_ms": minutes[-1]["drift_ms"] if minutes else None}
    finally:
        srv.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    print("SDK-DRIFT-REPORT " + json.dumps(asyncio.run(run(int(sys.argv[1]) if len(sys.argv) > 1 else 600))))
