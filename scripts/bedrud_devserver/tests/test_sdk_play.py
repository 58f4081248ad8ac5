"""What `bedrud-bot play` publishes from an Ogg Opus file is heard by the official
LiveKit SDK (sdk_play_probe.py, inside scripts/netns-run), and its PCM correlates with
the file's PCM decoded by FFmpeg."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from .helpers import REPO

NETNS_RUN = os.path.join(REPO, "scripts", "netns-run")
BOT = os.path.join(REPO, ".build", "release", "bedrud-bot")


@pytest.fixture(scope="module")
def report() -> dict:
    if not os.access(BOT, os.X_OK):
        pytest.fail(f"{BOT} is missing: run scripts/bootstrap")
    check = subprocess.run([NETNS_RUN, "true"], capture_output=True, text=True, timeout=60)
    if check.returncode != 0:
        pytest.fail("scripts/netns-run cannot create a network namespace (run as root): " + check.stderr.strip())
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "scripts"))
    proc = subprocess.run([NETNS_RUN, sys.executable, "-m", "bedrud_devserver.tests.sdk_play_probe"],
                          capture_output=True, text=True, timeout=180, env=env, cwd=REPO)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("SDK-PLAY-REPORT ")]
    assert proc.returncode == 0 and lines, f"probe failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    data = json.loads(lines[-1][len("SDK-PLAY-REPORT "):])
    assert "error" not in data, data["error"] + "\n" + "\n".join(data["devserver_stderr"])
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
