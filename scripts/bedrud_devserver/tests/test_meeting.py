"""The meeting generator (bedrud_devserver.meeting): deterministic per seed, shares near
their targets, turns of realistic length, and a scenario the devserver's parser takes.
Pure with a stand-in renderer (a tone 0.3 s a word); one test renders with espeak-ng."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from ..media import tone_clip
from ..meeting import RATE, TURN_MAX_S, generate
from ..scenario import parse
from .helpers import REPO


def fake_render(text: str, voice: str) -> np.ndarray:
    words = len(text.split())
    return tone_clip(200 + 10 * (hash(voice) % 20), max(0.3, 0.3 * words), 0.3)


def test_one_seed_is_one_meeting():
    a = generate(8, 5, seed=7, render=fake_render)
    b = generate(8, 5, seed=7, render=fake_render)
    c = generate(8, 5, seed=8, render=fake_render)
    assert a.scenario_text() == b.scenario_text() and a.truth() == b.truth()
    assert a.scenario_text() != c.scenario_text()


@pytest.mark.parametrize("people", [4, 10, 25])
def test_shares_land_near_their_targets_over_a_long_meeting(people):
    m = generate(people, 40, seed=3, render=fake_render, late=0, early=0)
    truth = m.truth()
    talkers = [p for p in truth["people"] if not p["muted"]]
    assert abs(sum(p["targetShare"] for p in talkers) - 1) < 1e-3
    for p in talkers:
        assert abs(p["share"] - p["targetShare"]) <= 0.05, (p, [(q["identity"], q["share"], q["targetShare"]) for q in talkers])
    assert all(p["talkSeconds"] == 0 for p in truth["people"] if p["muted"])


def test_turns_are_a_few_seconds_to_a_minute_and_backchannels_short():
    m = generate(10, 20, seed=1, render=fake_render)
    turns = [t for t in m.truth()["turns"] if t["kind"] == "turn"]
    back = [t for t in m.truth()["turns"] if t["kind"] == "backchannel"]
    lengths = [t["end"] - t["start"] for t in turns]
    assert min(lengths) >= 1.5 and max(lengths) <= TURN_MAX_S + 5, (min(lengths), max(lengths))
    assert 4 <= float(np.median(lengths)) <= 15, np.median(lengths)
    assert back and all(t["end"] - t["start"] <= 1.5 for t in back)
    # Overlaps: some turns start before the previous one ends, by under a second.
    overlaps = [a["end"] - b["start"] for a, b in zip(turns, turns[1:]) if b["start"] < a["end"]]
    assert overlaps and max(overlaps) <= 0.8 + 1e-6


def test_presence_mutes_chats_and_one_queue_per_person():
    m = generate(12, 10, seed=5, render=fake_render)
    truth = m.truth()
    people = {p["identity"]: p for p in truth["people"]}
    assert sum(p["muted"] for p in people.values()) == 3
    assert any(p["joinAt"] > 0 for p in people.values()) and any(p["leaveAt"] for p in people.values())
    assert people["p01"]["joinAt"] == 0 and people["p01"]["leaveAt"] is None and not people["p01"]["muted"]
    by_who: dict[str, list] = {}
    for t in truth["turns"]:
        p = people[t["who"]]
        assert not p["muted"] and t["start"] >= p["joinAt"] and (p["leaveAt"] is None or t["end"] <= p["leaveAt"])
        by_who.setdefault(t["who"], []).append(t)
    for ts in by_who.values():  # a person's clips never overlap (the track plays them one after another)
        assert all(a["end"] <= b["start"] for a, b in zip(ts, ts[1:]))
    assert truth["chats"] and all(people[c["who"]]["joinAt"] <= c["at"] for c in truth["chats"])
    # Voiced spans lie inside their turns.
    assert all(t["start"] <= v[0] < v[1] <= t["end"] + 0.02 for t in truth["turns"] for v in t["voiced"])


def test_the_scenario_parses_with_the_devservers_parser():
    m = generate(25, 3, seed=2, render=fake_render)
    sc = parse(m.scenario_text(), "meeting.scenario")
    assert (sc.room, sc.start, sc.idle) == ("meeting", "first-join", "dtx")
    commands = [s.command for s in sc.steps]
    assert commands.count("join") == 25 and commands.count("say") == len(m.turns)
    assert commands.count("mute") == 6 and "chat" in commands and "leave" in commands
    says = [s for s in sc.steps if s.command == "say"]
    assert [(s.args[0], s.args[1], s.options["voice"]) for s in says] == [(t.who, t.text, t.voice) for t in m.turns]
    assert [round(s.at, 3) for s in says] == [round(t.start, 3) for t in m.turns]


def test_sources_place_each_clip_at_its_start():
    m = generate(4, 2, seed=1, render=fake_render)
    src = m.sources()
    t = m.turns[0]
    x = src[t.who]
    a = int(round(t.start * RATE))
    assert np.abs(x[a - 960:a]).max() == 0 and np.abs(x[a:a + 960]).max() > 0.1


def test_cli_writes_scenario_and_truth_with_espeak(tmp_path):
    truth = tmp_path / "m.json"
    p = subprocess.run([sys.executable, "-m", "bedrud_devserver.meeting", "--people", "3", "--minutes", "0.4",
                        "--seed", "1", "--truth", str(truth)], capture_output=True, text=True, timeout=120,
                       cwd=os.path.join(REPO, "scripts"))
    assert p.returncode == 0, p.stderr
    sc = parse(p.stdout, "m.scenario")
    data = json.loads(truth.read_text())
    assert len([s for s in sc.steps if s.command == "say"]) == len(data["turns"]) >= 2
    assert all(t["voiced"] for t in data["turns"])
    bad = subprocess.run([sys.executable, "-m", "bedrud_devserver.meeting", "--people", "0", "--minutes", "1"],
                         capture_output=True, text=True, timeout=60, cwd=os.path.join(REPO, "scripts"))
    assert bad.returncode == 2 and "--people" in bad.stderr


def test_turn_by_turn_scoring_and_the_mix_at_each_sources_offset():
    """bench_peers.meeting_score on a synthetic recording: each speaker's file starts at its
    own offset and one turn arrived 120 ms late (a late `say`): turn by turn the tracks
    score ~1 and so does the mix placed by START_OFFSET_MS; summed at one lag it does not."""
    from bench_peers.meeting_score import find_clip, mix_fidelity, mono, pearson, track_fidelity

    def voice_render(text: str, voice: str) -> np.ndarray:
        rng = np.random.default_rng(abs(hash((text, voice))) % (1 << 32))
        n = int(max(0.3, 0.3 * len(text.split())) * RATE)
        x = rng.standard_normal(n) * 0.2 * np.abs(np.sin(np.arange(n) / RATE * 2 * np.pi * 2))
        s = (x * 32767).clip(-32767, 32767).astype(np.int16)
        return np.stack([s, s], axis=1)
    m = generate(3, 1, seed=4, render=voice_render, late=0, early=0, muted=0)
    sources = m.sources()
    speakers = sorted(sources)
    file_start = {who: 0.5 + 0.37 * i for i, who in enumerate(speakers)}   # seconds on the session timeline
    late = m.turns[1]
    room = np.zeros(int((m.duration + 3) * RATE), np.float32)
    files = {}
    for who in speakers:
        x = np.zeros(int((m.duration + 3) * RATE), np.float32)
        for t, c in zip(m.turns, m.clips):
            if t.who != who:
                continue
            at = int(round((t.start + (0.12 if t is late else 0) + 1.0 - file_start[who]) * RATE))
            x[at:at + len(c)] += mono(c)
        files[who] = x
        a = int(file_start[who] * RATE)
        room[a:] += x[:len(room) - a]
    placed = []
    for who in speakers:
        turns = [(t.start, mono(c)) for t, c in zip(m.turns, m.clips) if t.who == who]
        tf = track_fidelity(files[who], sources[who], turns)
        assert tf["correlation"] > 0.99 and abs(tf["offset_ms"] - (1.0 - file_start[who]) * 1000) < 130, tf
        if late.who == who:
            assert 115 <= tf["spread_ms"] <= 125, tf
        placed += [(t, pos + int(file_start[who] * RATE)) for (t, _), (pos, _) in zip(turns, tf["turns"])]
    placed.sort(key=lambda p: p[0])
    clips = [mono(c) for c in m.clips]
    assert mix_fidelity(room, clips, [p for _, p in placed]) > 0.99
    total = sum(sources.values())
    assert pearson(room[int(1.0 * RATE):], total) < 0.9   # one lag cannot place three offsets
    pos, corr = find_clip(room, clips[0], int(round((m.turns[0].start + 1.0) * RATE)) + 500, RATE // 2)
    assert corr > 0.99


def test_a_meeting_room_is_judged_by_its_truth():
    """bench-peers --rooms --room-meeting: who must have a file, how long, and how much
    voiced audio must arrive come from the meeting (bench_peers meeting_room_rules); the
    rest is the worst case's bot_room_verdict."""
    from bench_peers.__main__ import bot_room_verdict, meeting_room_rules
    m = generate(10, 1, seed=2, render=fake_render)
    late = next(p for p in m.people if p.join_at > 0)
    session = m.duration + 2.0
    n, least, voiced = meeting_room_rules(m, session)
    assert n == 10 and set(least) == {p.identity for p in m.people}
    assert least[late.identity] == pytest.approx(0.5 * (session if late.leave_at is None else late.leave_at) - 0.5 * late.join_at)
    talk = {p.identity: p.talk_s for p in m.people}
    for who, s in voiced.items():
        assert 0 < s <= talk[who] + 1e-6
    assert all(voiced.get(p.identity, 0) == 0 for p in m.people if p.muted)

    def summary(**change):  # type: ignore[no-untyped-def]
        people = []
        for p in m.people:
            end = min(session, p.leave_at or session)
            row = {"identity": p.identity, "file": p.name + ".opus", "duration_ms": int((end - p.join_at) * 1000),
                   "gaps_ms": {"dtx": 1000}, "late": 0, "mix_late": 0,
                   "packets": int(voiced.get(p.identity, 0) * 50) + 100}
            row.update(change.get(p.identity, {}))
            people.append(row)
        return {"exit_code": 0, "participants": people, "_events": change.get("events", [])}
    assert bot_room_verdict(summary(), n, 0, voiced, least) == []
    speaker = max(voiced, key=lambda w: voiced[w])
    assert any("arrived" in w for w in bot_room_verdict(summary(**{speaker: {"packets": 10}}), n, 0, voiced, least))
    assert any("ms file" in w for w in bot_room_verdict(summary(**{late.identity: {"duration_ms": 1000}}), n, 0, voiced, least))
    assert any("participant files" in w for w in bot_room_verdict(summary(**{speaker: {"file": None}}), n, 0, voiced, least))
    assert any("mix_late" in w for w in bot_room_verdict(summary(**{speaker: {"mix_late": 3}}), n, 0, voiced, least))
    gap = {"type": "gap", "cause": "noPackets", "offset_ms": 5000, "duration_ms": 800, "participant": {"identity": speaker}}
    assert any("noPackets" in w for w in bot_room_verdict(summary(events=[gap]), n, 0, voiced, least))
    # A muted person's whole file is one noPackets gap ending where the file ends: not a failure.
    muted = next(p for p in m.people if p.muted)
    tail = {"type": "gap", "cause": "noPackets", "offset_ms": 100, "duration_ms": int(session * 1000) - 100,
            "participant": {"identity": muted.identity}}
    done = {"type": "file_finished", "offset_ms": int(session * 1000), "participant": {"identity": muted.identity}}
    assert bot_room_verdict(summary(events=[tail, done]), n, 0, voiced, least) == []
