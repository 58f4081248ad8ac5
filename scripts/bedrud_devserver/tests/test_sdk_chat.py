"""Bedrud web v0.12's chat wire from the official LiveKit SDK to the bot's files
(sdk_chat_probe.py, inside scripts/netns-run): a chunked chat with an inline image,
encoded as the web client encodes it, becomes one `chat` event with the whole text and
the image saved byte for byte; a flood of chunks is dropped and counted while the
session goes on."""
from __future__ import annotations

import pytest

from .helpers import run_sdk_probe


@pytest.fixture(scope="module")
def report() -> dict:
    data = run_sdk_probe("sdk_chat_probe", "SDK-CHAT-REPORT", timeout=600)
    assert data["bot_exit"] == 0, data["bot_stderr"]
    return data


def test_the_web_encoding_was_chunked(report):
    # 83,200 characters of text and a 300,000-byte image: meta + 3 + 7 packets of at most 60,000 bytes.
    assert report["meta"]["messageChunks"] == 3 and report["meta"]["attachmentChunks"] == 7, report["meta"]
    assert report["packets"] == 11 and report["packet_sizes_max"] <= 60_000


def test_one_chat_event_with_the_whole_text_and_the_image_saved_byte_for_byte(report):
    chunked = [c for c in report["chats"] if c["id"] == report["meta"]["id"]]
    assert len(chunked) == 1, "the retry with the same id is dropped"
    chat = chunked[0]
    assert chat["message_length"] == report["text_length"] and chat["message_sha256"] == report["text_sha256"]
    assert chat["participant"]["name"] == "Sender"
    [attachment] = chat["attachments"]
    assert attachment == {"kind": "image", "mime": "image/png", "bytes": 300_000, "saved": True,
                          "path": f"attachments/{report['meta']['id']}-0.png"}
    assert report["saved_sha256"] == {attachment["path"]: report["image_sha256"]}
    assert report["reactions"] == [{"message_id": report["meta"]["id"], "emoji": "👍"}]


def test_the_flood_is_dropped_and_counted_and_the_session_goes_on(report):
    assert report["dropped"] == [
        {"id": "never", "reason": "too_many_chunks", "received_chunks": 0, "expected_chunks": 1000},
        {"id": "liar", "reason": "too_large", "received_chunks": 33, "expected_chunks": 60},
        {"id": "huge", "reason": "too_many_chunks", "received_chunks": 0, "expected_chunks": report["huge_chunks"]},
    ]
    assert [c["id"] for c in report["chats"]][-1] == "after"
    assert report["summary_end_reason"] == "alone"
    assert report["schema_check"]["exit"] == 0, report["schema_check"]["output"]
