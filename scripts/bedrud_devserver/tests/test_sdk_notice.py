"""A recording bot tells the room it is recorded: its notice reaches the official LiveKit
SDK (sdk_notice_probe.py, inside scripts/netns-run) as one chat packet the Bedrud web
client renders (receiver rules: docs/reference/bedrud-api.md §3.1)."""
from __future__ import annotations

import json
import uuid

import pytest

from .helpers import run_sdk_probe


@pytest.fixture(scope="module")
def report() -> dict:
    data = run_sdk_probe("sdk_notice_probe", "SDK-NOTICE-REPORT", timeout=120)
    assert data["bot_exit"] == 0, data["bot_stderr"]
    return data


def test_the_notice_arrives_once_as_an_ordinary_chat(report):
    chats = [r for r in report["received"] if r["topic"] == "chat"]
    assert len(chats) == 1, report["received"]
    [packet] = chats
    assert packet["reliable"] is True
    chat = json.loads(packet["payload"])
    assert chat["type"] == "chat"
    assert str(uuid.UUID(chat["id"])) == chat["id"], "id is a lowercase UUID"
    assert isinstance(chat["timestamp"], int)
    assert report["started_at"] * 1000 - 1000 <= chat["timestamp"] <= packet["at"] * 1000 + 1000
    assert chat["message"] == "This meeting is being recorded."
    assert chat["senderName"] == "Recorder"
    assert chat["senderIdentity"] == packet["sender"], "senderIdentity is the packet's sender"
    assert chat["attachments"] == []
    assert "Told the room it is being recorded (record.announce)." in report["bot_stderr"]
