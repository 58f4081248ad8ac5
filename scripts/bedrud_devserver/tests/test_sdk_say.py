"""What `bedrud-bot say` sends reaches the official LiveKit SDK (sdk_say_probe.py, inside
scripts/netns-run) as a chat packet the Bedrud web client accepts and renders: its
receiver rules are in docs/reference/bedrud-api.md §3.1."""
from __future__ import annotations

import json
import uuid

import pytest

from .helpers import run_sdk_probe


@pytest.fixture(scope="module")
def report() -> dict:
    data = run_sdk_probe("sdk_say_probe", "SDK-SAY-REPORT", timeout=150)
    assert data["bot_exit"] == 0, data["bot_stderr"]
    return data


def test_the_sdk_gets_exactly_one_reliable_chat_packet(report):
    received = report["received"]
    assert len(received) == 1, received
    packet = received[0]
    # The web client requires topic "chat"; the packet is the bot's own (its identity).
    assert packet["reliable"] is True and packet["topic"] == "chat", packet
    assert packet["sender_name"] == "Announcer", packet


def test_the_payload_satisfies_the_web_clients_receiver_rules(report):
    packet = report["received"][0]
    chat = json.loads(packet["payload"])
    assert chat["type"] == "chat"
    assert str(uuid.UUID(chat["id"])) == chat["id"], "id is a lowercase UUID"
    # Unix milliseconds, taken when the bot sent it (within the run's few seconds).
    assert isinstance(chat["timestamp"], int)
    assert report["sent_at"] * 1000 - 1000 <= chat["timestamp"] <= packet["at"] * 1000 + 1000, (chat, report["sent_at"])
    assert chat["message"] == report["text"], "the text arrives unchanged (UTF-8, quotes, emoji, RTL)"
    assert chat["senderName"] == "Announcer"
    assert chat["senderIdentity"] == packet["sender"], "senderIdentity is the packet's sender"
    # The web client renders only kind "image" with an http(s) URL; iOS also needs mime.
    assert chat["attachments"] == [{"kind": "image", "url": report["attach"], "mime": "image/png", "w": 0, "h": 0, "size": 0}]


def _web_client_renders(url: str, origin: str) -> bool:
    """The web client's test before it renders an attachment (v0.12.0
    apps/web/src/components/meeting/chat/ChatMessageCluster.tsx:19-28): a `data:` URL, or
    one that, resolved against the page's origin, is http or https."""
    from urllib.parse import urljoin, urlsplit
    if url.startswith("data:"):
        return True
    try:
        return urlsplit(urljoin(origin + "/", url)).scheme in ("http", "https")
    except ValueError:
        return False


def test_an_uploaded_image_arrives_as_a_path_the_web_client_renders(report):
    """An image Bedrud stores is sent with the path the upload answered (relative to the
    server); the web client resolves it against its own origin and renders it."""
    assert report["upload_exit"] == 0, report["upload_stderr"]
    [packet] = report["received_upload"]
    chat = json.loads(packet["payload"])
    [image] = chat["attachments"]
    assert image["kind"] == "image" and image["mime"] == "image/png" and image["size"] == 600_000, image
    assert image["url"].startswith("/uploads/chat/") and image["url"].endswith(".png"), image
    assert _web_client_renders(image["url"], "https://meet.example.org")
    assert not _web_client_renders("javascript:alert(1)", "https://meet.example.org")


def _web_reassemble(packets: list[dict]) -> dict:
    """The web client's receiver (MeetingContext.tsx `chat_chunk_meta` / `chat_chunk`
    branches, chatDataChannel.ts `applyChatChunkPart`, `assembledChatFromChunks`)."""
    metas = [json.loads(p["payload"]) for p in packets if json.loads(p["payload"])["type"] == "chat_chunk_meta"]
    assert len(metas) == 1, [json.loads(p["payload"])["type"] for p in packets]
    meta = metas[0]
    for key in ("messageChunks", "attachmentChunks", "pollChunks"):
        assert isinstance(meta[key], int) and meta[key] >= 0
    assert isinstance(meta["id"], str) and meta["id"] and isinstance(meta["timestamp"], int)
    sections = {"message": [None] * meta["messageChunks"], "attachments": [None] * meta["attachmentChunks"],
                "poll": [None] * meta["pollChunks"]}
    for p in packets:
        chunk = json.loads(p["payload"])
        if chunk["type"] != "chat_chunk":
            continue
        assert chunk["id"] == meta["id"] and chunk["kind"] in sections and isinstance(chunk["part"], str)
        assert sections[chunk["kind"]][chunk["index"]] is None, "each index once"
        sections[chunk["kind"]][chunk["index"]] = chunk["part"]
    assert all(part is not None for parts in sections.values() for part in parts), "every chunk arrived"
    chat = {"id": meta["id"], "senderName": meta["senderName"], "senderIdentity": meta["senderIdentity"],
            "message": "".join(sections["message"]),
            "attachments": json.loads("".join(sections["attachments"])) if meta["attachmentChunks"] else []}
    return chat


def test_a_long_message_with_an_image_arrives_in_chunks_the_web_client_puts_together(report):
    import base64
    import hashlib
    packets = report["received_long"]
    assert report["long_exit"] == 0, report["long_stderr"]
    assert all(p["reliable"] and p["topic"] == "chat" for p in packets)
    assert all(len(p["payload"].encode()) <= 60_000 for p in packets), "each packet within CHAT_DATA_SAFE_BYTES"
    assert json.loads(packets[0]["payload"])["type"] == "chat_chunk_meta", "the meta goes first"
    chat = _web_reassemble(packets)
    assert chat["message"] == report["long_text"]
    assert chat["senderIdentity"] and chat["senderName"] == "Announcer"
    [image] = chat["attachments"]
    # normalizeChatAttachment: url and mime strings, kind image.
    assert image["kind"] == "image" and image["mime"] == "image/png" and image["size"] == 200_000
    prefix = "data:image/png;base64,"
    assert image["url"].startswith(prefix)
    assert hashlib.sha256(base64.b64decode(image["url"][len(prefix):])).hexdigest() == report["image_sha256"]


def test_react_sends_the_web_clients_reaction(report):
    assert report["react_exit"] == 0, report["react_stderr"]
    [packet] = report["received_react"]
    assert packet["reliable"] and packet["topic"] == "chat"
    reaction = json.loads(packet["payload"])
    assert set(reaction) == {"type", "messageId", "emoji", "voterIdentity"} and reaction["voterIdentity"]
    assert (reaction["type"], reaction["messageId"], reaction["emoji"]) == ("reaction", "first-message", "👍")
