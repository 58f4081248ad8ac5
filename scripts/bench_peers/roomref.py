"""What the room really carried for each scripted speaker.

On a loaded machine the devserver's scripted speakers fall behind the wall clock; past
200 ms they jump their RTP timestamps forward and play on from the same clip sample
(`/_dev/state` lists each jump as `audio.catchUps`). The room then carries the clip with
those pauses inserted. A recorder that keeps time writes the pauses; one that writes
decoded frames back to back does not. Comparing every file with the bare clip would score
the first as the less faithful, so fidelity is measured against this reference instead.
"""
from __future__ import annotations

import json
import urllib.request

import numpy as np


def catch_ups(base_url: str, timeout: float = 10) -> dict[str, list[tuple[int, int]]]:
    """identity -> [(clip sample, samples of silence inserted there)] for every scripted
    participant the devserver knows, from `/_dev/state`."""
    with urllib.request.urlopen(base_url + "/_dev/state", timeout=timeout) as r:
        state = json.loads(r.read())
    out: dict[str, list[tuple[int, int]]] = {}
    for room in state.get("rooms", []):
        for p in room.get("participants", []):
            audio = p.get("audio")
            if p.get("scripted") and isinstance(audio, dict):
                out[p["identity"]] = [(int(c["atClipSample"]), int(c["skippedSamples"]))
                                      for c in audio.get("catchUps", [])]
    return out


def catch_ups_by_room(base_url: str, timeout: float = 10) -> dict[str, dict[str, list[tuple[int, int]]]]:
    """catch_ups, per room: room name -> identity -> jumps (identities repeat between
    rooms, e.g. every generated meeting has a p01). A participant that has left is no
    longer in `/_dev/state`, so its jumps are not counted."""
    with urllib.request.urlopen(base_url + "/_dev/state", timeout=timeout) as r:
        state = json.loads(r.read())
    out: dict[str, dict[str, list[tuple[int, int]]]] = {}
    for room in state.get("rooms", []):
        mine = out.setdefault(room.get("name", ""), {})
        for p in room.get("participants", []):
            audio = p.get("audio")
            if p.get("scripted") and isinstance(audio, dict):
                mine[p["identity"]] = [(int(c["atClipSample"]), int(c["skippedSamples"]))
                                       for c in audio.get("catchUps", [])]
    return out


def as_carried(source: np.ndarray, jumps: list[tuple[int, int]]) -> np.ndarray:
    """The clip with each jump's silence inserted at its clip sample."""
    if not jumps:
        return source
    parts, pos = [], 0
    for at, skipped in sorted(jumps):
        at = min(max(at, pos), len(source))
        parts.append(source[pos:at])
        parts.append(np.zeros(max(0, skipped), dtype=source.dtype))
        pos = at
    parts.append(source[pos:])
    return np.concatenate(parts)
