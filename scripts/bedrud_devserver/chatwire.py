"""Bedrud web v0.12's chat wire, written from the rules of its client
(apps/web/src/components/meeting/chat/chatDataChannel.ts `buildChatWirePackets`,
MeetingContext.tsx `sendChat`, `reactToMessage`, `votePoll`, `notifyProfileChanged`,
`advertiseDeafenedState`): what scripted participants and SDK probes send.

A chat whose JSON is over 60,000 UTF-8 bytes goes as a `chat_chunk_meta` and then
`chat_chunk`s of each section (message text, attachments JSON, poll JSON), each part the
longest prefix whose packet, sized with index 0, fits in 60,000 bytes.
"""
from __future__ import annotations

import base64
import json

SAFE_BYTES = 60_000
INLINE_MAX_BYTES = 512_000  # server/internal/storage/chat_upload.go: smaller uploads become data: URLs


def wire(obj: dict) -> bytes:
    """JSON.stringify + TextEncoder: no spaces, UTF-8, keys in the order written."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _split(msg_id: str, kind: str, text: str) -> list[str]:
    # The web client cuts on UTF-16 units, but JSON.stringify spends 6 bytes on a lone
    # surrogate and 4 on a pair, so the largest fitting prefix never ends inside a pair:
    # cutting on code points gives the same parts.
    parts: list[str] = []
    rest = text
    while rest:
        lo, hi, best = 1, len(rest), 0
        while lo <= hi:
            mid = (lo + hi) // 2
            if len(wire({"type": "chat_chunk", "id": msg_id, "kind": kind, "index": 0, "part": rest[:mid]})) <= SAFE_BYTES:
                best, lo = mid, mid + 1
            else:
                hi = mid - 1
        if best == 0:
            raise ValueError("chunk overhead exceeds the limit")
        parts.append(rest[:best])
        rest = rest[best:]
    return parts


def chat_packets(chat: dict) -> list[bytes]:
    """The payloads the web client publishes on topic `chat` for one message."""
    single = wire(chat)
    if len(single) <= SAFE_BYTES:
        return [single]
    sections = [("message", chat.get("message", "")),
                ("attachments", json.dumps(chat["attachments"], ensure_ascii=False, separators=(",", ":")) if chat.get("attachments") else ""),
                ("poll", json.dumps(chat["poll"], ensure_ascii=False, separators=(",", ":")) if "poll" in chat else "")]
    parts = {kind: _split(chat["id"], kind, text) for kind, text in sections}
    meta = {"type": "chat_chunk_meta", "id": chat["id"], "timestamp": chat["timestamp"], "senderName": chat["senderName"],
            "senderIdentity": chat["senderIdentity"], "messageChunks": len(parts["message"]),
            "attachmentChunks": len(parts["attachments"]), "pollChunks": len(parts["poll"])}
    out = [wire(meta)]
    for kind, _ in sections:
        out += [wire({"type": "chat_chunk", "id": chat["id"], "kind": kind, "index": i, "part": p}) for i, p in enumerate(parts[kind])]
    return out


def inline_image(data: bytes, mime: str, w: int = 0, h: int = 0) -> dict:
    """The attachment Bedrud's upload returns for a small image (chat_upload.go)."""
    return {"kind": "image", "url": f"data:{mime};base64," + base64.b64encode(data).decode(), "mime": mime, "w": w, "h": h,
            "size": len(data)}


def pattern_png(size: int) -> bytes:
    """`size` bytes: a PNG signature, then byte i = (i * 131 + (i >> 8)) & 0xFF (a test can rebuild it)."""
    head = bytes.fromhex("89504e470d0a1a0a")
    return head + bytes(((i * 131 + (i >> 8)) & 0xFF) for i in range(len(head), size))
