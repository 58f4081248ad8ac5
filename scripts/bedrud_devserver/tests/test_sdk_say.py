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
