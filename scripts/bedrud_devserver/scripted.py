"""Synthetic participants driven by scenarios: always ACTIVE, one microphone track."""
from __future__ import annotations

import asyncio
import json
import logging
import random
import time

from aiortc import clock
from aiortc.mediastreams import MediaStreamError
from livekit.protocol import models as lkm

from .camera import CameraTrack
from .forward import SourcePacket, ntp_plus
from .media import ScriptedAudioTrack, ScriptedEncoder
from .sfu import LKRoom, Participant, PublishedTrack, chat_payload

log = logging.getLogger("devserver.scripted")


class ScriptedParticipant(Participant):
    scripted = True

    def __init__(self, room: LKRoom, identity: str, name: str, metadata: str = "", clock_offset: float = 0.0,
                 idle: str = "silence") -> None:
        super().__init__(room, identity, name, metadata, can_update_metadata=True)
        # How far this participant's device clock (the NTP time of its sender reports) is
        # ahead of the server's; LiveKit passes it through to subscribers as it is.
        self.clock_offset = clock_offset
        self.state = lkm.ParticipantInfo.ACTIVE
        self.audio = ScriptedAudioTrack()
        self.audio.set_idle(idle)
        self.track = PublishedTrack(self, "microphone", lkm.TrackSource.MICROPHONE, self.audio)
        self.track.level_fn = lambda: self.audio.level

    def join(self) -> None:
        self.room.add(self)
        self.room.publish(self, self.track)
        # A publisher sends whether or not anyone listens: keep the clock running.
        if self.room.sfu.config.media == "forward":
            self._sink = asyncio.ensure_future(_publish(self.audio, self.track, self.clock_offset))
        else:
            self._sink = asyncio.ensure_future(_drain(self.track.subscribe()))

    def dev_state(self) -> dict:
        out = super().dev_state()
        out["audio"] = {"framesSent": self.audio.frames_sent, "clipSamplesPlayed": self.audio.clip_samples_played,
                        "idle": self.audio.idle,
                        "catchUps": [{"atClipSample": at, "skippedSamples": n} for at, n in self.audio.catch_ups]}
        return out

    def camera_on(self) -> None:
        """Publishes a camera (scenario `camera ID`): subscriber offers then carry video."""
        if any(t.source == lkm.TrackSource.CAMERA for t in self.tracks.values()):
            return
        camera = CameraTrack(self)
        self.room.publish(self, camera)
        camera.start()

    def set_muted(self, muted: bool) -> None:
        self.audio.set_muted(muted)
        self.room.set_muted(self, self.track, muted)

    def server_muted(self, track: PublishedTrack) -> None:
        if track is self.track:  # a muted camera leaves the microphone alone
            self.audio.set_muted(True)

    def chat(self, message: str) -> int:
        payload = chat_payload(self.identity, self.name, message)
        data = json.dumps(payload, separators=(",", ":")).encode()
        packet = lkm.DataPacket(
            participant_identity=self.identity, participant_sid=self.sid, sequence=self.next_data_sequence(),
            user=lkm.UserPacket(payload=data, topic="chat", participant_sid=self.sid,
                                participant_identity=self.identity))
        return self.room.send_data(packet, True, self, [])

    async def shutdown(self, reason: int, action: int = 0) -> None:
        self.audio.stop()
        for t in self.tracks.values():
            if isinstance(t, CameraTrack):
                t.stop()


async def _drain(track) -> None:  # type: ignore[no-untyped-def]
    try:
        while True:
            await track.recv()
    except (MediaStreamError, asyncio.CancelledError):
        pass


# A client's audio sender reports about every 5 s, each interval drawn from 0.5-1.5 times
# that (RFC 3550 §6.3.1; libwebrtc's audio report interval); the first goes with the first packet.
REPORT_INTERVAL = 5.0


async def _publish(audio: ScriptedAudioTrack, track: PublishedTrack, clock_offset: float = 0.0) -> None:
    """The scripted participant's own encoder: its packets and its sender reports go
    through the same forwarder as a real client's."""
    encoder = ScriptedEncoder()
    next_report = 0.0
    try:
        while True:
            frame = await audio.recv()
            # In DTX a quiet frame is not coded: libwebrtc sends libopus' 1-byte DTX frame.
            if audio.last_kind == "dtx":
                packets = [encoder.dtx_packet(frame)]
            elif audio.last_payload is not None:  # coded when the scenario loaded (--scripted-precode)
                packets = [encoder.precoded(frame, audio.last_payload)]
            else:
                packets = encoder.encode(frame)
            marker = audio.last_marker
            for sequence, timestamp, payload in packets:
                await track.forwarder.on_packet(SourcePacket(sequence=sequence, timestamp=timestamp, marker=marker,
                                                             payload=payload))
                marker = False
            now = time.monotonic()
            if now >= next_report and audio.started_at is not None and track.forwarder.received:
                # The timestamp this instant has on the capture clock, whatever was sent late.
                track.forwarder.on_sender_report(ntp_plus(clock.current_ntp_time(), clock_offset),
                                                 encoder.timestamp_at(now - audio.started_at))
                next_report = now + REPORT_INTERVAL * random.uniform(0.5, 1.5)
    except (MediaStreamError, asyncio.CancelledError):
        pass
    except Exception:  # noqa: BLE001 — one participant's encoder must not take the server down
        log.exception("scripted encoder failed")
