"""Scores the mix encoder's settings: reads what `bedrud-bot bench --write-mix DIR` wrote
(mix-input.wav, the four-talker room before encoding, and one decoded, aligned WAV per
setting: mix-celt-c5.wav, mix-celt-c5-dtx.wav, mix-voice-c5-32k.wav, …) and prints, per setting, the
waveform correlation and segmental SNR against the input, the log-spectral distance
(what a listener hears of the spectrum, blind to phase), and, when the `pesq` package
is importable, PESQ wide-band (ITU-T P.862.2, MOS-LQO 1–4.6, on 16 kHz resampled copies).

    python -m bench_peers.mix_quality DIR
"""
from __future__ import annotations

import os
import re
import sys
import wave

import numpy as np

RATE = 48000
FRAME = 960


def read(path: str) -> np.ndarray:
    with wave.open(path, "rb") as w:
        if w.getframerate() != RATE or w.getsampwidth() != 2 or w.getnchannels() != 1:
            raise ValueError(f"{path}: expected 48 kHz 16-bit mono")
        return np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float64) / 32768


def frames(x: np.ndarray) -> np.ndarray:
    n = len(x) // FRAME
    return x[: n * FRAME].reshape(n, FRAME)


def segmental_snr(x: np.ndarray, y: np.ndarray) -> float:
    fx, fe = frames(x), frames(x - y)
    px, pe = (fx ** 2).mean(1), (fe ** 2).mean(1)
    keep = px > 1e-5  # −50 dBFS
    return float(np.clip(10 * np.log10(px[keep] / np.maximum(pe[keep], 1e-12)), -10, 35).mean())


def log_spectral_distance(x: np.ndarray, y: np.ndarray) -> float:
    """Mean over 20 ms frames above −50 dBFS of the RMS difference of the two log power
    spectra (Hann window, 50 Hz–12 kHz), in dB."""
    win = np.hanning(FRAME)
    fx, fy = frames(x) * win, frames(y) * win
    keep = (frames(x) ** 2).mean(1) > 1e-5
    freqs = np.fft.rfftfreq(FRAME, 1 / RATE)
    band = (freqs >= 50) & (freqs <= 12000)
    sx = np.abs(np.fft.rfft(fx[keep], axis=1))[:, band] ** 2
    sy = np.abs(np.fft.rfft(fy[keep], axis=1))[:, band] ** 2
    floor = 1e-9
    d = 10 * np.log10((sx + floor) / (sy + floor))
    return float(np.sqrt((d ** 2).mean(1)).mean())


def pesq_wb(x: np.ndarray, y: np.ndarray) -> float | None:
    try:
        from pesq import pesq  # optional: pip install pesq==0.0.4 (not in scripts/requirements.txt)
    except ImportError:
        return None
    # 48 kHz → 16 kHz: average-free decimation after a windowed-sinc low-pass at 7.6 kHz.
    taps = np.sinc(np.arange(-96, 97) * 7600 * 2 / RATE) * np.hamming(193) * 7600 * 2 / RATE
    def down(s: np.ndarray) -> np.ndarray:
        return np.convolve(s, taps, mode="same")[::3].astype(np.float32)
    return float(pesq(16000, down(x), down(y), "wb"))


def main() -> int:
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print("usage: python -m bench_peers.mix_quality DIR  (DIR from bedrud-bot bench --write-mix DIR)", file=sys.stderr)
        return 2
    d = sys.argv[1]
    x = read(os.path.join(d, "mix-input.wav"))
    names = sorted((n for n in os.listdir(d) if n.startswith("mix-") and n.endswith(".wav") and n != "mix-input.wav"),
                   key=lambda n: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", n)])
    print("| setting | correlation | segmental SNR dB | log-spectral distance dB | PESQ WB |")
    print("|---|---|---|---|---|")
    for name in names:
        y = read(os.path.join(d, name))
        m = min(len(x), len(y))
        a, b = x[:m], y[:m]
        corr = float(np.corrcoef(a, b)[0, 1])
        p = pesq_wb(a, b)
        print(f"| {name[4:-4]} | {corr:.3f} | {segmental_snr(a, b):.1f} | {log_spectral_distance(a, b):.2f} | "
              f"{'—' if p is None else f'{p:.2f}'} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
