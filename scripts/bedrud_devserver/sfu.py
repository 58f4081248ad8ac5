"""The LiveKit side of the devserver: rooms, participants, tracks, data, speakers.

`SFU` is what Bedrud's REST handlers call (CreateRoom, DeleteRoom,
RemoveParticipant, MutePublishedTrack, UpdateParticipant, SendData) and what the
signalling sessions and scripted participants live in. Everything here runs on
the one asyncio loop; nothing is thread-safe and nothing needs to be.
"""
from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from typing import Any, Callable, Optional

from aiortc.contrib.media import MediaRelay
from aiortc.mediastreams import MediaStreamTrack
from livekit.protocol import models as lkm
from livekit.protocol import rtc as lkr

from .config import ServerConfig
from .faults import FaultConfig
from .forward import Forwarder
from .sids import check_sid, new_sid

log = logging.getLogger("devserver.sfu")

SPEAKING_THRESHOLD = 0.01  # RMS of full scale, about -40 dBFS
DATA_LOG_LIMIT = 500


def reason_value(name: str) -> int:
    return lkm.DisconnectReason.Value(name)


class PublishedTrack:
    """One published track. With `--media forward` (the default) an audio track's
    `forwarder` sends the publisher's packets to every subscriber; with `--media
    reencode`, and for video (a scripted camera) in both modes, subscribers get their
    own relay of `source_track`, encoded again per subscriber."""

    def __init__(self, owner: "Participant", name: str, source: int, source_track: Optional[MediaStreamTrack],
                 kind: int = lkm.TrackType.AUDIO, mime: str = "audio/opus", stereo: bool = False,
                 sid: Optional[str] = None) -> None:
        self.sid = check_sid(sid, "TR") if sid else new_sid("TR")
        self.owner = owner
        self.name = name
        self.source = source
        self.kind = kind
        self.mime = mime
        self.stereo = stereo
        self.muted = False
        self.disable_dtx = False
        self.disable_red = False
        self.ended_at: Optional[float] = None   # monotonic time it was unpublished
        self.source_track = source_track
        self.relay = MediaRelay()
        self.forwarder = Forwarder()
        self.level_fn: Callable[[], float] = lambda: 0.0

    @property
    def forwardable(self) -> bool:
        return self.kind == lkm.TrackType.AUDIO and self.source_track is not None

    def subscribe(self) -> MediaStreamTrack:
        assert self.source_track is not None
        return self.relay.subscribe(self.source_track, buffered=True)

    def info(self) -> lkm.TrackInfo:
        info = lkm.TrackInfo(sid=self.sid, type=self.kind, name=self.name, muted=self.muted, source=self.source,
                             mime_type=self.mime, stream="microphone" if self.source == lkm.TrackSource.MICROPHONE else "")
        if self.kind == lkm.TrackType.AUDIO:
            info.codecs.add(mime_type=self.mime)
            if self.stereo:
                info.audio_features.append(lkm.AudioTrackFeature.TF_STEREO)
        return info

    def summary(self) -> dict:
        return {"sid": self.sid, "type": lkm.TrackType.Name(self.kind), "source": lkm.TrackSource.Name(self.source),
                "muted": self.muted}


class Participant:
    """One identity in a room. Subclasses: ClientParticipant (a real connection),
    ScriptedParticipant (driven by a scenario)."""

    scripted = False

    def __init__(self, room: "LKRoom", identity: str, name: str, metadata: str = "",
                 can_update_metadata: bool = False, can_publish: bool = True) -> None:
        self.room = room
        self.sid = new_sid("PA")
        self.identity = identity
        self.name = name
        self.metadata = metadata
        self.attributes: dict[str, str] = {}
        self.can_update_metadata = can_update_metadata
        self.can_publish = can_publish
        self.state = lkm.ParticipantInfo.JOINING
        now = time.time()
        self.joined_at_ms = int(now * 1000)
        self.version = 1
        self.tracks: dict[str, PublishedTrack] = {}
        self.disconnect_reason = 0
        self.data_sequence = 0
        self.speaking = False

    def touch(self) -> None:
        self.version += 1

    def info(self) -> lkm.ParticipantInfo:
        perm = lkm.ParticipantPermission(can_subscribe=True, can_publish=self.can_publish,
                                         can_publish_data=self.can_publish,
                                         can_update_metadata=self.can_update_metadata)
        info = lkm.ParticipantInfo(
            sid=self.sid, identity=self.identity, state=self.state, metadata=self.metadata,
            joined_at=self.joined_at_ms // 1000, joined_at_ms=self.joined_at_ms, name=self.name,
            version=self.version, permission=perm, is_publisher=bool(self.tracks),
            disconnect_reason=self.disconnect_reason,
        )
        for key, value in self.attributes.items():
            info.attributes[key] = value
        info.tracks.extend(t.info() for t in self.tracks.values())
        return info

    def level(self) -> float:
        levels = [t.level_fn() for t in self.tracks.values() if not t.muted and t.kind == lkm.TrackType.AUDIO]
        return max(levels, default=0.0)

    def summary(self) -> dict:
        return {"identity": self.identity, "name": self.name,
                "state": lkm.ParticipantInfo.State.Name(self.state), "joinedAt": self.joined_at_ms // 1000,
                "tracks": [t.summary() for t in self.tracks.values()]}

    def next_data_sequence(self) -> int:
        self.data_sequence += 1
        return self.data_sequence

    # MARK: hooks for subclasses

    def send_signal(self, response: lkr.SignalResponse) -> None:
        """Queue one signal message to this participant's client (none for scripted)."""

    def deliver_data(self, packet: bytes, reliable: bool) -> None:
        """Send one serialized DataPacket on this participant's subscriber channel."""

    def track_added(self, track: PublishedTrack) -> None:
        """Another participant published `track` (auto-subscribe hook)."""

    def track_removed(self, track: PublishedTrack) -> None:
        """`track` is gone (unpublished, or its owner left)."""

    async def shutdown(self, reason: int, action: int = lkr.LeaveRequest.DISCONNECT) -> None:
        """Tell the client why it is leaving and close its connections."""

    def subscribed_to_participant(self, sid: str) -> bool:
        return False

    def server_muted(self, track: PublishedTrack) -> None:
        """The server muted `track` (Bedrud's mute endpoint)."""

    def drop_connection(self, seconds: float) -> None:
        """Simulate a network outage of `seconds` for this participant."""

    def dev_state(self) -> dict:
        return {"sid": self.sid, "identity": self.identity, "name": self.name, "metadata": self.metadata,
                "state": lkm.ParticipantInfo.State.Name(self.state), "scripted": self.scripted,
                "speaking": self.speaking,
                "tracks": [dict(t.summary(), name=t.name) for t in self.tracks.values()]}


class LKRoom:
    def __init__(self, sfu: "SFU", name: str, max_participants: int) -> None:
        self.sfu = sfu
        self.sid = new_sid("RM")
        self.name = name
        self.max_participants = max_participants
        self.created = time.time()
        self.metadata = ""
        self.participants: dict[str, Participant] = {}
        self.faults = FaultConfig()
        self.data_log: list[dict] = []
        self.closed = False
        self._loops: list[asyncio.Task] = []
        self.first_client_joined = asyncio.Event()
        # Every track published here, kept after it is gone, for /_dev/rooms/ROOM/packets/TRACK.
        self.published: dict[str, PublishedTrack] = {}

    # MARK: info

    def room_info(self) -> lkm.Room:
        return lkm.Room(sid=self.sid, name=self.name, empty_timeout=300, departure_timeout=20,
                        max_participants=self.max_participants, creation_time=int(self.created),
                        creation_time_ms=int(self.created * 1000), metadata=self.metadata,
                        num_participants=len(self.participants),
                        num_publishers=sum(1 for p in self.participants.values() if p.tracks),
                        enabled_codecs=[lkm.Codec(mime="audio/opus"), lkm.Codec(mime="audio/red")])

    def clients(self) -> list[Participant]:
        return [p for p in self.participants.values() if not p.scripted]

    # MARK: membership

    def start_loops(self) -> None:
        if not self._loops and not self.closed:
            self._loops = [asyncio.ensure_future(self._speaker_loop()), asyncio.ensure_future(self._quality_loop())]

    def add(self, p: Participant) -> None:
        self.participants[p.identity] = p
        self.start_loops()
        self.broadcast_update(p, exclude=p)
        self.broadcast_room_update()
        if not p.scripted:
            self.first_client_joined.set()
        log.info("room %s: %s (%s) joined", self.name, p.identity, p.sid)

    async def remove(self, p: Participant, reason: int, action: int = lkr.LeaveRequest.DISCONNECT) -> None:
        if self.participants.get(p.identity) is not p:
            return
        del self.participants[p.identity]
        p.state = lkm.ParticipantInfo.DISCONNECTED
        p.disconnect_reason = reason
        p.touch()
        for track in list(p.tracks.values()):
            track.ended_at = time.monotonic()
            for other in self.participants.values():
                other.track_removed(track)
        await p.shutdown(reason, action)
        if reason != lkm.DisconnectReason.DUPLICATE_IDENTITY:
            self.broadcast_update(p)
            # Scripted participants have rows too (their join enrols them as /room/join would).
            if self.sfu.on_participant_left is not None:
                self.sfu.on_participant_left(self.name, p.identity)
        self.broadcast_room_update()
        log.info("room %s: %s left (%s)", self.name, p.identity, lkm.DisconnectReason.Name(reason))

    async def close(self, reason: int) -> None:
        self.closed = True
        for task in self._loops:
            task.cancel()
        for p in list(self.participants.values()):
            # Everyone goes; nobody needs to hear about the others leaving.
            self.participants.pop(p.identity, None)
            p.state = lkm.ParticipantInfo.DISCONNECTED
            p.disconnect_reason = reason
            await p.shutdown(reason)

    # MARK: tracks

    def publish(self, p: Participant, track: PublishedTrack) -> None:
        p.tracks[track.sid] = track
        self.published[track.sid] = track
        while len(self.published) > 16:
            del self.published[next(iter(self.published))]
        p.touch()
        self.broadcast_update(p)
        self.broadcast_room_update()
        for other in list(self.participants.values()):
            if other is not p:
                other.track_added(track)

    def unpublish(self, p: Participant, track_sid: str) -> Optional[PublishedTrack]:
        track = p.tracks.pop(track_sid, None)
        if track is None:
            return None
        track.ended_at = time.monotonic()
        p.touch()
        for other in list(self.participants.values()):
            if other is not p:
                other.track_removed(track)
        self.broadcast_update(p)
        return track

    def set_muted(self, p: Participant, track: PublishedTrack, muted: bool) -> None:
        if track.muted == muted:
            return
        track.muted = muted
        # LiveKit's forwarder drops a muted publisher's packets (PubMute) and resyncs
        # timestamps to the wall clock when it unmutes.
        track.forwarder.muted = muted
        p.touch()
        self.broadcast_update(p)

    # MARK: broadcasts

    def broadcast_update(self, p: Participant, exclude: Optional[Participant] = None) -> None:
        msg = lkr.SignalResponse(update=lkr.ParticipantUpdate(participants=[p.info()]))
        for q in list(self.participants.values()):
            if q is not exclude and not q.scripted:
                q.send_signal(msg)
        if p.state == lkm.ParticipantInfo.DISCONNECTED and p is not exclude and not p.scripted:
            pass  # the leaving participant hears about it through `leave`

    def broadcast_room_update(self) -> None:
        msg = lkr.SignalResponse(room_update=lkr.RoomUpdate(room=self.room_info()))
        for q in self.clients():
            q.send_signal(msg)

    def send_data(self, packet: lkm.DataPacket, reliable: bool, sender: Optional[Participant],
                  destinations: list[str]) -> int:
        """Forward one DataPacket; returns how many participants it went to."""
        packet.kind = lkm.DataPacket.RELIABLE if reliable else lkm.DataPacket.LOSSY
        raw = packet.SerializeToString()
        count = 0
        for q in list(self.participants.values()):
            if q is sender or q.scripted:
                continue
            if destinations and q.identity not in destinations:
                continue
            q.deliver_data(raw, reliable)
            count += 1
        self._log_data(packet, reliable, sender, destinations, count)
        return count

    def _log_data(self, packet: lkm.DataPacket, reliable: bool, sender: Optional[Participant],
                  destinations: list[str], count: int) -> None:
        if not packet.HasField("user"):
            return
        payload = bytes(packet.user.payload)
        try:
            decoded: Any = json.loads(payload.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            decoded = None
        self.data_log.append({
            "time": time.time(), "from": sender.identity if sender else "", "topic": packet.user.topic,
            "reliable": reliable, "destinations": list(destinations), "delivered_to": count,
            "json": decoded, "size": len(payload),
        })
        del self.data_log[:-DATA_LOG_LIMIT]

    def server_data(self, payload: dict, topic: str, destinations: list[str]) -> int:
        """What Bedrud's RoomService.SendData does: reliable, no sender identity."""
        data = json.dumps(payload, separators=(",", ":")).encode()
        packet = lkm.DataPacket(kind=lkm.DataPacket.RELIABLE, destination_identities=destinations,
                                user=lkm.UserPacket(payload=data, topic=topic, destination_identities=destinations))
        return self.send_data(packet, True, None, destinations)

    # MARK: periodic updates

    async def _speaker_loop(self) -> None:
        interval = self.sfu.config.speaker_interval
        while True:
            await asyncio.sleep(interval)
            changed: list[lkm.SpeakerInfo] = []
            for p in list(self.participants.values()):
                level = p.level()
                speaking = level > SPEAKING_THRESHOLD
                if speaking != p.speaking:
                    p.speaking = speaking
                    changed.append(lkm.SpeakerInfo(sid=p.sid, level=min(1.0, level * 4) if speaking else 0.0,
                                                   active=speaking))
            if not changed:
                continue
            for q in self.clients():
                visible = [s for s in changed if s.sid == q.sid or q.subscribed_to_participant(s.sid)]  # type: ignore[attr-defined]
                if visible:
                    q.send_signal(lkr.SignalResponse(speakers_changed=lkr.SpeakersChanged(speakers=visible)))

    def quality(self) -> tuple[int, float]:
        loss = self.faults.loss + self.faults.reorder / 2
        if loss >= 0.05 or self.faults.jitter >= 0.1:
            return lkm.ConnectionQuality.POOR, 2.0
        if loss >= 0.01 or self.faults.jitter >= 0.03:
            return lkm.ConnectionQuality.GOOD, 3.5
        return lkm.ConnectionQuality.EXCELLENT, 4.5

    async def _quality_loop(self) -> None:
        while True:
            await asyncio.sleep(self.sfu.config.quality_interval)
            quality, score = self.quality()
            for q in self.clients():
                if q.state != lkm.ParticipantInfo.ACTIVE:
                    continue
                sids = [q.sid] + [p.sid for p in self.participants.values()
                                  if p is not q and q.subscribed_to_participant(p.sid)]  # type: ignore[attr-defined]
                updates = [lkr.ConnectionQualityInfo(participant_sid=s, quality=quality, score=score) for s in sids]
                q.send_signal(lkr.SignalResponse(connection_quality=lkr.ConnectionQualityUpdate(updates=updates)))

    def dev_state(self) -> dict:
        return {"sid": self.sid, "name": self.name, "maxParticipants": self.max_participants,
                "faults": self.faults.to_json(),
                "participants": [p.dev_state() for p in self.participants.values()],
                "data": self.data_log[-100:]}


class SFU:
    """All LiveKit rooms of this server, keyed by name."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.node_id = new_sid("ND")
        self.rooms: dict[str, LKRoom] = {}
        self.default_faults = FaultConfig()
        # identity -> monotonic deadline: connection attempts refused (dropped network)
        self.dropped: dict[tuple[str, str], float] = {}
        self.counters = {"signal_connections": 0, "bad_frames": 0, "rejected_connections": 0}
        # LiveKit's webhooks to Bedrud (participant_left, room_finished); set by lifecycle.attach.
        self.on_participant_left: Optional[Callable[[str, str], None]] = None
        self.on_room_finished: Optional[Callable[[str], None]] = None

    def create_room(self, name: str, max_participants: int = 0) -> LKRoom:
        room = self.rooms.get(name)
        if room is None or room.closed:
            room = LKRoom(self, name, max_participants)
            room.faults = FaultConfig(**self.default_faults.__dict__)
            self.rooms[name] = room
        return room

    def room(self, name: str) -> Optional[LKRoom]:
        room = self.rooms.get(name)
        return room if room is not None and not room.closed else None

    async def delete_room(self, name: str) -> bool:
        room = self.rooms.pop(name, None)
        if room is None:
            return False
        await room.close(lkm.DisconnectReason.ROOM_DELETED)
        if self.on_room_finished is not None:
            self.on_room_finished(name)
        return True

    async def remove_participant(self, room_name: str, identity: str, reason: str = "PARTICIPANT_REMOVED") -> bool:
        room = self.room(room_name)
        p = room.participants.get(identity) if room else None
        if room is None or p is None:
            return False
        await room.remove(p, reason_value(reason))
        return True

    def server_mute(self, room_name: str, identity: str, kinds: tuple[str, ...]) -> bool:
        """MutePublishedTrack for every track matching `kinds` (AUDIO, CAMERA,
        SCREEN_SHARE, SCREEN_SHARE_AUDIO). False when the participant is absent."""
        room = self.room(room_name)
        p = room.participants.get(identity) if room else None
        if room is None or p is None:
            return False
        for track in list(p.tracks.values()):
            match = ("AUDIO" in kinds and track.kind == lkm.TrackType.AUDIO) or \
                    (lkm.TrackSource.Name(track.source) in kinds)
            if match and not track.muted:
                p.server_muted(track)  # type: ignore[attr-defined]
                room.set_muted(p, track, True)
        return True

    def edit_metadata(self, room_name: str, identity: str, edit: Callable[[dict], bool]) -> Optional[bool]:
        room = self.room(room_name)
        p = room.participants.get(identity) if room else None
        if room is None or p is None:
            return None
        try:
            meta = json.loads(p.metadata) if p.metadata else {}
            if not isinstance(meta, dict):
                meta = {}
        except ValueError:
            meta = {}
        changed = edit(meta)
        if changed:
            p.metadata = json.dumps(meta, separators=(",", ":"))
            p.touch()
            room.broadcast_update(p)
        return changed

    def send_server_data(self, room_name: str, payload: dict, topic: str, destinations: list[str]) -> int:
        room = self.room(room_name)
        return room.server_data(payload, topic, destinations) if room else 0

    def participant_summary(self, room_name: str, identity: str) -> Optional[dict]:
        room = self.room(room_name)
        p = room.participants.get(identity) if room else None
        return p.summary() if p else None

    def drop(self, room_name: str, identity: str, seconds: float) -> bool:
        room = self.room(room_name)
        p = room.participants.get(identity) if room else None
        if p is None or p.scripted:
            return False
        self.dropped[(room_name, identity)] = time.monotonic() + seconds
        p.drop_connection(seconds)  # type: ignore[attr-defined]
        return True

    def is_dropped(self, room_name: str, identity: str) -> bool:
        until = self.dropped.get((room_name, identity))
        if until is None:
            return False
        if time.monotonic() >= until:
            del self.dropped[(room_name, identity)]
            return False
        return True

    def dev_state(self) -> dict:
        return {"nodeId": self.node_id, "counters": dict(self.counters),
                "rooms": [r.dev_state() for r in self.rooms.values() if not r.closed]}


def chat_payload(sender_identity: str, sender_name: str, message: str, now_ms: Optional[int] = None) -> dict:
    """Bedrud's chat JSON (bedrud-api.md §3.1)."""
    return {"type": "chat", "id": str(uuid.uuid4()), "timestamp": now_ms if now_ms is not None else int(time.time() * 1000),
            "message": message, "senderName": sender_name, "senderIdentity": sender_identity, "attachments": []}
