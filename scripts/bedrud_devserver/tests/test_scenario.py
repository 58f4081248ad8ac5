"""Scenario files: the pure parser, the samples, and what a running scenario does."""
from __future__ import annotations

import asyncio
import glob
import os
import subprocess
import wave

import numpy as np
import pytest
from livekit.protocol import models as lkm

from .. import patches
from ..scenario import ScenarioError, parse
from .helpers import DEVSERVER, REPO, DevServer
from .lkclient import LKClient, dominant_frequency, rms
from .test_signal import lk_token, participants

patches.apply(["127.0.0.1"])

SAMPLES = sorted(glob.glob(os.path.join(REPO, "samples", "scenarios", "*.scenario")))


def test_there_are_samples_and_they_parse():
    assert len(SAMPLES) >= 4
    for path in SAMPLES:
        with open(path, encoding="utf-8") as f:
            sc = parse(f.read(), path)
        assert sc.room and sc.steps, path


def test_parse_times_and_commands():
    sc = parse("""
        room demo private   # trailing comment
        start first-join
        at 1s join a name="A B" metadata='{"x":1}'
        +500ms tone a 440Hz 2s amplitude=0.5
        +1s chat a hello   there
        at 0.5s faults loss=5% jitter=30ms
        at 10s system deafen target=a
    """, "demo.scenario")
    assert (sc.room, sc.public, sc.start) == ("demo", False, "first-join")
    assert [(s.at, s.command) for s in sc.steps] == [(0.5, "faults"), (1.0, "join"), (1.5, "tone"), (2.5, "chat"),
                                                     (10.0, "system")]
    join = sc.steps[1]
    assert join.options == {"name": "A B", "metadata": '{"x":1}'}
    assert sc.steps[3].args == ["a", "hello there"]


@pytest.mark.parametrize("text,message", [
    ("at 1s join a", "no 'room NAME' line"),
    ("room x\n", "t.scenario:1: room name must be at least 3 characters"),
    ("room abc\nat 1s dance a", "t.scenario:2: unknown command 'dance'"),
    ("room abc\nat soon join a", "t.scenario:2: bad duration 'soon'"),
    ("room abc\nat 1s join a name=\"open", "t.scenario:2: No closing quotation (unterminated quote?)"),
    ("room abc\nat 1s mute ghost", "t.scenario:2: mute: 'ghost' has not joined by this line"),
    ("room abc\nat 1s join a\nat 2s tone a loud 2s", "t.scenario:3: tone: expected tone ID FREQ DURATION"),
    ("room abc\nat 1s join a\nat 2s tone a 5Hz 2s", None),  # range is checked when clips render
    ("room abc\nat 1s join a color=red", "t.scenario:2: unknown option 'color' for join"),
    ("room abc\nat 1s faults loss=200%", "t.scenario:2: faults: loss must be between 0% and 100%"),
    ("room abc\nat 1s faults wobble=1", "t.scenario:2: unknown option 'wobble' for faults"),
    ("room abc\nat 1s system party", "t.scenario:2: system: unknown event 'party'"),
    ("room abc\nstart later", "t.scenario:2: expected: start immediate|first-join"),
    ("room abc\nhello", "t.scenario:2: unknown line 'hello'"),
    ("room abc\nat 1s", "t.scenario:2: expected a command after the time"),
    ("room abc\nat 1s drop $client never", "t.scenario:2: drop: bad duration 'never'"),
    ("room abc\nat 1s join a clock=3s", "t.scenario:2: join: clock=3s: a clock offset starts with + or -"),
    ("room abc\nat 1s join a clock=+25h", "t.scenario:2: join: clock=+25h: a clock offset is at most a day"),
    ("room abc\nat 1s join a clock=+soon", "t.scenario:2: join: clock=+soon: bad duration 'soon'"),
    ("room abc\nidle quiet", "t.scenario:2: expected: idle silence|dtx|pause"),
    ("room abc\nat 1s join a idle=mute", "t.scenario:2: join: idle= must be one of silence, dtx, pause"),
    ("room abc\nat 1s pause ghost", "t.scenario:2: pause: 'ghost' has not joined by this line"),
])
def test_parse_errors_name_file_and_line(text, message):
    if message is None:
        parse(text, "t.scenario")
        return
    with pytest.raises(ScenarioError) as err:
        parse(text, "t.scenario")
    assert str(err.value).startswith(message) or message in str(err.value), str(err.value)


def test_idle_line_and_join_option():
    sc = parse("room abc\nidle dtx\nat 0s join a\nat 0s join b idle=silence\nat 1s pause a\n", "t.scenario")
    assert sc.idle == "dtx"
    assert [(st.command, st.options.get("idle")) for st in sc.steps] == [("join", None), ("join", "silence"),
                                                                         ("pause", None)]
    assert parse("room abc\n", "t.scenario").idle is None  # then --scripted-idle decides


def test_a_participants_clock_offset_is_signed_seconds():
    sc = parse("room abc\nat 0s join a clock=+3s\nat 0s join b clock=-1.5s\nat 0s join c\n", "t.scenario")
    assert [st.options.get("_clock") for st in sc.steps] == ["3.0", "-1.5", None]


def test_bad_scenario_file_exits_2_before_serving(tmp_path):
    bad = tmp_path / "bad.scenario"
    bad.write_text("room abc\nat 1s join a\nat 2s explode a\n")
    p = subprocess.run([DEVSERVER, "--port", "0", "--scenario", str(bad)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and f"{bad}:3: unknown command 'explode'" in p.stderr and p.stdout == ""
    missing = tmp_path / "clip.scenario"
    missing.write_text("room abc\nat 0s join a\nat 1s speak a nowhere.wav\n")
    p = subprocess.run([DEVSERVER, "--port", "0", "--scenario", str(missing)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and f"{missing}:3: speak: audio file not found" in p.stderr


def _write_wav(path: str, freq: float, seconds: float) -> None:
    t = np.arange(int(seconds * 16000)) / 16000
    data = (np.sin(2 * np.pi * freq * t) * 0.4 * 32767).astype(np.int16)
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(data.tobytes())


def test_running_scenario_first_join_speech_file_dtx_and_leave(tmp_path):
    _write_wav(str(tmp_path / "beep.wav"), 700.0, 1.5)
    (tmp_path / "run.scenario").write_text("""
        room sc-run public
        start first-join
        at 0s    join host name="Host"
        at 0.2s  say host "testing one two three four five"
        at 3s    speak host beep.wav
        at 5s    pause host
        at 7s    silence host
        at 8.5s  leave host
    """)
    srv = DevServer("--scenario", str(tmp_path / "run.scenario"))
    try:
        assert srv.lines[-2] == "scenario=run room=sc-run"
        state = srv.state()
        assert state["scenarios"][0]["started"] is False and participants(state, "sc-run") == {}

        async def go() -> None:
            c = LKClient(srv.url + "/livekit", lk_token("sc-run", identity="rec"))
            try:
                await c.connect()
                await c.wait_for(lambda: c.of("join")[0].other_participants or
                                 [u for m in c.of("update") for u in m.participants if u.identity == "host"],
                                 10, "host joins once we are here")
                def host_track():  # type: ignore[no-untyped-def]
                    for m in c.of("update"):
                        for u in m.participants:
                            if u.identity == "host" and u.tracks:
                                return u.tracks[0].sid
                    return None
                track = await c.wait_for(host_track, 10, "host track")
                left = await c.wait_for(lambda: [u for m in c.of("update") for u in m.participants
                                                 if u.identity == "host" and u.state == lkm.ParticipantInfo.DISCONNECTED],
                                        20, "host leaves")
                assert left[0].disconnect_reason == lkm.DisconnectReason.CLIENT_INITIATED
                x = c.samples(track)
                speech = x[: 48000 * 2]
                assert rms(speech) > 0.01, "espeak-ng speech has energy"
                beep = x[int(48000 * 2.9): int(48000 * 5.0)]  # the beep (3.0-4.5 s) and some silence
                assert abs(dominant_frequency(beep) - 700) < 5, dominant_frequency(beep)
                pts = c.pts[track]
                gaps = [b - a for a, b in zip(pts, pts[1:])]
                assert max(gaps) >= 48000 * 1.5, "a pause leaves an RTP timestamp gap of about 2 s"
                assert gaps.count(960) > len(gaps) * 0.9
            finally:
                await c.leave()

        asyncio.run(asyncio.wait_for(go(), 90))
        done = srv.wait_for(lambda st: st["scenarios"][0]["done"], 10, "scenario done")
        assert done and srv.state()["scenarios"][0]["errors"] == []
    finally:
        srv.stop()


def test_sample_scenarios_run_clean_with_a_client_in_each_room():
    rooms = {}
    for path in SAMPLES:
        with open(path, encoding="utf-8") as f:
            rooms[parse(f.read(), path).room] = path
    args = [a for path in SAMPLES for a in ("--scenario", path)]
    srv = DevServer(*args)
    try:
        async def go() -> dict:
            clients = {room: LKClient(srv.url + "/livekit", lk_token(room, identity=f"rec-{room}"),
                                      auto_resume=True) for room in rooms}
            try:
                await asyncio.gather(*(c.connect() for c in clients.values()))
                await asyncio.sleep(0)  # scenarios start on first join
                loop = asyncio.get_running_loop()
                await loop.run_in_executor(None, lambda: srv.wait_for(
                    lambda st: all(s["done"] for s in st["scenarios"]), 60, "all samples done", interval=0.5))
                return {room: c for room, c in clients.items()}
            finally:
                for c in clients.values():
                    await c.close()

        clients = asyncio.run(asyncio.wait_for(go(), 120))
        state = srv.state()
        assert [s["errors"] for s in state["scenarios"]] == [[] for _ in SAMPLES], state["scenarios"]
        kicked = clients["kicked-bot"]
        assert kicked.resumes == 1, "the drop cut the signal and the client resumed"
        assert [l.reason for l in kicked.of("leave")] == [lkm.DisconnectReason.PARTICIPANT_REMOVED]
        late = clients["late-joiner"]
        system = [p for _, p in late.data if p.user.topic == "system"]
        assert {__import__("json").loads(p.user.payload)["event"] for p in system} == {"spotlight", "ask_unmute"}
        lossy = participants(state, "lossy")
        assert lossy == {} or all(p["scripted"] is False for p in lossy.values())
    finally:
        srv.stop()


@pytest.mark.parametrize("line,message", [
    ("at 1s vote alice x", "vote: expected vote ID N"),
    ("at 1s deafened alice maybe", "deafened: expected deafened ID on|off"),
    ("at 1s poll alice Q? OnlyOne", "poll: expected poll ID QUESTION OPTION OPTION"),
    ("at 1s react carol 👍", "react: 'carol' has not joined by this line"),
])
def test_meeting_wire_commands_are_checked(line, message):
    with pytest.raises(ScenarioError) as err:
        parse("room wire public\nat 0s join alice\n" + line + "\n", "w.scenario")
    assert message in str(err.value)


def test_chat_wire_packets_follow_the_web_clients_budget():
    from ..chatwire import SAFE_BYTES, chat_packets, inline_image, pattern_png
    import json
    chat = {"type": "chat", "id": "m", "timestamp": 1, "senderName": "A", "senderIdentity": "a",
            "message": "é😀" * 30_000, "attachments": [inline_image(pattern_png(100_000), "image/png")]}
    packets = chat_packets(chat)
    assert all(len(p) <= SAFE_BYTES for p in packets)
    meta = json.loads(packets[0])
    parts = [json.loads(p) for p in packets[1:]]
    assert meta["messageChunks"] == sum(1 for p in parts if p["kind"] == "message") > 1
    assert "".join(p["part"] for p in parts if p["kind"] == "message") == chat["message"]
    assert json.loads("".join(p["part"] for p in parts if p["kind"] == "attachments")) == chat["attachments"]


def test_chat_wire_cuts_where_the_web_client_cuts():
    # Emoji only: a lone high surrogate costs 6 bytes and the pair 4, so the packet size is
    # not monotonic in the cut and the web client's binary search stops short of the longest
    # part that fits. 59,995 bytes is what its buildChatWirePackets gives for this message
    # (chatDataChannel.ts v0.12 run with tsc + node on 2026-12-02; the longest fitting part is 59,999).
    from ..chatwire import chat_packets
    chat = {"type": "chat", "id": "msg-3", "timestamp": 1, "senderName": "U", "senderIdentity": "u", "message": "😀" * 40_000,
            "attachments": []}
    packets = chat_packets(chat)
    assert len(packets[1]) == 59_995
    import json
    assert "".join(json.loads(p)["part"] for p in packets[1:]) == chat["message"]


def test_a_quiet_participant_in_dtx_sends_libwebrtcs_dtx_packets():
    """`idle dtx`: what the server receives from a scripted publisher (its packet log) has
    the shape libwebrtc's has in test_sdk_record.py: 1-byte packets, RTP timestamp steps of
    400 ms in the pause, contiguous sequence numbers, the marker on the next talk spurt."""
    scenario = """
        room sc-dtx public
        idle dtx
        at 0s    join quiet
        at 0.1s  tone quiet 300Hz 0.5s
        at 2.8s  tone quiet 500Hz 0.3s
    """
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".scenario", delete=False) as f:
        f.write(scenario)
    srv = DevServer("--scenario", f.name)
    try:
        def track_sid(st):  # type: ignore[no-untyped-def]
            for room in st["rooms"]:
                for p in room.get("participants", []):
                    if p["identity"] == "quiet" and p.get("tracks"):
                        return p["tracks"][0]["sid"]
            return None
        sid = srv.wait_for(lambda st: track_sid(st), 10, "the scripted track")
        srv.wait_for(lambda st: st["scenarios"][0]["done"], 10, "scenario done")
        import time as _time
        _time.sleep(0.8)
        log = srv.request("GET", f"/_dev/rooms/sc-dtx/packets/{sid}").json()["packets"]
        import base64
        sizes = [len(base64.b64decode(p["payload"])) for p in log]
        steps = [(b["ts"] - a["ts"]) & 0xFFFFFFFF for a, b in zip(log, log[1:])]
        assert all(((b["seq"] - a["seq"]) & 0xFFFF) == 1 for a, b in zip(log, log[1:]))
        assert 1 in sizes and steps.count(19200) >= 3, (sizes, steps)
        assert set(steps) <= {960, 19200} | set(range(960, 19200, 960)), steps  # 20 ms frames only
        # Nearly 4 s at 50 packets a second would be about 190; in DTX about 80 (the tones,
        # the 200 ms hangovers, two packets per 420 ms in the pause).
        assert len(log) < 120, len(log)
        # The marker: on the stream's first packet and the first of the talk spurt after DTX.
        markers = [i for i, p in enumerate(log) if p["marker"]]
        assert len(markers) == 2 and markers[0] == 0 and sizes[markers[1]] > 2 and steps[markers[1] - 1] > 960, \
            (markers, sizes)
    finally:
        srv.stop()
        os.unlink(f.name)
