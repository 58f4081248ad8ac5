"""Drives the official LiveKit Python SDK against a devserver; prints one JSON report.

Runs *inside* a private network namespace (scripts/netns-run), because the SDK's
libwebrtc gathers no ICE candidates on loopback. test_sdk.py runs it and asserts
on the report; run it by hand with:

    scripts/netns-run .venv/bin/python -m bedrud_devserver.tests.sdk_probe
(with PYTHONPATH=scripts)
"""
from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import traceback

import numpy as np
from livekit import rtc

from .helpers import DevServer
from .lkclient import dominant_frequency, rms, sdk_connect, sdk_guest_join

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO = os.path.join(HERE, "scenarios", "sdk-proof.scenario")


def loudest_second(samples: np.ndarray, rate: int = 48000) -> np.ndarray:
    if len(samples) <= rate:
        return samples
    best, best_rms = samples[:rate], -1.0
    for start in range(0, len(samples) - rate, rate // 4):
        window = samples[start:start + rate]
        value = rms(window)
        if value > best_rms:
            best, best_rms = window, value
    return best


class Observer:
    """Records what one SDK Room sees, with times relative to `t0`."""

    def __init__(self, name: str, room: rtc.Room, t0: float) -> None:
        self.name = name
        self.room = room
        self.t0 = t0
        self.events: list[dict] = []
        self.audio: dict[str, list[np.ndarray]] = {}
        self.track_owner: dict[str, str] = {}
        self.data: list[dict] = []
        self.disconnect_reason: str | None = None
        self.disconnected = asyncio.Event()
        self.tasks: list[asyncio.Task] = []
        room.on("participant_connected", lambda p: self._ev("participant_connected", identity=p.identity))
        room.on("participant_disconnected", lambda p: self._ev("participant_disconnected", identity=p.identity))
        room.on("track_muted", lambda p, pub: self._ev("track_muted", identity=p.identity, track=pub.sid))
        room.on("track_unmuted", lambda p, pub: self._ev("track_unmuted", identity=p.identity, track=pub.sid))
        room.on("active_speakers_changed", lambda speakers: self._ev(
            "active_speakers", identities=[s.identity for s in speakers]))
        room.on("connection_quality_changed", lambda p, q: self._ev("connection_quality", identity=p.identity))
        room.on("track_subscribed", self._on_track)
        room.on("data_received", self._on_data)
        room.on("disconnected", self._on_disconnected)

    def _ev(self, kind: str, **fields) -> None:  # type: ignore[no-untyped-def]
        self.events.append({"t": round(time.monotonic() - self.t0, 3), "event": kind, **fields})

    def _on_track(self, track: rtc.Track, pub: rtc.RemoteTrackPublication, p: rtc.RemoteParticipant) -> None:
        self._ev("track_subscribed", identity=p.identity, track=pub.sid)
        self.track_owner[pub.sid] = p.identity
        if track.kind == rtc.TrackKind.KIND_AUDIO:
            self.audio[pub.sid] = []
            self.tasks.append(asyncio.ensure_future(self._collect(pub.sid, track)))

    async def _collect(self, sid: str, track: rtc.Track) -> None:
        stream = rtc.AudioStream(track, sample_rate=48000, num_channels=1)
        try:
            async for ev in stream:
                data = np.frombuffer(ev.frame.data, dtype=np.int16).copy()
                self.audio[sid].append(data)
        except asyncio.CancelledError:
            pass
        finally:
            await stream.aclose()

    def _on_data(self, packet: rtc.DataPacket) -> None:
        try:
            payload = json.loads(packet.data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            payload = None
        self.data.append({"t": round(time.monotonic() - self.t0, 3), "topic": packet.topic,
                          "from": packet.participant.identity if packet.participant else None,
                          "kind": int(packet.kind), "json": payload})

    def _on_disconnected(self, reason) -> None:  # type: ignore[no-untyped-def]
        self.disconnect_reason = rtc.DisconnectReason.Name(reason) if isinstance(reason, int) else str(reason)
        self._ev("disconnected", reason=self.disconnect_reason)
        self.disconnected.set()

    def audio_report(self) -> dict:
        out = {}
        for sid, chunks in self.audio.items():
            samples = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int16)
            loud = loudest_second(samples)
            out[sid] = {"owner": self.track_owner.get(sid), "seconds": round(len(samples) / 48000, 2),
                        "rms": round(rms(loud), 4), "frequency": round(dominant_frequency(loud), 1) if len(loud) else 0}
        return out

    def report(self) -> dict:
        return {"events": self.events, "audio": self.audio_report(), "data": self.data,
                "disconnect_reason": self.disconnect_reason}

    async def stop(self) -> None:
        for t in self.tasks:
            t.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


async def publish_tone(room: rtc.Room, frequency: float, seconds: float, amplitude: float = 0.3) -> None:
    source = rtc.AudioSource(48000, 1)
    track = rtc.LocalAudioTrack.create_audio_track("tone", source)
    options = rtc.TrackPublishOptions(source=rtc.TrackSource.SOURCE_MICROPHONE)
    await room.local_participant.publish_track(track, options)
    samples_per_frame = 480
    t = 0
    start = time.monotonic()
    for i in range(int(seconds * 100)):
        n = np.arange(t, t + samples_per_frame)
        data = (np.sin(2 * np.pi * frequency * n / 48000) * amplitude * 32767).astype(np.int16)
        t += samples_per_frame
        frame = rtc.AudioFrame(data.tobytes(), 48000, 1, samples_per_frame)
        await source.capture_frame(frame)
        ahead = start + (i + 1) * 0.01 - time.monotonic()
        if ahead > 0:
            await asyncio.sleep(ahead)


async def scenario_part(srv: DevServer, t0: float) -> dict:
    token = srv.login("sdk@example.com", "sdk-password-123")["tokens"]["accessToken"]
    join = srv.request("POST", "/api/room/join", {"roomName": "sdkproof"}, token=token).json()
    room = rtc.Room()
    obs = Observer("scenario", room, t0)
    await sdk_connect(join, room=room)
    obs._ev("connected", identity=room.local_participant.identity)
    try:
        await asyncio.wait_for(obs.disconnected.wait(), 40)  # the scenario kicks us at the end
    except asyncio.TimeoutError:
        obs._ev("timeout_waiting_for_kick")
        await room.disconnect()
    await obs.stop()
    return obs.report()


async def forwarding_part(srv: DevServer, t0: float) -> dict:
    listener = rtc.Room()
    obs = Observer("listener", listener, t0)
    await sdk_guest_join(srv, "forwarding", "Listener", room=listener)
    speaker = rtc.Room()
    speaker_obs = Observer("speaker", speaker, t0)
    await sdk_guest_join(srv, "forwarding", "Speaker", room=speaker)
    await publish_tone(speaker, 660.0, 4.0)
    # Speaker also chats; the listener must get it through the server.
    await speaker.local_participant.publish_data(json.dumps({"type": "chat", "id": "1", "timestamp": 0,
                                                             "message": "from speaker", "senderName": "Speaker",
                                                             "senderIdentity": speaker.local_participant.identity}),
                                                 reliable=True, topic="chat")
    deadline = time.monotonic() + 10
    while not obs.data and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    await speaker.disconnect()
    deadline = time.monotonic() + 10
    while not any(e["event"] == "participant_disconnected" for e in obs.events) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    await listener.disconnect()
    await obs.stop()
    await speaker_obs.stop()
    report = obs.report()
    report["speaker_identity"] = speaker.local_participant.identity
    return report


async def main() -> int:
    report: dict = {}
    srv = DevServer("--scenario", SCENARIO, "--seed-user", "sdk@example.com:sdk-password-123:SDK Tester",
                    "--seed-room", "forwarding")
    t0 = time.monotonic()
    try:
        results = await asyncio.gather(scenario_part(srv, t0), forwarding_part(srv, t0), return_exceptions=True)
        for name, result in zip(("scenario", "forwarding"), results):
            if isinstance(result, BaseException):
                report[name] = {"error": "".join(traceback.format_exception(result))}
            else:
                report[name] = result
        report["state"] = srv.state()
    finally:
        srv.stop()
        report["devserver_stderr"] = srv.stderr_lines[-60:]
    print("SDK-PROBE-REPORT " + json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
