"""The recording notice (`record.announce`) of `bedrud-bot join --record` reaches a
participant on the official LiveKit SDK as an ordinary Bedrud chat; prints one JSON report
for test_sdk_notice.py.

Runs *inside* a private network namespace (scripts/netns-run), like sdk_say_probe.py:

    PYTHONPATH=scripts scripts/netns-run .venv/bin/python -m bedrud_devserver.tests.sdk_notice_probe

An SDK participant is in the room first (LiveKit keeps no chat: only those present when
the bot starts recording see its notice); the bot records for a few seconds and leaves.
"""
from __future__ import annotations

import asyncio
import os
import sys
import time

from livekit import rtc
from livekit.rtc._proto import room_pb2

from .helpers import REPO, DevServer, probe_main
from .lkclient import run_bot, sdk_guest_join

ROOM = "noticeroom"
BOT = os.environ.get("BEDRUD_BOT") or os.path.join(REPO, ".build", "release", "bedrud-bot")


async def run(srv: DevServer, work: str) -> dict:
    report: dict = {}
    received: list[dict] = []
    listener = rtc.Room()

    def on_data(packet: rtc.DataPacket) -> None:
        received.append({
            "reliable": packet.kind == room_pb2.DataPacketKind.KIND_RELIABLE, "topic": packet.topic,
            "sender": packet.participant.identity if packet.participant else None,
            "payload": packet.data.decode("utf-8", errors="replace"), "at": time.time(),
        })

    await sdk_guest_join(srv, ROOM, "Listener", room=listener, on={"data_received": on_data})
    home = os.path.join(work, "home")
    os.makedirs(home)
    env = dict(os.environ, HOME=home, NO_COLOR="1")
    started = time.time()
    code, _, stderr = await run_bot(BOT, "join", f"{srv.url}/m/{ROOM}", "--record", "--output", os.path.join(work, "rec"),
                                    "--duration", "6s", "--guest-name", "Recorder", env=env, cwd=home, timeout=60)
    report["bot_exit"] = code
    report["bot_stderr"] = stderr[-2000:]
    report["started_at"] = started
    report["received"] = received
    await listener.disconnect()
    return report


async def main() -> int:
    return await probe_main(run, "SDK-NOTICE-REPORT", 75, "sdk-notice-", "--seed-room", ROOM)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
