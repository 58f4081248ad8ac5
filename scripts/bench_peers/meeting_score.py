"""Scores a recording of a generated meeting (bedrud_devserver.meeting) against its ground
truth: per speaking track, and the mix with every source at its own offset.

Why not the worst case's figures. There every speaker plays one clip from 2 s on, so one
lag per file places the whole source, and the mix is compared with the sum of the sources
at one lag. In a meeting a speaker's turns are minutes apart and each `say` starts when
the devserver's scenario clock reaches it (a busy loop starts one late by tens of ms), and
in a mix each participant sits at the offset where its first packet arrived: summed at one
lag, the sources miss each other and the figure falls with every speaker added (0.36 at
N=4, 0.17 at N=16 in the worst-case table), whatever the mix's quality. So:

- **Track fidelity, turn by turn**: the speaker's whole source (scenario time) is found in
  the decoded file by cross-correlation at 8 kHz (the file's offset); then each turn's clip
  is searched within ±0.5 s of where that offset puts it and refined to the sample at
  48 kHz; the track's figure is the Pearson correlation of each turn with the file there,
  weighted by the turn's length. `spread_ms` is how far the turns' own offsets stray from
  the file's (the devserver's timing, not the recorder's, unless the recorder moves audio).
- **Mix fidelity, each source at its own offset**: every turn's clip is placed in the mix at
  where it is in its speaker's file plus that file's `START_OFFSET_MS` tag (bedrud-bot's
  per-participant files say where they start on the session's timeline, which room.opus
  starts at): `tags`. A recorder whose files carry no such tag (the SDK recorder) gets each
  turn searched in the mix itself, ±0.5 s around the ground truth moved by the mix's one
  global offset: `searched`. Then the Pearson correlation of the mix with the sum of the
  placed clips over the meeting. `one_lag` is the old figure (all sources summed in
  scenario time, one best lag), kept to show the difference.
"""
from __future__ import annotations

import numpy as np

RATE = 48000
DECIMATE = 6          # 48 kHz → 8 kHz for lag searches (speech energy is below 4 kHz)
TURN_SEARCH_S = 0.5


def _decimate(x: np.ndarray) -> np.ndarray:
    n = len(x) // DECIMATE
    return x[:n * DECIMATE].reshape(n, DECIMATE).mean(axis=1) if n else np.zeros(0, np.float32)


def xcorr_lag(a: np.ndarray, b: np.ndarray) -> int:
    """The lag L (in samples of a and b) at which a[n + L] best matches b[n]."""
    if len(a) == 0 or len(b) == 0:
        return 0
    n = 1
    while n < len(a) + len(b):
        n <<= 1
    xc = np.fft.irfft(np.fft.rfft(a, n) * np.conj(np.fft.rfft(b, n)), n)
    lag = int(np.argmax(xc))
    return lag - n if lag > n // 2 else lag


def coarse_lag(a: np.ndarray, b: np.ndarray) -> int:
    """xcorr_lag at 8 kHz, in 48 kHz samples."""
    return xcorr_lag(_decimate(a), _decimate(b)) * DECIMATE


def pearson(a: np.ndarray, b: np.ndarray) -> float:
    m = min(len(a), len(b))
    if m < RATE // 50:
        return 0.0
    a, b = a[:m].astype(np.float64), b[:m].astype(np.float64)
    sa, sb = a.std(), b.std()
    return float(((a - a.mean()) * (b - b.mean())).mean() / (sa * sb)) if sa > 0 and sb > 0 else 0.0


def find_clip(x: np.ndarray, clip: np.ndarray, around: int, search: int) -> tuple[int, float]:
    """Where `clip` best sits in `x` within ±search samples of `around`, and the Pearson
    correlation there. (around, 0.0) when the window lies outside x."""
    lo, hi = max(0, around - search), min(len(x), around + search + len(clip))
    if hi - lo < len(clip) // 2 or len(clip) < RATE // 50:
        return around, 0.0
    window = x[lo:hi]
    lag = coarse_lag(window, clip)
    best, best_dot = lo + lag, -np.inf
    # Refine at 48 kHz around the 8 kHz answer.
    for p in range(lo + lag - DECIMATE, lo + lag + DECIMATE + 1):
        a0 = max(0, p)
        seg = x[a0:a0 + len(clip)]
        c = clip[a0 - p:a0 - p + len(seg)]
        if len(seg) == 0:
            continue
        d = float(np.dot(seg.astype(np.float64), c.astype(np.float64)))
        if d > best_dot:
            best, best_dot = p, d
    a0 = max(0, best)
    return best, pearson(x[a0:a0 + len(clip)], clip[a0 - best:])


def mono(clip: np.ndarray) -> np.ndarray:
    return (clip.astype(np.float32).mean(axis=1) if clip.ndim == 2 else clip.astype(np.float32)) / 32768.0


def track_fidelity(decoded: np.ndarray, source: np.ndarray, turns: list[tuple[float, np.ndarray]]) -> dict:
    """`turns`: (start in scenario seconds, mono clip) of one speaker; `source` their whole
    track in scenario time. Answers correlation (length-weighted over turns), offset_ms
    (where scenario time 0 is in the file), spread_ms, and each turn's (position in the
    file in samples, correlation)."""
    if len(decoded) < RATE // 10 or not turns:
        return {"correlation": 0.0, "offset_ms": None, "spread_ms": None, "turns": []}
    offset = coarse_lag(decoded, source)
    placed = []
    for start, clip in turns:
        pos, corr = find_clip(decoded, clip, int(round(start * RATE)) + offset, int(TURN_SEARCH_S * RATE))
        placed.append((pos, corr, len(clip), start))
    weight = sum(n for _, _, n, _ in placed) or 1
    shifts = [pos - int(round(start * RATE)) for pos, corr, _, start in placed if corr > 0.3]
    return {"correlation": sum(c * n for _, c, n, _ in placed) / weight, "offset_ms": offset / 48,
            "spread_ms": (max(shifts) - min(shifts)) / 48 if shifts else None,
            "turns": [(pos, corr) for pos, corr, _, _ in placed]}


def mix_fidelity(room: np.ndarray, clips: list[np.ndarray], positions: list[int]) -> float:
    """Pearson correlation of the mix with the clips summed at their positions in it, over
    the stretch from the first clip to the end of the last, after a ±20 ms search for the
    best common lag (what a mixer's own look-ahead may add)."""
    if not clips or len(room) < RATE // 10:
        return 0.0
    lo = max(0, min(positions))
    hi = max(p + len(c) for p, c in zip(positions, clips))
    expect = np.zeros(hi - lo, np.float32)
    for p, c in zip(positions, clips):
        a = p - lo
        if a < 0:
            c, a = c[-a:], 0
        expect[a:a + len(c)] += c[:len(expect) - a]
    best = 0.0
    for shift in range(-960, 961, 48):
        a0 = lo + shift
        if a0 < 0 or a0 >= len(room):
            continue
        best = max(best, pearson(room[a0:a0 + len(expect)], expect))
    return best


def opus_tags(path: str) -> dict[str, str]:
    """The OpusTags comments of an Ogg Opus file (RFC 7845 §5.2), keys upper-cased."""
    try:
        with open(path, "rb") as f:
            data = f.read(1 << 16)
    except OSError:
        return {}
    i = data.find(b"OpusTags")
    if i < 0:
        return {}
    try:
        j = i + 8
        vlen = int.from_bytes(data[j:j + 4], "little")
        j += 4 + vlen
        count = int.from_bytes(data[j:j + 4], "little")
        j += 4
        out = {}
        for _ in range(count):
            n = int.from_bytes(data[j:j + 4], "little")
            j += 4
            key, _, value = data[j:j + n].decode("utf-8", "replace").partition("=")
            out[key.upper()] = value
            j += n
        return out
    except (ValueError, IndexError):
        return {}
