"""When a Bedrud room stops being active (Bedrud v0.12.0).

Three ways, each a store change the REST handlers then see (`/room/join` answers 410 or
`archived_owned`, `/room/refresh-token` 410):
- the idle sweep (scheduler.go:237-303): a room that is active, not persistent, older
  than `min_age`, with nobody in LiveKit, is set idle and its participant rows inactive.
  Bedrud sweeps once a minute and idles a room that is empty at that moment; the
  devserver idles it once it has been empty for `idle_after` seconds without a break,
  so a test can set both times to a few seconds and know when it happens;
- LiveKit's room_finished webhook (livekit_webhook.go:182-233): the room is closed in
  LiveKit (here: the SFU deletes it), so the Bedrud room goes idle at once;
- LiveKit closing an empty room by itself (`LiveKitTimeouts`, off unless
  --lk-departure-timeout / --lk-empty-timeout are set) is a room_finished too;
- LiveKit's participant_left webhook (livekit_webhook.go:150-180): only that
  participant's row goes inactive.

`IdleSweep` is the decision alone (a pure value fed with times and head counts);
`attach` wires it and the webhooks to one running server.
"""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional

from .store import Room, Store

if TYPE_CHECKING:
    from .app import Server

log = logging.getLogger("devserver.lifecycle")


@dataclass
class IdleSweep:
    min_age: float = 300.0
    idle_after: float = 60.0
    # room id -> last time the sweep saw someone in its LiveKit room (or its creation)
    _last_occupied: dict[str, float] = field(default_factory=dict)

    def due(self, rooms: list[Room], occupancy: Callable[[str], int], now: float) -> list[str]:
        """Ids of the rooms to set idle now. `occupancy(name)` is the number of
        participants in that LiveKit room (0 when it does not exist)."""
        idle: list[str] = []
        for room in rooms:
            if not room.is_active or room.settings.get("isPersistent"):
                self._last_occupied.pop(room.id, None)
                continue
            if occupancy(room.name) > 0:
                self._last_occupied[room.id] = now
                continue
            last = max(self._last_occupied.get(room.id, room.created_at), room.created_at)
            self._last_occupied.setdefault(room.id, last)
            if now - room.created_at >= self.min_age and now - last >= self.idle_after:
                idle.append(room.id)
                self._last_occupied.pop(room.id, None)
        return idle


@dataclass
class LiveKitTimeouts:
    """When LiveKit closes a room by itself (its room defaults, which Bedrud keeps):
    `departure` seconds after the last participant left, `empty` seconds after creation
    when nobody ever came. 0 turns a rule off. The close is LiveKit's room_finished,
    which makes the Bedrud room inactive (`room_finished` below)."""
    departure: float = 0.0
    empty: float = 0.0
    _seen: dict[str, float] = field(default_factory=dict)  # LiveKit room sid -> last time occupied

    def due(self, rooms: list[tuple[str, str, float, int]], now: float) -> list[str]:
        """Names of the LiveKit rooms to close; each entry is (sid, name, created, participants)."""
        close: list[str] = []
        for sid, name, created, count in rooms:
            if count > 0:
                self._seen[sid] = now
                continue
            last = self._seen.get(sid)
            if last is not None:
                if self.departure > 0 and now - last >= self.departure:
                    close.append(name)
                    self._seen.pop(sid, None)
            elif self.empty > 0 and now - created >= self.empty:
                close.append(name)
        return close


def room_finished(store: Store, room_name: str) -> None:
    """LiveKit closed the room: RemoveAllParticipants + SetRoomIdle (livekit_webhook.go:224-231)."""
    room = store.room_by_name(room_name)
    if room is not None:
        store.set_idle(room.id)
        log.info("room %s: inactive (LiveKit room finished)", room_name)


def participant_left(store: Store, room_name: str, identity: str) -> None:
    """RemoveParticipant on LiveKit's participant_left (livekit_webhook.go:171)."""
    room = store.room_by_name(room_name)
    if room is not None:
        store.participant_left(room.id, identity)


def attach(server: "Server", clock: Callable[[], float] = time.time) -> Callable[[], Optional[asyncio.Task]]:
    """Hooks the webhooks into the SFU and returns a starter for the sweep task
    (call it once the event loop runs)."""
    cfg, store, sfu = server.config, server.store, server.sfu
    sfu.on_room_finished = lambda name: room_finished(store, name)
    sfu.on_participant_left = lambda name, identity: participant_left(store, name, identity)
    sweep = IdleSweep(cfg.room_min_age, cfg.room_idle_after)
    timeouts = LiveKitTimeouts(cfg.lk_departure_timeout, cfg.lk_empty_timeout)

    def occupancy(name: str) -> int:
        room = sfu.room(name)
        return len(room.participants) if room is not None else 0

    async def run() -> None:
        while True:
            sweep.min_age, sweep.idle_after = cfg.room_min_age, cfg.room_idle_after
            for room_id in sweep.due(list(store.rooms.values()), occupancy, clock()):
                room = store.rooms.get(room_id)
                store.set_idle(room_id)
                log.info("room %s: inactive (idle sweep)", room.name if room else room_id)
            timeouts.departure, timeouts.empty = cfg.lk_departure_timeout, cfg.lk_empty_timeout
            live = [(r.sid, r.name, r.created, len(r.participants)) for r in list(sfu.rooms.values()) if not r.closed]
            for name in timeouts.due(live, clock()):
                log.info("LiveKit room %s: closed (empty timeout)", name)
                await sfu.delete_room(name)
            # Fine enough for the shortest times tests use, cheap for the defaults.
            await asyncio.sleep(max(0.1, min(1.0, cfg.room_idle_after / 4, cfg.room_min_age / 4)))

    def start() -> Optional[asyncio.Task]:
        return asyncio.ensure_future(run())

    return start
