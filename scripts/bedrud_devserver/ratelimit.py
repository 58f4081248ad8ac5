"""Fiber's fixed-window limiter as Bedrud v0.12.0 configures it (middleware/ratelimit.go).

One counter per client address per route; the first hit opens a window of `window`
seconds; hit number `limit + 1` inside it is refused with 429 and `Retry-After` (the
whole seconds until the window ends). A pure value: the caller passes "now".
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional


@dataclass
class Decision:
    allowed: bool
    limit: int
    remaining: int
    reset_in: int  # whole seconds until the window ends (X-RateLimit-Reset / Retry-After)


@dataclass
class RateLimiter:
    limit: int
    window: float = 60.0
    _windows: dict[str, tuple[float, int]] = field(default_factory=dict)  # key -> (expiry, hits)

    def hit(self, key: str, now: float) -> Optional[Decision]:
        """Counts one request from `key`; None when the limit is off (0)."""
        if self.limit <= 0:
            return None
        expiry, hits = self._windows.get(key, (0.0, 0))
        if expiry == 0.0 or now >= expiry:
            expiry, hits = now + self.window, 0
        hits += 1
        self._windows[key] = (expiry, hits)
        reset_in = max(0, math.ceil(expiry - now))
        return Decision(allowed=hits <= self.limit, limit=self.limit, remaining=max(0, self.limit - hits),
                        reset_in=reset_in)
