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
import hashlib
import json
import math
import re
import struct
import zlib

SAFE_BYTES = 60_000
INLINE_MAX_BYTES = 512_000  # server/internal/storage/chat_upload.go: smaller uploads become data: URLs


def wire(obj: dict) -> bytes:
    """JSON.stringify + TextEncoder: no spaces, UTF-8, keys in the order written, and a lone
    surrogate (half of a pair cut apart) as a `\\uXXXX` escape, as JSON.stringify writes it."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return re.sub("[\ud800-\udfff]", lambda m: "\\u%04x" % ord(m.group()), text).encode("utf-8")


def _units(text: str) -> list[int]:
    data = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[i:i + 2], "little") for i in range(0, len(data), 2)]


def _text(units: list[int]) -> str:
    return b"".join(u.to_bytes(2, "little") for u in units).decode("utf-16-le", "surrogatepass")


def _unit_cost(u: int) -> int:
    if u in (0x22, 0x5C, 0x08, 0x0C, 0x0A, 0x0D, 0x09):
        return 2
    if u < 0x20 or 0xD800 <= u <= 0xDFFF:
        return 6
    return 1 if u < 0x80 else 2 if u < 0x800 else 3


def _split(msg_id: str, kind: str, text: str) -> list[str]:
    # As splitUtf8ByMaxBytes: the text is cut on UTF-16 units, each part the result of the
    # same binary search over the encoded packet size (sized with index 0). The size is not
    # monotonic in the cut (a lone high surrogate costs 6 bytes, the whole pair 4), so the
    # search is reproduced step by step rather than taking the longest part that fits.
    overhead = len(wire({"type": "chat_chunk", "id": msg_id, "kind": kind, "index": 0, "part": ""}))
    units = _units(text)
    parts: list[str] = []
    start = 0
    while start < len(units):
        rest = units[start:]
        cost = [0] * (len(rest) + 1)
        high_before = False
        for k, u in enumerate(rest):
            if high_before and 0xDC00 <= u <= 0xDFFF:
                c, high_before = 4 - 6, False
            else:
                c, high_before = _unit_cost(u), 0xD800 <= u <= 0xDBFF
            cost[k + 1] = cost[k] + c
        lo, hi, best = 1, len(rest), 0
        while lo <= hi:
            mid = (lo + hi) // 2
            if overhead + cost[mid] <= SAFE_BYTES:
                best, lo = mid, mid + 1
            else:
                hi = mid - 1
        if best == 0:
            raise ValueError("chunk overhead exceeds the limit")
        parts.append(_text(rest[:best]))
        start += best
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


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PAD_KEYWORD = b"Comment\0"


def pattern_png(size: int) -> bytes:
    """A valid PNG of exactly `size` bytes (below 89 bytes, the smallest: 69), the same bytes
    for the same size: 8-bit RGB noise from SHAKE-256 of the size, so it does not
    compress away, in one IDAT; a `tEXt` chunk pads it to the byte. Decoders, `file` and a
    browser (report.html) see a picture."""
    def build(width: int, height: int, pad: int) -> bytes:
        row = 1 + 3 * width
        noise = hashlib.shake_256(b"bedrud-devserver chat-image %d" % size).digest(row * height)
        # Filter type 0 (None) on every row: the first byte of each row is 0.
        raw = b"".join(b"\0" + noise[y * row + 1:(y + 1) * row] for y in range(height))
        out = PNG_SIGNATURE + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        out += _png_chunk(b"IDAT", zlib.compress(raw, 9))
        if pad >= 0:
            out += _png_chunk(b"tEXt", _PAD_KEYWORD + (b"bedrud-devserver chat-image " * (pad // 28 + 1))[:pad])
        return out + _png_chunk(b"IEND", b"")

    pad_chunk = 12 + len(_PAD_KEYWORD)
    # Noise barely compresses: a first guess at the pixel count, then fewer rows (or columns)
    # until the picture leaves room for the padding chunk.
    width = max(1, math.isqrt(max(0, size - 100 - pad_chunk) // 3))
    height = max(1, (size - 100 - pad_chunk) // (1 + 3 * width))
    while True:
        bare = len(build(width, height, -1))
        if bare + pad_chunk <= size or (width, height) == (1, 1):
            break
        over = bare + pad_chunk - size
        row = 1 + 3 * width
        if height > 1:
            height = max(1, height - max(1, -(-over // row)))
        else:
            width = max(1, width - max(1, -(-over // 3)))
    return build(width, height, size - bare - pad_chunk if bare + pad_chunk <= size else -1)
