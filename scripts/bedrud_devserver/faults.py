"""Network faults on the media path: loss, reorder, duplication, jitter, blackhole.

A `FaultShaper` sits between SRTP protection and the ICE socket of one subscriber
connection, so the receiver sees exactly what a bad network would deliver: whole
SRTP packets lost, late, twice or out of order. Seeded, so runs repeat.
"""
from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from typing import Awaitable, Callable

from .durations import parse_duration


@dataclass
class FaultConfig:
    loss: float = 0.0        # fraction 0..1 of RTP packets dropped
    reorder: float = 0.0     # fraction held back by `reorder_delay` so later ones overtake
    duplicate: float = 0.0   # fraction sent twice
    jitter: float = 0.0      # seconds: each packet delayed uniformly in [0, jitter]
    reorder_delay: float = 0.045
    seed: int = 1

    def active(self) -> bool:
        return any((self.loss, self.reorder, self.duplicate, self.jitter))

    def to_json(self) -> dict:
        return {"loss": self.loss, "reorder": self.reorder, "duplicate": self.duplicate,
                "jitter_ms": round(self.jitter * 1000, 3), "seed": self.seed}

    def update(self, settings: dict[str, str]) -> None:
        """Applies `key=value` knobs: loss=5%, reorder=2%, duplicate=1%, jitter=30ms,
        seed=N. All or nothing: raises ValueError naming the bad knob and changes nothing."""
        new: dict[str, float | int] = {}
        for key, raw in settings.items():
            if key in ("loss", "reorder", "duplicate"):
                new[key] = parse_fraction(raw, key)
            elif key == "jitter":
                new[key] = parse_duration(raw)
                if new[key] > 5:
                    raise ValueError("jitter must be at most 5s")
            elif key == "seed":
                try:
                    new[key] = int(raw)
                except ValueError:
                    raise ValueError(f"seed must be an integer, not {raw!r}") from None
            else:
                raise ValueError(f"unknown fault knob {key!r} (expected loss, reorder, duplicate, jitter, seed)")
        for key, value in new.items():
            setattr(self, key, value)


def parse_fraction(raw: str, name: str) -> float:
    text = str(raw).strip()
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise ValueError(f"{name} must be a percentage like 5% or a fraction like 0.05, not {raw!r}") from None
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be between 0% and 100%")
    return value


@dataclass
class FaultStats:
    submitted: int = 0
    sent: int = 0
    lost: int = 0
    duplicated: int = 0
    reordered: int = 0
    blackholed: int = 0

    def to_json(self) -> dict:
        return dict(self.__dict__)


class FaultShaper:
    """Owned by the asyncio loop; `submit` is called from aiortc's RTP sender."""

    def __init__(self, config: FaultConfig, salt: int = 0) -> None:
        self.config = config
        self.rng = random.Random(config.seed * 1_000_003 + salt)
        self.stats = FaultStats()
        self.blackhole_until = 0.0
        self._pending: set[asyncio.Task] = set()

    def blackhole(self, seconds: float) -> None:
        self.blackhole_until = time.monotonic() + seconds

    def submit(self, packet: bytes, send: Callable[[bytes], Awaitable[None]]) -> None:
        cfg, st = self.config, self.stats
        st.submitted += 1
        if time.monotonic() < self.blackhole_until:
            st.blackholed += 1
            return
        if cfg.loss and self.rng.random() < cfg.loss:
            st.lost += 1
            return
        copies = 1
        if cfg.duplicate and self.rng.random() < cfg.duplicate:
            copies = 2
            st.duplicated += 1
        for _ in range(copies):
            delay = self.rng.uniform(0.0, cfg.jitter) if cfg.jitter else 0.0
            if cfg.reorder and self.rng.random() < cfg.reorder:
                delay += cfg.reorder_delay
                st.reordered += 1
            if delay <= 0:
                self._spawn(send(packet))
            else:
                loop = asyncio.get_running_loop()
                loop.call_later(delay, lambda p=packet: self._spawn(send(p)))

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._pending.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task) -> None:
        self._pending.discard(task)
        if not task.cancelled() and task.exception() is None:
            self.stats.sent += 1
