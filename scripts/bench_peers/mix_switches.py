"""Where bedrud-bot's room.opus passes a lone voice through, and what its switches do.

While one participant alone is heard, the bot writes that participant's own packets into the
mix (`record.mix_passthrough`); around it, the mix is encoded. A packet of room.opus that is
byte for byte a packet of a participant's file was passed through (concealment packets of
three bytes or fewer are left out: every file has them). This module finds those runs and,
for each switch between a run and encoded frames, compares the mix with a reference: the
participants' own files decoded and summed at their START_OFFSET_MS tags (each switch
aligned to the sample within ±2 ms, since the tags are whole milliseconds). Reported:

- the share of the mix's packets and time passed through, and the number of runs;
- per switch, the largest sample-to-sample step of the mix within ±10 ms, less the
  reference's there (a click shows as a step the reference does not have), and the RMS of
  the difference there relative to the reference's RMS (a dip or a burst).

`python -m bench_peers.mix_switches SESSION_FOLDER` prints them for one recording.
"""
from __future__ import annotations

import os
import sys

import numpy as np

RATE = 48000


def _frame_samples(toc: int) -> int:
    config = toc >> 3
    if config < 12:
        return [480, 960, 1920, 2880][config % 4]
    if config < 16:
        return [480, 960][config % 2]
    return [120, 240, 480, 960][config % 4]


def packet_samples(p: bytes) -> int:
    if not p:
        return 0
    code = p[0] & 3
    count = 1 if code == 0 else 2 if code in (1, 2) else (p[1] & 0x3F if len(p) > 1 else 0)
    return _frame_samples(p[0]) * count


def ogg_packets(path: str) -> tuple[int, list[tuple[int, bytes]]]:
    """The pre-skip and every audio packet with its start in playable samples."""
    data = open(path, "rb").read()
    packets: list[bytes] = []
    pending = b""
    i = 0
    while i + 27 <= len(data) and data[i:i + 4] == b"OggS":
        nseg = data[i + 26]
        table = data[i + 27:i + 27 + nseg]
        j = i + 27 + nseg
        for lace in table:
            pending += data[j:j + lace]
            j += lace
            if lace < 255:
                packets.append(pending)
                pending = b""
        i = j
    if len(packets) < 2 or not packets[0].startswith(b"OpusHead"):
        return 0, []
    pre_skip = int.from_bytes(packets[0][10:12], "little")
    out, at = [], -pre_skip
    for p in packets[2:]:
        out.append((at, p))
        at += packet_samples(p)
    return pre_skip, out


def runs(room: str, participants: list[str]) -> list[tuple[int, int]]:
    """The passed-through runs of room.opus as [start, end) in playable samples."""
    own = {p for f in participants for _, p in ogg_packets(f)[1] if len(p) > 3}
    out: list[tuple[int, int]] = []
    for at, p in ogg_packets(room)[1]:
        if len(p) > 3 and p in own:
            end = at + packet_samples(p)
            if out and out[-1][1] == at:
                out[-1] = (out[-1][0], end)
            else:
                out.append((at, end))
    return out


def _decode(path: str) -> np.ndarray:
    """Decoded as a mono player hears it: a stereo-coded file is the mean of its channels
    (FFmpeg's own downmix to mono adds 3 dB)."""
    import av
    with av.open(path) as c:
        stereo = c.streams.audio[0].channels == 2
        resampler = av.AudioResampler(format="flt", layout="stereo" if stereo else "mono", rate=RATE)
        chunks = []
        for frame in c.decode(audio=0):
            for f in resampler.resample(frame):
                chunks.append(f.to_ndarray().reshape(-1))
        for f in resampler.resample(None):
            chunks.append(f.to_ndarray().reshape(-1))
    x = np.concatenate(chunks) if chunks else np.zeros(0, np.float32)
    return x.reshape(-1, 2).mean(axis=1) if stereo else x


def _start_ms(path: str) -> int:
    from .meeting_score import opus_tags
    v = opus_tags(path).get("START_OFFSET_MS", "0")
    return int(v) if v.lstrip("-").isdigit() else 0


def measure(folder: str) -> dict:
    names = sorted(n for n in os.listdir(folder) if n.endswith(".opus"))
    room = next((os.path.join(folder, n) for n in names if n.split(".")[0] == "room"), None)
    parts = [os.path.join(folder, n) for n in names if n.split(".")[0] != "room"]
    if room is None:
        return {"error": "no room.opus"}
    found = runs(room, parts)
    total = ogg_packets(room)[1]
    audio = [(a, p) for a, p in total if len(p) > 3]
    passed = sum(1 for a, p in audio if any(s <= a < e for s, e in found))
    mix = _decode(room)
    ref = np.zeros(len(mix) + RATE, np.float32)
    for f in parts:
        x = _decode(f)
        at = _start_ms(f) * 48
        a, b = max(0, at), max(0, -at)
        n = max(0, min(len(x) - b, len(ref) - a))
        ref[a:a + n] += x[b:b + n]
    ref = np.clip(ref, -1, 1)
    switches = sorted({p for run in found for p in run})
    w, search = 480, 96

    def local(s: int) -> tuple[float, float] | None:
        """Step excess and relative difference of the mix against the reference in ±10 ms."""
        lo, hi = s - w, s + w
        if lo - search < 0 or hi + search > len(mix) or hi + search > len(ref):
            return None
        m = mix[lo:hi]
        best = min(range(-search, search + 1), key=lambda k: float(np.sum((m - ref[lo + k:hi + k]) ** 2)))
        r = ref[lo + best:hi + best]
        rr = float(np.sqrt(np.mean(r * r)))
        step = float(np.max(np.abs(np.diff(m))) - np.max(np.abs(np.diff(r))))
        return step, (float(np.sqrt(np.mean((m - r) ** 2))) / rr if rr > 3e-3 else float("nan"))

    at_switch = [v for v in (local(s) for s in switches) if v]
    # The same inside long runs (passed-through audio against the file it came from) and
    # in the middle of long encoded stretches: what the coding alone differs by.
    inside = [v for v in (local((s + e) // 2) for s, e in found if e - s > 9600) if v]
    gaps = [(found[i][1], found[i + 1][0]) for i in range(len(found) - 1)]
    encoded = [v for v in (local((a + b) // 2) for a, b in gaps if b - a > 9600) if v]

    def med(xs: list[float]) -> float | None:
        xs = [x for x in xs if x == x]
        return float(np.median(xs)) if xs else None

    steps = [v[0] for v in at_switch]
    diffs = [v[1] for v in at_switch if v[1] == v[1]]
    seconds = sum(e - s for s, e in found) / RATE
    return {"runs": len(found), "packets_passed": passed, "audio_packets": len(audio),
            "passed_share": passed / len(audio) if audio else 0.0, "passed_seconds": seconds,
            "mix_seconds": len(mix) / RATE, "switches_measured": len(steps),
            "step_excess_max": max(steps) if steps else None,
            "step_excess_median": float(np.median(steps)) if steps else None,
            "switches_with_sound": len(diffs),
            "diff_rms_rel_median": med(diffs), "diff_rms_rel_max": max(diffs) if diffs else None,
            "inside_runs_diff_rms_rel_median": med([v[1] for v in inside]),
            "encoded_diff_rms_rel_median": med([v[1] for v in encoded])}


if __name__ == "__main__":
    for folder in sys.argv[1:]:
        print(folder, measure(folder))
