"""What `bedrud-bot play` publishes from an Ogg Opus file is heard by the official
LiveKit SDK (sdk_play_probe.py, inside scripts/netns-run), and its PCM correlates with
the file's PCM decoded by FFmpeg."""
from __future__ import annotations

import json

import pytest

from .helpers import run_sdk_probe


@pytest.fixture(scope="module")
def report() -> dict:
    data = run_sdk_probe("sdk_play_probe", "SDK-PLAY-REPORT", timeout=180)
    assert data["bot_exit"] == 0, data["bot_stderr"]
    print("SDK play report:", {k: v for k, v in data.items() if k not in ("devserver_stderr", "bot_stderr")})
    return data


def test_the_sdk_hears_the_file_as_it_is(report):
    # Passthrough: libwebrtc decodes the file's own packets, so what the SDK hears is the
    # file's PCM, second by second (the median of voiced seconds at their best lag).
    assert report["listener_seconds"] >= report["file_seconds"] - 0.5, report
    windows = report["correlation_windows"]
    assert len(windows) >= 8, windows
    assert report["correlation"] >= 0.95, windows


def test_the_sdk_side_sample_count_keeps_to_the_wall_clock(report):
    assert report["stream_seconds"] > 10, report
    assert abs(report["wall_drift_ms"]) <= 20, report
