"""A meeting as it really is, written as a devserver scenario from a few numbers.

    .venv/bin/python -m bedrud_devserver.meeting --people 10 --minutes 2 --seed 1 > m.scenario
    .venv/bin/python -m bedrud_devserver.meeting --people 10 --minutes 2 --seed 1 --truth m.json > m.scenario
    scripts/devserver --port 0 --scenario m.scenario

Cost in a real meeting follows speech, not people: most of the time one person talks,
the others are quiet (their publishers send Opus DTX, a packet per 400 ms: the scenario
says `idle dtx`), a few never unmute, people come late and leave early. What is modelled,
each from a seeded `random.Random` so one seed is one meeting:

- **Talk shares**: the speakers' shares of the talking time fall off as 1/rank (a
  Zipf-like spread: in recorded meetings one or two people talk most and some hardly at
  all); `--muted` people (default a quarter) stay muted throughout and never talk. The
  next speaker is, seven times in ten, the present speaker furthest behind their share,
  else one drawn by share, so the shares land near their targets over a meeting (within
  0.05 over 40 minutes, test_meeting.py); the last speaker may go on after a pause
  (three times in ten), as a host holds the floor.
- **Turns**: log-normal lengths (median 7 s, clipped to 2–60 s: a few seconds to a
  minute), 0.2–1.2 s between turns, and one turn in six starting 0.2–0.8 s *before* the
  previous ends (a short overlap). During a turn of over 5 s another present speaker
  sometimes says a backchannel ("mm-hm", "yeah", …) of under a second.
- **Speech**: espeak-ng through the devserver's own `say` (media.speech_clip), one voice
  variant per person. Each turn's text is rendered here once to learn its real length
  (the same text and voice give the same samples when the devserver renders them), so
  the ground truth holds the exact spans.
- **Presence**: about one person in six joins late (in the first 40 % of the meeting) and
  one in eight leaves early (after 60 %); nobody talks while absent. The first person
  (the host, the biggest share) is there throughout.
- **Chat**: about one message every two minutes (at least one), from anyone present.

`--truth FILE` writes the ground truth as JSON: every person (identity, name, voice,
muted, joinAt, leaveAt, targetShare, talkSeconds, share), every turn (who, start, end,
kind `turn`|`backchannel`, text, voice, voiced: the spans with sound, 20 ms frames above
-40 dBFS with pauses under 300 ms bridged), every chat, in seconds from the scenario's
start (`start first-join`: when the recorder joins). scripts/bench-peers --meeting scores
speaking turns and the mix against it.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import sys
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

RATE = 48000
FRAME = 960

NAMES = ["Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivan", "Jia", "Kofi", "Lena",
         "Mateo", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tara", "Umar", "Vera", "Wen", "Ximena",
         "Yusuf", "Zoe"]
# espeak-ng voice variants (`-v LANG+VARIANT`): distinct pitch and timbre per person.
VOICES = ["en+m3", "en+f2", "en-us+m1", "en-gb-scotland+f3", "en+m7", "en-us+f4", "en-029+m2", "en+f5",
          "en-gb-x-rp+m4", "en-us+f1", "en+m5", "en-gb+f3", "en-us+m6", "en+f4", "en-029+f2", "en+m2"]
SENTENCES = [
    "We should ship the release on Thursday.", "Then we review the numbers with the team.",
    "The latency went down after the change, and customers noticed it.", "So I think the plan works.",
    "But we still need a second opinion on the budget.", "Hiring for next quarter is the open question.",
    "Let me share my screen and walk through the dashboard.", "The error rate is flat.",
    "The support queue is shorter than last week.", "The new onboarding flow converts better than the old one.",
    "I talked to the design team yesterday.", "They want two more days for the review.",
    "If we slip, the launch moves to next month.", "I would rather cut scope than move the date.",
    "Can somebody own the migration script?", "The test environment was down for an hour this morning.",
    "We found the cause, it was a full disk.", "I will write it up in the notes.",
    "Any questions before we move on?", "Okay, next topic.",
]
BACKCHANNELS = ["mm-hm", "yeah", "right", "okay", "uh-huh", "I see", "sure", "exactly"]
CHATS = ["I'll send the notes after this", "+1", "link to the doc is in the channel", "sorry, my mic is off",
         "can we take this offline?", "agreed", "running five minutes late to the next one", "thanks!"]

TURN_MEDIAN_S = 7.0
TURN_SIGMA = 0.8
TURN_MIN_S, TURN_MAX_S = 2.0, 60.0
GAP_S = (0.2, 1.2)
OVERLAP_P, OVERLAP_S = 1 / 6, (0.2, 0.8)
BACKCHANNEL_P = 0.35
HOLD_FLOOR_P = 0.3
SECONDS_PER_WORD = 0.3   # espeak-ng at its default rate, with this text's punctuation
LEAD_IN_S = 2.0          # the recorder is in before anyone talks
VOICED_RMS = 0.01        # -40 dBFS
VOICED_BRIDGE_S = 0.3

Render = Callable[[str, str], np.ndarray]


def espeak_render(text: str, voice: str) -> np.ndarray:
    from .media import speech_clip
    return speech_clip(text, voice)


@dataclass
class Person:
    identity: str
    name: str
    voice: str
    muted: bool
    join_at: float
    leave_at: Optional[float]
    target_share: float
    talk_s: float = 0.0
    busy_until: float = 0.0   # end of their last clip: a person's clips never overlap (one queue)

    def present(self, t: float, until: float) -> bool:
        return self.join_at + 1.0 <= t and (self.leave_at is None or until <= self.leave_at - 0.5)


@dataclass
class Turn:
    who: str
    start: float
    end: float
    kind: str
    text: str
    voice: str
    voiced: list[tuple[float, float]]


@dataclass
class Meeting:
    room: str
    seed: int
    duration: float
    people: list[Person]
    turns: list[Turn] = field(default_factory=list)
    chats: list[tuple[float, str, str]] = field(default_factory=list)
    clips: list[np.ndarray] = field(default_factory=list)   # stereo int16, one per turn
    argv: str = ""

    def scenario_text(self) -> str:
        lines = [f"# A generated meeting ({self.argv or 'bedrud_devserver.meeting'}):",
                 f"# {len(self.people)} people, {self.duration:.0f} s, seed {self.seed}; ground truth: --truth",
                 f"room {self.room} public", "start first-join", "idle dtx"]
        events: list[tuple[float, int, str]] = []
        for p in self.people:
            events.append((p.join_at, 0, f'join {p.identity} name="{p.name}"'))
            if p.muted:
                events.append((p.join_at, 1, f"mute {p.identity}    # muted throughout"))
            if p.leave_at is not None:
                events.append((p.leave_at, 3, f"leave {p.identity}"))
        for t in self.turns:
            events.append((t.start, 2, f'say {t.who} "{t.text}" voice={t.voice}'))
        for at, who, text in self.chats:
            events.append((at, 2, f'chat {who} "{text}"'))
        for at, order, line in sorted(events, key=lambda e: (round(e[0], 3), e[1])):
            lines.append(f"at {at:.3f}s {line}")
        return "\n".join(lines) + "\n"

    def truth(self) -> dict:
        total = sum(p.talk_s for p in self.people) or 1.0
        return {
            "room": self.room, "seed": self.seed, "durationSeconds": self.duration, "sampleRate": RATE,
            "people": [{"identity": p.identity, "name": p.name, "voice": p.voice, "muted": p.muted,
                        "joinAt": round(p.join_at, 3), "leaveAt": None if p.leave_at is None else round(p.leave_at, 3),
                        "targetShare": round(p.target_share, 4), "talkSeconds": round(p.talk_s, 3),
                        "share": round(p.talk_s / total, 4)} for p in self.people],
            "turns": [{"who": t.who, "start": round(t.start, 3), "end": round(t.end, 3), "kind": t.kind,
                       "text": t.text, "voice": t.voice, "voiced": [[round(a, 3), round(b, 3)] for a, b in t.voiced]}
                      for t in self.turns],
            "chats": [{"at": round(at, 3), "who": who, "text": text} for at, who, text in self.chats],
        }

    def sources(self) -> dict[str, np.ndarray]:
        """Each speaker's track as mono float32 in scenario time (0 = the scenario's
        start): their clips at their turns' starts, silence between."""
        n = int(self.duration * RATE) + RATE
        for t, clip in zip(self.turns, self.clips):
            n = max(n, int(round(t.start * RATE)) + len(clip))
        out: dict[str, np.ndarray] = {}
        for t, clip in zip(self.turns, self.clips):
            x = out.setdefault(t.who, np.zeros(n, np.float32))
            at = int(round(t.start * RATE))
            mono = clip.astype(np.float32).mean(axis=1) / 32768.0 if clip.ndim == 2 else clip.astype(np.float32) / 32768.0
            x[at:at + len(mono)] += mono
        return out


def voiced_spans(clip: np.ndarray, start: float) -> list[tuple[float, float]]:
    """Spans of `clip` (placed at `start`) whose 20 ms frames are above -40 dBFS, pauses
    shorter than 300 ms bridged: who is audibly talking, for scoring speaking turns."""
    mono = clip.astype(np.float64).mean(axis=1) if clip.ndim == 2 else clip.astype(np.float64)
    frames = len(mono) // FRAME
    if frames == 0:
        return []
    rms = np.sqrt(((mono[:frames * FRAME].reshape(frames, FRAME) / 32768.0) ** 2).mean(axis=1))
    loud = np.flatnonzero(rms > VOICED_RMS)
    spans: list[list[float]] = []
    for f in loud:
        a, b = start + f * FRAME / RATE, start + (f + 1) * FRAME / RATE
        if spans and a - spans[-1][1] < VOICED_BRIDGE_S:
            spans[-1][1] = b
        else:
            spans.append([a, b])
    return [(a, b) for a, b in spans]


def _text(rng: random.Random, seconds: float) -> str:
    """Sentences for about `seconds` of espeak-ng speech (espeak pauses at their commas
    and full stops, so a long turn has breaths in it, as a speaker's does)."""
    words = max(2, int(round(seconds / SECONDS_PER_WORD)))
    out: list[str] = []
    while sum(len(x.split()) for x in out) < words:
        out.append(rng.choice(SENTENCES))
    return " ".join(out)


def generate(people: int, minutes: float, seed: int, room: str = "meeting", muted: Optional[int] = None,
             late: Optional[int] = None, early: Optional[int] = None, chats_per_minute: float = 0.5,
             render: Optional[Render] = None) -> Meeting:
    if people < 1 or people > len(NAMES) * 4:
        raise ValueError(f"--people must be 1..{len(NAMES) * 4}")
    if minutes <= 0 or minutes > 120:
        raise ValueError("--minutes must be in (0, 120]")
    render = render or espeak_render
    rng = random.Random(seed)
    duration = minutes * 60.0
    n_muted = people // 4 if muted is None else muted
    n_muted = min(max(0, n_muted), people - 1)
    n_late = (people // 6 if people >= 3 else 0) if late is None else late
    n_early = (people // 8 if people >= 4 else 0) if early is None else early
    speakers = people - n_muted
    # Shares ∝ 1/rank among speakers; ranks shuffled so the host is rank 1 and the rest
    # do not talk in the order they are listed.
    weights = [1.0 / (r + 1) for r in range(speakers)]
    total = sum(weights)
    ranks = [0] + rng.sample(range(1, speakers), speakers - 1) if speakers > 1 else [0]
    order = list(range(people))
    muted_ix = set(rng.sample(range(1, people), n_muted)) if n_muted else set()
    plist: list[Person] = []
    k = 0
    for i in order:
        ident = f"p{i + 1:02d}"
        name = NAMES[i % len(NAMES)] + ("" if i < len(NAMES) else str(i // len(NAMES) + 1))
        is_muted = i in muted_ix
        share = 0.0 if is_muted else weights[ranks[k]] / total
        if not is_muted:
            k += 1
        plist.append(Person(ident, name, VOICES[i % len(VOICES)], is_muted, 0.0, None, share))
    others = list(range(1, people))
    for i in rng.sample(others, min(n_late, len(others))):
        plist[i].join_at = round(rng.uniform(0.1, 0.4) * duration, 1)
    for i in rng.sample(others, min(n_early, len(others))):
        plist[i].leave_at = round(rng.uniform(0.6, 0.9) * duration, 1)
    meeting = Meeting(room=room, seed=seed, duration=duration, people=plist)

    def add(p: Person, start: float, kind: str, text: str) -> Turn:
        clip = render(text, p.voice)
        end = start + len(clip) / RATE
        turn = Turn(p.identity, start, end, kind, text, p.voice, voiced_spans(clip, start))
        meeting.turns.append(turn)
        meeting.clips.append(clip)
        p.talk_s += end - start
        p.busy_until = end
        return turn

    t = LEAD_IN_S
    previous: Optional[Person] = None
    end_by = duration - 1.0
    while t < end_by - TURN_MIN_S:
        want = min(TURN_MAX_S, max(TURN_MIN_S, rng.lognormvariate(math.log(TURN_MEDIAN_S), TURN_SIGMA)))
        want = min(want, end_by - t)
        # Someone else, mostly; sometimes the last speaker goes on after a pause (how a
        # host holds the floor: without it a speaker could never pass half the talk).
        again = rng.random() < HOLD_FLOOR_P
        cands = [p for p in plist if not p.muted and (p is not previous or again) and p.busy_until <= t
                 and p.present(t, t + want)]
        if not cands and previous is not None and previous.present(t, t + want) and previous.busy_until <= t:
            cands = [previous]  # alone in the room: they go on
        if not cands:
            t += 1.0
            continue
        spoken = sum(p.talk_s for p in plist) + want
        if rng.random() < 0.7:
            who = max(cands, key=lambda p: p.target_share * spoken - p.talk_s)
        else:
            who = rng.choices(cands, weights=[p.target_share for p in cands])[0]
        turn = add(who, t, "turn", _text(rng, want))
        # Backchannels from someone else present, well inside the turn.
        if turn.end - turn.start > 5.0 and rng.random() < BACKCHANNEL_P:
            ears = [p for p in plist if not p.muted and p is not who and p.busy_until <= turn.start
                    and p.present(turn.start, turn.end)]
            if ears:
                p = rng.choice(ears)
                at = rng.uniform(turn.start + 1.5, turn.end - 2.5)
                add(p, at, "backchannel", rng.choice(BACKCHANNELS))
        previous = who
        if rng.random() < OVERLAP_P:
            t = turn.end - rng.uniform(*OVERLAP_S)
        else:
            t = turn.end + rng.uniform(*GAP_S)
    # Chat: a Poisson process, at least one message.
    at = rng.expovariate(chats_per_minute / 60.0) if chats_per_minute > 0 else duration
    times = []
    while at < duration - 2.0:
        times.append(at)
        at += rng.expovariate(chats_per_minute / 60.0)
    if not times:
        times = [rng.uniform(0.3, 0.7) * duration]
    for at in times:
        here = [p for p in plist if p.present(at, at)]
        if here:
            meeting.chats.append((at, rng.choice(here).identity, rng.choice(CHATS)))
    order_ix = sorted(range(len(meeting.turns)), key=lambda i: meeting.turns[i].start)
    meeting.turns = [meeting.turns[i] for i in order_ix]
    meeting.clips = [meeting.clips[i] for i in order_ix]
    return meeting


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bedrud_devserver.meeting",
                                 description="Write a realistic meeting as a devserver scenario (stdout).")
    ap.add_argument("--people", type=int, required=True)
    ap.add_argument("--minutes", type=float, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--room", default="meeting")
    ap.add_argument("--muted", type=int, help="people muted throughout (default: a quarter)")
    ap.add_argument("--late", type=int, help="people who join late (default: one in six)")
    ap.add_argument("--early", type=int, help="people who leave early (default: one in eight)")
    ap.add_argument("--chats-per-minute", type=float, default=0.5)
    ap.add_argument("--truth", metavar="FILE", help="write the ground truth (who speaks when) as JSON here")
    a = ap.parse_args(argv)
    argv_text = "python -m bedrud_devserver.meeting " + " ".join(argv if argv is not None else sys.argv[1:])
    try:
        m = generate(a.people, a.minutes, a.seed, a.room, a.muted, a.late, a.early, a.chats_per_minute)
    except ValueError as e:
        print(f"meeting: {e}", file=sys.stderr)
        return 2
    m.argv = argv_text
    sys.stdout.write(m.scenario_text())
    if a.truth:
        with open(a.truth, "w") as f:
            json.dump(m.truth(), f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
