"""The official LiveKit SDK sends chats the way Bedrud's web client v0.12 encodes them
(chunked, with an inline image) and then floods the chat topic, while the built bot
records the room; prints one JSON report for test_sdk_chat.py.

Runs *inside* a private network namespace (scripts/netns-run), like sdk_record_probe.py:

    PYTHONPATH=scripts scripts/netns-run .venv/bin/python -m bedrud_devserver.tests.sdk_chat_probe

`BEDRUD_BOT` names another bot binary (default: .build/release/bedrud-bot).

The packets come from bedrud_devserver/chatwire.py, written from the rules of the web
client's `buildChatWirePackets` (chatDataChannel.ts, v0.12).
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

from ..chatwire import chat_packets as web_chat_packets, wire
from .helpers import REPO, DevServer, within_probe_deadline
from .lkclient import sdk_guest_join
from .sdk_record_probe import wait_for

ROOM = "chatroom"
BOT = os.environ.get("BEDRUD_BOT") or os.path.join(REPO, ".build", "release", "bedrud-bot")
SAFE_BYTES = 60_000
# Multibyte text (2-, 3-, 4-byte UTF-8, a ZWJ sequence) long enough to be cut.
TEXT = "Grüße aus Köln — «سلام» 😀 👩‍👩‍👧 " * 2600
PUBLISH_SECONDS = 120
IMAGE_BYTES = 300_000  # under Bedrud's 512,000-byte inline limit (chat_upload.go)


def image() -> bytes:
    """A PNG signature and IHDR, then deterministic noise (base64 will not shrink it)."""
    rng = random.Random(22)
    head = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000640000006408060000001f15c489")
    return head + bytes(rng.getrandbits(8) for _ in range(IMAGE_BYTES - len(head)))


def vm_hwm_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


async def run(srv: DevServer, work: str, report: dict) -> dict:
    out = os.path.join(work, "rec")
    home = os.path.join(work, "home")
    os.makedirs(home)
    env = dict(os.environ, HOME=home, NO_COLOR="1")
    # Standard output to a file: a pipe nobody reads would stop the bot at its first long chat line.
    stdout = open(os.path.join(work, "bot.out"), "w")
    bot = subprocess.Popen([BOT, "join", f"{srv.url}/m/{ROOM}", "--record", "--output", out, "--alone-timeout", "1s"],
                           stdout=stdout, stderr=subprocess.PIPE, text=True, env=env, cwd=home, start_new_session=True)
    stdout.close()
    try:
        def bot_active():  # type: ignore[no-untyped-def]
            for r in srv.state()["rooms"]:
                if r["name"] == ROOM:
                    return [p for p in r["participants"] if p.get("client") and p["state"] == "ACTIVE"]
            return None
        wait_for(bot_active, 30, "the bot to be ACTIVE")
        room = await sdk_guest_join(srv, ROOM, "Sender", auto_subscribe=False)
        me = room.local_participant

        async def publish(packet: bytes) -> None:
            """One reliable packet on the chat topic; an SDK that cannot send it in
            PUBLISH_SECONDS (its connection to the devserver failed) fails the probe here."""
            try:
                await asyncio.wait_for(me.publish_data(packet, reliable=True, topic="chat"), PUBLISH_SECONDS)
            except asyncio.TimeoutError:
                head = packet[:80].decode(errors="replace")
                raise TimeoutError(f"the SDK did not send a packet within {PUBLISH_SECONDS} s: {head}…") from None
        picture = image()
        import base64
        data_url = "data:image/png;base64," + base64.b64encode(picture).decode()
        chat = {"type": "chat", "id": "3f0c2a9e-5b1d-4c8e-9a77-000000000022", "timestamp": int(time.time() * 1000),
                "senderName": "Sender", "senderIdentity": me.identity, "message": TEXT,
                "attachments": [{"kind": "image", "url": data_url, "mime": "image/png", "w": 100, "h": 100, "size": len(picture)}]}
        packets = web_chat_packets(chat)
        report["packets"] = len(packets)
        report["packet_sizes_max"] = max(len(p) for p in packets)
        report["meta"] = json.loads(packets[0])
        for p in packets + packets:  # and a retry with the same id, as the web client does
            await publish(p)
        await publish(wire({"type": "reaction", "messageId": chat["id"], "emoji": "👍", "voterIdentity": me.identity}))
        # Wait until the bot has written the chat, then take its memory high-water mark.
        folder = wait_for(lambda: next((os.path.join(out, ROOM, s) for s in os.listdir(os.path.join(out, ROOM))), None)
                          if os.path.isdir(os.path.join(out, ROOM)) else None, 20, "the session folder")
        events_path = os.path.join(folder, "events.jsonl")

        def events() -> list[dict]:
            with open(events_path) as fh:
                lines = [json.loads(line) for line in fh if line.strip()]
            report["event_counts"] = {t: sum(1 for e in lines if e["type"] == t) for t in sorted({e["type"] for e in lines})}
            return lines
        wait_for(lambda: any(e["type"] == "reaction" for e in events()), 120, "the reaction event")
        report["hwm_before_flood_kib"] = vm_hwm_kib(bot.pid)

        # The flood: a thousand-chunk meta that never completes; a meta whose chunks run
        # past every limit; a chunked 40 MB data: URL (700 chunks where 64 are allowed);
        # chunks with no meta at all. Through two Python SCTP stacks that is about 40 s
        # on an idle machine.
        filler = "A" * (SAFE_BYTES - 200)
        flood_started = time.monotonic()
        await publish(wire({"type": "chat_chunk_meta", "id": "never", "timestamp": 1, "senderName": "Sender",
                            "senderIdentity": me.identity, "messageChunks": 1000, "attachmentChunks": 0, "pollChunks": 0}))
        await publish(wire({"type": "chat_chunk_meta", "id": "liar", "timestamp": 1, "senderName": "Sender",
                            "senderIdentity": me.identity, "messageChunks": 60, "attachmentChunks": 0, "pollChunks": 0}))
        for i in range(60):
            await publish(wire({"type": "chat_chunk", "id": "liar", "kind": "message", "index": i, "part": filler}))
        huge = {"type": "chat", "id": "huge", "timestamp": 1, "senderName": "Sender", "senderIdentity": me.identity, "message": "",
                "attachments": [{"kind": "image", "url": "data:image/png;base64," + "A" * (40 << 20), "mime": "image/png",
                                 "w": 1, "h": 1, "size": 30 << 20}]}
        attachments_json = json.dumps(huge["attachments"], separators=(",", ":"))
        step = SAFE_BYTES - 120  # ASCII: one byte per unit
        pieces = (len(attachments_json) + step - 1) // step
        await publish(wire({"type": "chat_chunk_meta", "id": "huge", "timestamp": 1, "senderName": "Sender",
                            "senderIdentity": me.identity, "messageChunks": 0, "attachmentChunks": pieces, "pollChunks": 0}))
        for i in range(pieces):
            await publish(wire({"type": "chat_chunk", "id": "huge", "kind": "attachments", "index": i,
                                "part": attachments_json[i * step:(i + 1) * step]}))
        for i in range(300):
            await publish(wire({"type": "chat_chunk", "id": f"orphan-{i}", "kind": "message", "index": 0, "part": filler}))
        report["huge_chunks"] = pieces
        # The session goes on: a plain chat after the flood is recorded.
        await publish(wire({"type": "chat", "id": "after", "timestamp": 2, "senderName": "Sender", "senderIdentity": me.identity,
                            "message": "still here", "attachments": []}))
        wait_for(lambda: any(e["type"] == "chat" and e["id"] == "after" for e in events()), 240, "the chat after the flood")
        report["flood_seconds"] = round(time.monotonic() - flood_started, 1)
        report["hwm_after_flood_kib"] = vm_hwm_kib(bot.pid)
        await room.disconnect()
        code = bot.wait(timeout=60)
        _, stderr = bot.communicate(timeout=5)
        report["bot_exit"] = code
        report["bot_stderr"] = stderr[-2000:]
    finally:
        if bot.poll() is None:
            bot.terminate()
            try:
                _, stderr = bot.communicate(timeout=10)
                report.setdefault("bot_stderr", stderr[-3000:])
            except subprocess.TimeoutExpired:
                bot.kill()
                bot.wait()
    all_events = events()
    chats = [e for e in all_events if e["type"] == "chat"]
    report["chats"] = [{k: v for k, v in e.items() if k != "message"} | {"message_sha256": hashlib.sha256(e["message"].encode()).hexdigest(),
                                                                          "message_length": len(e["message"])} for e in chats]
    report["text_sha256"] = hashlib.sha256(TEXT.encode()).hexdigest()
    report["text_length"] = len(TEXT)
    report["image_sha256"] = hashlib.sha256(picture).hexdigest()
    saved = {}
    for e in chats:
        for a in e["attachments"]:
            if "path" in a:
                with open(os.path.join(folder, a["path"]), "rb") as fh:
                    saved[a["path"]] = hashlib.sha256(fh.read()).hexdigest()
    report["saved_sha256"] = saved
    report["dropped"] = [{k: e[k] for k in ("id", "reason", "received_chunks", "expected_chunks")} for e in all_events if e["type"] == "chat_dropped"]
    report["reactions"] = [{k: e[k] for k in ("message_id", "emoji")} for e in all_events if e["type"] == "reaction"]
    report["files"] = sorted(os.listdir(folder))
    check = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "validate_events.py"), folder],
                           capture_output=True, text=True, timeout=60)
    report["schema_check"] = {"exit": check.returncode, "output": check.stdout[-3000:] + check.stderr[-2000:]}
    with open(os.path.join(folder, "summary.json")) as fh:
        report["summary_end_reason"] = json.load(fh).get("end_reason")
    return report


async def main() -> int:
    srv = DevServer("--seed-room", ROOM)
    work = tempfile.mkdtemp(prefix="sdk-chat-")
    report: dict = {}
    try:
        await within_probe_deadline(run(srv, work, report), 555)
    except BaseException as exc:  # noqa: BLE001 — the report carries the failure
        report["error"] = "".join(traceback.format_exception(exc))
    finally:
        srv.stop()
        report["devserver_stderr"] = srv.stderr_lines[-40:]
        shutil.rmtree(work, ignore_errors=True)
    print("SDK-CHAT-REPORT " + json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
