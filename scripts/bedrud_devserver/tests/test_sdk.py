"""Proof of faithfulness: the official LiveKit Python SDK (libwebrtc) against the devserver.

The SDK ignores loopback, so sdk_probe.py runs inside a private network namespace
made by scripts/netns-run (root needed: this machine and CI run as root). One
probe run covers the scenario room and the forwarding room; each test below
checks one part of its report.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from .helpers import REPO

NETNS_RUN = os.path.join(REPO, "scripts", "netns-run")


@pytest.fixture(scope="module")
def report() -> dict:
    check = subprocess.run([NETNS_RUN, "true"], capture_output=True, text=True, timeout=60)
    if check.returncode != 0:
        pytest.fail("scripts/netns-run cannot create a network namespace (run as root): " + check.stderr.strip())
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "scripts"))
    proc = subprocess.run([NETNS_RUN, sys.executable, "-m", "bedrud_devserver.tests.sdk_probe"],
                          capture_output=True, text=True, timeout=240, env=env, cwd=REPO)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("SDK-PROBE-REPORT ")]
    assert proc.returncode == 0 and lines, f"probe failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    data = json.loads(lines[-1][len("SDK-PROBE-REPORT "):])
    for part in ("scenario", "forwarding"):
        assert "error" not in data[part], f"{part} failed:\n{data[part].get('error')}\n" + "\n".join(data["devserver_stderr"])
    return data


def events(part: dict, kind: str) -> list[dict]:
    return [e for e in part["events"] if e["event"] == kind]


def test_scripted_tone_arrives_with_energy_and_frequency(report):
    audio = report["scenario"]["audio"]
    alice = [a for a in audio.values() if a["owner"] == "alice"]
    assert alice, audio
    # A 0.3-amplitude sine has RMS 0.212; the SDK decodes what aiortc encoded.
    assert 0.17 <= alice[0]["rms"] <= 0.25, alice
    assert abs(alice[0]["frequency"] - 440.0) <= 3.0, alice
    assert alice[0]["seconds"] >= 4.0


def test_chat_and_system_data_packets(report):
    data = report["scenario"]["data"]
    chats = [d for d in data if d["topic"] == "chat"]
    assert chats and chats[0]["from"] == "alice", data
    msg = chats[0]["json"]
    assert msg["type"] == "chat" and msg["message"] == "hello from alice" and msg["senderIdentity"] == "alice"
    assert set(msg) >= {"id", "timestamp", "senderName"}
    system = [d for d in data if d["topic"] == "system"]
    assert system and system[0]["from"] is None  # sent by the server, no participant
    assert system[0]["json"] == {"type": "system", "event": "spotlight", "actor": "alice", "target": "alice"}
    assert all(d["kind"] == 1 for d in data)  # reliable


def test_join_leave_and_mute_events(report):
    part = report["scenario"]
    joined = [e["identity"] for e in events(part, "participant_connected")]
    left = [e["identity"] for e in events(part, "participant_disconnected")]
    assert "alice" in joined and "bob" in joined, part["events"]
    assert left == ["bob"], part["events"]
    muted, unmuted = events(part, "track_muted"), events(part, "track_unmuted")
    assert [e["identity"] for e in muted] == ["alice"] and [e["identity"] for e in unmuted] == ["alice"]
    assert muted[0]["t"] < unmuted[0]["t"]
    assert any("alice" in e["identities"] for e in events(part, "active_speakers"))
    assert events(part, "connection_quality")


def test_kick_is_participant_removed(report):
    assert report["scenario"]["disconnect_reason"] == "PARTICIPANT_REMOVED"


def test_two_sdk_clients_hear_each_other_through_forwarding(report):
    part = report["forwarding"]
    tracks = list(part["audio"].values())
    assert len(tracks) == 1, part["audio"]
    assert 0.17 <= tracks[0]["rms"] <= 0.25 and abs(tracks[0]["frequency"] - 660.0) <= 3.0, tracks
    chats = [d for d in part["data"] if d["topic"] == "chat"]
    assert chats and chats[0]["json"]["message"] == "from speaker" and chats[0]["from"] == tracks[0]["owner"]
    assert [e["identity"] for e in events(part, "participant_disconnected")] == [tracks[0]["owner"]]


def test_server_stats_saw_receiver_reports(report):
    rooms = {r["name"]: r for r in report["state"]["rooms"]}
    # The probe's clients are gone by now; the counters that prove RTCP flowed
    # back are checked in test_signal.py while a client is connected.
    assert report["state"]["counters"]["signal_connections"] >= 3
    assert report["state"]["counters"]["bad_frames"] == 0
    assert "sdkproof" not in rooms or not [p for p in rooms["sdkproof"]["participants"] if not p["scripted"]]
