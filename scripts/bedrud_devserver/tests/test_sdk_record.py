"""The bot records what libwebrtc really sends, through the devserver's forwarding path.

sdk_record_probe.py (inside scripts/netns-run) has the official LiveKit SDK publish
speech with long pauses (DTX on, RED on) and a 2 s mute while the built bot
(`.build/release/bedrud-bot join … --record`) and an SDK listener are subscribed.
Each test checks one part of its report.
"""
from __future__ import annotations

import pytest

from .helpers import run_sdk_probe

RATE = 48000


@pytest.fixture(scope="module")
def report() -> dict:
    data = run_sdk_probe("sdk_record_probe", "SDK-RECORD-REPORT", timeout=180)
    assert data["bot_exit"] == 0, data["bot_stderr"]
    return data


def test_libwebrtc_sent_red_dtx_and_its_own_timestamps(report):
    # The SDK published with RED (LiveKit answers RED first) and DTX (usedtx=1).
    assert report["mime"] == "audio/red"
    assert report["received_red"] == report["received_packets"] > 300
    assert report["seq_contiguous"]
    # DTX: one packet per 400 ms in the pauses, 1-byte packets among them.
    assert report["timestamp_steps"].get(str(400 * RATE // 1000), 0) >= 5, report["timestamp_steps"]
    assert 1 in report["received_sizes"]
    assert report["withheld_muted"] > 0  # the server withholds a muted publisher's packets


def test_a_subscriber_that_accepts_red_gets_red_and_the_bot_gets_the_primaries(report):
    by_codec = {s["codec"]: s for s in report["subscriptions"]}
    assert set(by_codec) == {"audio/red", "audio/opus"}, report["subscriptions"]
    listener, bot = by_codec["audio/red"], by_codec["audio/opus"]
    assert listener["redSent"] == listener["packetsSent"] > 300 and listener["opusSent"] == 0
    assert bot["opusSent"] == bot["packetsSent"] > 300 and bot["redSent"] == 0
    assert report["listener_rms"] > 0.01 and report["listener_seconds"] > 10


def test_the_bots_file_holds_exactly_the_opus_payloads_libwebrtc_sent(report):
    assert report["payloads_identical"], report.get("payload_mismatch")
    assert report["received_before_subscribed"] <= 5


def test_every_dtx_and_mute_span_is_filled(report):
    # Every packet sits where its timestamp says: between two packets, fillers make up
    # exactly their timestamp difference (DTX pauses); across the mute, the wall time.
    assert report["placement_error_count"] == 0, report["placement_errors"]
    resync = report["mute_resync"]
    assert resync and abs(resync["file_step_ms"] - resync["arrival_step_ms"]) <= 20, resync
    # The file lasts as long as the track was there: from the bot's first packet to the
    # leave as the bot saw it (its own clock, events.jsonl) ...
    assert abs(report["file_duration_seconds"] - report["bot_presence_seconds"]) <= 0.020, report
    # ... and as the server saw it, which the leave reaches the bot later than (signalling latency).
    error = report["file_duration_seconds"] - report["published_span_seconds"]
    assert -0.020 <= error <= 0.100, (report["file_duration_seconds"], report["published_span_seconds"])
    causes = [g["cause"] for g in report["gaps"]]
    assert causes.count("dtx") >= 5, report["gaps"]
    mutes = [g for g in report["gaps"] if g["cause"] == "mute"]
    assert len(mutes) == 1 and abs(mutes[0]["duration_ms"] - 2000) <= 100, report["gaps"]
    assert report["file_fillers"] > 0


def test_the_recording_correlates_with_the_published_pcm(report):
    # Waveform correlation per voiced second, each at its best lag (measured 0.94–0.98:
    # what Opus at ~21 kbit/s keeps of espeak-ng speech). A second may hold a 10 ms shift
    # of the published timeline (the SDK pads an underrun of our pacing), hence the median.
    windows = report["correlation_windows"]
    assert len(windows) >= 8, windows
    assert report["correlation"] >= 0.93, windows
    assert sum(1 for w in windows if w >= 0.9) >= len(windows) - 2, windows


def test_the_bots_events_match_the_published_schema(report):
    assert report["schema_check"]["exit"] == 0, report["schema_check"]["output"]
