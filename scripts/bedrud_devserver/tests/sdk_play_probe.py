"""The built bot plays an Ogg Opus file (`bedrud-bot play`) through the devserver's
forwarding path while the official LiveKit SDK listens; prints one JSON report for
test_sdk_play.py.

Runs *inside* a private network namespace (scripts/netns-run), like sdk_record_probe.py:

    PYTHONPATH=scripts scripts/netns-run .venv/bin/python -m bedrud_devserver.tests.sdk_play_probe

What it measures:
- the normalised cross-correlation of the PCM libwebrtc decoded for the SDK with the
  file's PCM decoded by PyAV (FFmpeg), at the best lag;
- the SDK-side sample count against the wall clock while the track played: the frames
  the SDK hands out against their arrival times (least-delayed frames at both ends).
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
import traceback

import numpy as np
from livekit import rtc

from .helpers import REPO, DevServer, within_probe_deadline
from .lkclient import run_bot, sdk_guest_join
from .sdk_record_probe import best_correlation, decode_file, segment_correlation

ROOM = "playroom"
BOT = os.path.join(REPO, ".build", "release", "bedrud-bot")
RATE = 48000
TEXT = ("The official LiveKit software development kit listens while bedrud bot plays this "
        "Ogg Opus file as it is. One, two, three, four, five, six, seven, eight, nine, ten.")


def make_file(work: str) -> str:
    wav, opus = os.path.join(work, "speech.wav"), os.path.join(work, "speech.opus")
    subprocess.run(["espeak-ng", "-w", wav, TEXT], check=True, capture_output=True, timeout=60)
    subprocess.run(["opusenc", "--quiet", "--bitrate", "32", wav, opus], check=True, capture_output=True, timeout=60)
    return opus


async def run(srv: DevServer, work: str) -> dict:
    report: dict = {}
    opus = make_file(work)
    reference = decode_file(opus)
    report["file_seconds"] = round(len(reference) / RATE, 3)
    home = os.path.join(work, "home")
    os.makedirs(home)
    heard: list[np.ndarray] = []
    arrivals: list[tuple[float, int]] = []  # (monotonic time, samples so far) per frame

    async def collect(track: rtc.Track) -> None:
        stream = rtc.AudioStream(track, sample_rate=RATE, num_channels=1)
        total = 0
        try:
            async for ev in stream:
                pcm = np.frombuffer(ev.frame.data, dtype=np.int16).copy()
                heard.append(pcm)
                total += len(pcm)
                arrivals.append((time.monotonic(), total))
        except asyncio.CancelledError:
            pass
        finally:
            await stream.aclose()
    tasks: list[asyncio.Task] = []
    listener = await sdk_guest_join(srv, ROOM, "Listener", on={
        "track_subscribed": lambda track, pub, p: tasks.append(asyncio.ensure_future(collect(track)))})
    env = dict(os.environ, HOME=home, NO_COLOR="1")
    code, _, stderr = await run_bot(BOT, "play", f"{srv.url}/m/{ROOM}", opus, "--guest-name", "Player",
                                         env=env, cwd=home, timeout=90)
    report["bot_exit"] = code
    report["bot_stderr"] = stderr[-2000:]
    await asyncio.sleep(0.5)  # the last forwarded packets
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await listener.disconnect()
    samples = np.concatenate(heard).astype(np.float64) if heard else np.zeros(0)
    report["listener_seconds"] = round(len(samples) / RATE, 3)
    corr, lag = best_correlation(reference, samples)
    report["whole_correlation"], report["lag_ms"] = round(corr, 4), round(lag * 1000 / RATE, 1)
    # Per voiced second at its best lag near the global one: libwebrtc's jitter buffer may
    # stretch or shorten a pause, which shifts what follows by a few ms (as in
    # sdk_record_probe.py); the median is the figure.
    windows = []
    for lo in range(0, len(reference) - RATE + 1, RATE):
        seg = reference[lo:lo + RATE]
        if np.sqrt(np.mean(seg * seg)) < 300:
            continue
        at = max(0, lo + lag)
        windows.append(round(segment_correlation(seg, samples, at), 4))
    report["correlation_windows"] = windows
    report["correlation"] = round(float(np.median(windows)), 4) if windows else 0.0
    # Sample count against the wall clock: each frame's arrival minus its place in the
    # stream; the least-delayed frames of the first and the last 2 s (scheduling delays
    # only add) give the drift.
    if arrivals:
        offsets = [(t - n / RATE, n / RATE) for t, n in arrivals]
        end = offsets[-1][1]
        first = min(o for o, at in offsets if at <= 2)
        last = min(o for o, at in offsets if at >= end - 2)
        report["stream_seconds"] = round(end, 3)
        report["wall_drift_ms"] = round((last - first) * 1000, 2)
    return report


async def main() -> int:
    srv = DevServer("--seed-room", ROOM)
    work = tempfile.mkdtemp(prefix="sdk-play-")
    report: dict = {}
    try:
        report = await within_probe_deadline(run(srv, work), 135)
    except BaseException as exc:  # noqa: BLE001 — the report carries the failure
        report["error"] = "".join(traceback.format_exception(exc))
    finally:
        srv.stop()
        report["devserver_stderr"] = srv.stderr_lines[-40:]
        shutil.rmtree(work, ignore_errors=True)
    print("SDK-PLAY-REPORT " + json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
