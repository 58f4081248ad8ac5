"""A small LiveKit v0 client on aiortc + aiohttp, for protocol-level tests on loopback.

It does what the Swift bot will do (dual PC, subscriber primary, answers every
offer, trickles, reads `_reliable`/`_lossy`), records every signal message, and
collects decoded audio per track SID. The official SDK tests (test_sdk.py) prove
the same server against libwebrtc inside a network namespace.
"""
from __future__ import annotations

import asyncio
import json
import subprocess
import time
from typing import TYPE_CHECKING, Any, Callable, Optional
from urllib.parse import urlencode

import aiohttp
import numpy as np
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError
from aiortc.sdp import candidate_from_sdp
from livekit.protocol import models as lkm
from livekit.protocol import rtc as lkr

if TYPE_CHECKING:
    from livekit import rtc

    from .helpers import DevServer


class LKClient:
    def __init__(self, livekit_host: str, token: str, *, protocol: int = 16, auto_subscribe: bool = True,
                 header_auth: bool = False, answer_offers: bool = True, auto_resume: bool = False) -> None:
        self.host = livekit_host
        self.token = token
        self.protocol = protocol
        self.auto_subscribe = auto_subscribe
        self.header_auth = header_auth
        self.answer_offers = answer_offers
        self.auto_resume = auto_resume
        self.resumes = 0
        self.session: Optional[aiohttp.ClientSession] = None
        self.ws: Optional[aiohttp.ClientWebSocketResponse] = None
        self.messages: list[lkr.SignalResponse] = []
        self.changed = asyncio.Event()
        self.sub_pc: Optional[RTCPeerConnection] = None
        self.pub_pc: Optional[RTCPeerConnection] = None
        self.pub_channel: Any = None
        self.audio: dict[str, list[np.ndarray]] = {}
        self.audio_meta: dict[str, dict] = {}
        self.video_tracks: list[str] = []
        self.video_frames: dict[str, int] = {}   # decoded frames per video track
        self.pts: dict[str, list[int]] = {}
        self.data: list[tuple[str, lkm.DataPacket]] = []
        self.sid = ""
        self.answers_sent = 0
        self._tasks: list[asyncio.Task] = []
        self._pending_candidates: list[dict] = []
        self.closed_by_server = asyncio.Event()

    # MARK: connection

    def url(self, reconnect: bool = False) -> str:
        base = ws_url(self.host).rstrip("/") + "/rtc"
        q = {"protocol": str(self.protocol), "auto_subscribe": "1" if self.auto_subscribe else "0",
             "adaptive_stream": "0", "sdk": "swift", "version": "0.1.0"}
        if not self.header_auth:
            q["access_token"] = self.token
        if reconnect:
            q.update({"reconnect": "1", "sid": self.sid, "reconnect_reason": "1"})
        return f"{base}?{urlencode(q)}"

    async def connect(self, timeout: float = 30.0, reconnect: bool = False) -> lkr.SignalResponse:
        if self.session is None:
            self.session = aiohttp.ClientSession()
        headers = {"Authorization": f"Bearer {self.token}"} if self.header_auth else {}
        self.ws = await asyncio.wait_for(self.session.ws_connect(self.url(reconnect), headers=headers,
                                                                 max_msg_size=8 * 1024 * 1024), timeout)
        first_index = len(self.messages)
        self._tasks.append(asyncio.ensure_future(self._read(self.ws)))
        await self.wait_for(lambda: len(self.messages) > first_index, timeout, "first signal message")
        first = self.messages[first_index]
        if first.WhichOneof("message") == "join":
            self.sid = first.join.participant.sid
        return first

    async def _read(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        # Messages are recorded as they are read and handled in order by another task, so
        # a slow answer or candidate (aiortc under load) never holds back what follows: a
        # test waiting for `leave` sees it when it arrives.
        inbox: asyncio.Queue = asyncio.Queue()
        handler = asyncio.ensure_future(self._handle_in_order(inbox))
        self._tasks.append(handler)
        try:
            async for msg in ws:
                if msg.type != aiohttp.WSMsgType.BINARY:
                    continue
                resp = lkr.SignalResponse.FromString(msg.data)
                self.messages.append(resp)
                self.changed.set()
                inbox.put_nowait(resp)
        finally:
            if ws is self.ws:
                self.closed_by_server.set()
                self.changed.set()
                if self.auto_resume and not self.of("leave"):
                    self._tasks.append(asyncio.ensure_future(self._resume_loop()))

    async def _handle_in_order(self, inbox: asyncio.Queue) -> None:
        while True:
            resp = await inbox.get()
            try:
                await self._handle(resp)
            except Exception as exc:  # noqa: BLE001 — recorded for the test to see
                self.messages.append(lkr.SignalResponse(refresh_token=f"CLIENT-ERROR {exc!r}"))
                self.changed.set()

    async def _resume_loop(self, deadline_s: float = 30.0) -> None:
        """What an SDK does after losing the signal connection: retry a resume."""
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            try:
                first = await self.connect(reconnect=True, timeout=5)
            except (aiohttp.ClientError, asyncio.TimeoutError, AssertionError):
                continue
            if first.WhichOneof("message") == "reconnect":
                self.resumes += 1
            return

    async def send(self, req: lkr.SignalRequest) -> None:
        assert self.ws is not None
        await self.ws.send_bytes(req.SerializeToString())

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                kinds = [m.WhichOneof("message") for m in self.messages]
                raise AssertionError(f"timed out waiting for {what}; messages so far: {kinds}")
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), min(remaining, 0.2))
            except asyncio.TimeoutError:
                pass

    def of(self, kind: str) -> list:
        return [getattr(m, kind) for m in self.messages if m.WhichOneof("message") == kind]

    # MARK: signal handling

    async def _handle(self, resp: lkr.SignalResponse) -> None:
        kind = resp.WhichOneof("message")
        if kind == "offer" and self.answer_offers:
            await self._answer(resp.offer)
        elif kind == "trickle":
            pc = self.sub_pc if resp.trickle.target == lkr.SignalTarget.SUBSCRIBER else self.pub_pc
            init = json.loads(resp.trickle.candidateInit)
            if pc is None or pc.remoteDescription is None:
                self._pending_candidates.append((resp.trickle.target, init))
            else:
                await _add(pc, init)
        elif kind == "answer" and self.pub_pc is not None:
            await self.pub_pc.setRemoteDescription(RTCSessionDescription(sdp=resp.answer.sdp, type="answer"))
            await self._apply_pending(lkr.SignalTarget.PUBLISHER, self.pub_pc)

    async def _apply_pending(self, target: int, pc: RTCPeerConnection) -> None:
        keep = []
        for t, init in self._pending_candidates:
            if t == target:
                await _add(pc, init)
            else:
                keep.append((t, init))
        self._pending_candidates = keep

    async def _answer(self, offer: lkr.SessionDescription) -> None:
        if self.sub_pc is None:
            self.sub_pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
            self.sub_pc.on("track", self._on_track)
            self.sub_pc.on("datachannel", self._on_datachannel)
        await self.sub_pc.setRemoteDescription(RTCSessionDescription(sdp=offer.sdp, type="offer"))
        answer = await self.sub_pc.createAnswer()
        await self.sub_pc.setLocalDescription(answer)
        await self._apply_pending(lkr.SignalTarget.SUBSCRIBER, self.sub_pc)
        await self.send(lkr.SignalRequest(answer=lkr.SessionDescription(
            type="answer", sdp=self.sub_pc.localDescription.sdp, id=offer.id)))
        self.answers_sent += 1

    def _on_track(self, track) -> None:  # type: ignore[no-untyped-def]
        sid = track.id  # the msid track id: TR_...
        if track.kind != "audio":  # a scripted camera: its frames counted, not kept
            self.video_tracks.append(sid)
            self.video_frames[sid] = 0
            self._tasks.append(asyncio.ensure_future(self._count_video(sid, track)))
            return
        self.audio.setdefault(sid, [])
        self.audio_meta[sid] = {"first": None, "frames": 0}
        self._tasks.append(asyncio.ensure_future(self._collect(sid, track)))

    async def _count_video(self, sid: str, track) -> None:  # type: ignore[no-untyped-def]
        try:
            while True:
                await track.recv()
                self.video_frames[sid] += 1
                self.changed.set()
        except (MediaStreamError, asyncio.CancelledError):
            pass

    async def _collect(self, sid: str, track) -> None:  # type: ignore[no-untyped-def]
        try:
            while True:
                frame = await track.recv()
                arr = frame.to_ndarray().reshape(-1, len(frame.layout.channels))
                self.audio[sid].append(arr[:, 0].copy())
                self.pts.setdefault(sid, []).append(frame.pts)
                meta = self.audio_meta[sid]
                meta["frames"] += 1
                if meta["first"] is None:
                    meta["first"] = time.monotonic()
                self.changed.set()
        except (MediaStreamError, asyncio.CancelledError):
            pass

    def _on_datachannel(self, channel) -> None:  # type: ignore[no-untyped-def]
        label = channel.label

        @channel.on("message")
        def _message(message: Any) -> None:
            if isinstance(message, (bytes, bytearray)):
                self.data.append((label, lkm.DataPacket.FromString(bytes(message))))
                self.changed.set()

    def samples(self, track_sid: str) -> np.ndarray:
        chunks = self.audio.get(track_sid, [])
        return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int16)

    # MARK: publishing

    async def publish(self, track, name: str = "mic", cid: str = "local-mic-1") -> lkm.TrackInfo:  # type: ignore[no-untyped-def]
        await self.send(lkr.SignalRequest(add_track=lkr.AddTrackRequest(
            cid=cid, name=name, type=lkm.TrackType.AUDIO, source=lkm.TrackSource.MICROPHONE)))
        published = await self.wait_for(lambda: [p for p in self.of("track_published") if p.cid == cid], 10,
                                        "track_published")
        await self._ensure_pub_pc(track)
        return published[0].track

    async def _ensure_pub_pc(self, track=None) -> None:  # type: ignore[no-untyped-def]
        if self.pub_pc is None:
            self.pub_pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
            self.pub_channel = self.pub_pc.createDataChannel("_reliable", ordered=True)
        if track is not None:
            self.pub_pc.addTrack(track)
        offer = await self.pub_pc.createOffer()
        await self.pub_pc.setLocalDescription(offer)
        before = len(self.of("answer"))
        await self.send(lkr.SignalRequest(offer=lkr.SessionDescription(
            type="offer", sdp=self.pub_pc.localDescription.sdp, id=1)))
        await self.wait_for(lambda: len(self.of("answer")) > before, 15, "publisher answer")

    async def send_chat(self, text: str) -> None:
        if self.pub_pc is None:
            await self._ensure_pub_pc()
        await self.wait_for(lambda: self.pub_channel.readyState == "open", 15, "publisher _reliable open")
        payload = json.dumps({"type": "chat", "id": "m1", "timestamp": int(time.time() * 1000), "message": text,
                              "senderName": "Client", "senderIdentity": "", "attachments": []}).encode()
        packet = lkm.DataPacket(kind=lkm.DataPacket.RELIABLE, sequence=1,
                                user=lkm.UserPacket(payload=payload, topic="chat"))
        self.pub_channel.send(packet.SerializeToString())

    # MARK: teardown

    async def leave(self) -> None:
        if self.ws is not None and not self.ws.closed:
            await self.send(lkr.SignalRequest(leave=lkr.LeaveRequest(reason=lkm.DisconnectReason.CLIENT_INITIATED)))
        await self.close()

    async def close(self) -> None:
        for t in self._tasks:
            t.cancel()
        if self.ws is not None:
            await self.ws.close()
        for pc in (self.sub_pc, self.pub_pc):
            if pc is not None:
                await pc.close()
        if self.session is not None:
            await self.session.close()


async def _add(pc: RTCPeerConnection, init: dict) -> None:
    text = init.get("candidate") or ""
    if not text:
        return
    cand = candidate_from_sdp(text.split(":", 1)[1] if text.startswith("candidate:") else text)
    cand.sdpMid = init.get("sdpMid")
    cand.sdpMLineIndex = init.get("sdpMLineIndex")
    await pc.addIceCandidate(cand)


def dominant_frequency(samples: np.ndarray, rate: int = 48000) -> float:
    x = samples.astype(np.float64)
    x = x - x.mean()
    spectrum = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    freqs = np.fft.rfftfreq(len(x), 1.0 / rate)
    return float(freqs[int(np.argmax(spectrum))])


def rms(samples: np.ndarray) -> float:
    if samples.size == 0:
        return 0.0
    f = samples.astype(np.float64) / 32768.0
    return float(np.sqrt(np.mean(f * f)))


# MARK: - the official SDK

SDK_CONNECT_TIMEOUT = 30.0


def ws_url(livekit_host: str) -> str:
    """The signal URL of a join reply's `livekitHost` (http → ws, https → wss)."""
    return livekit_host.replace("http://", "ws://").replace("https://", "wss://")


async def sdk_connect(join: dict, *, auto_subscribe: bool = True, on: Optional[dict[str, Callable]] = None,
                      room: Optional["rtc.Room"] = None, timeout: float = SDK_CONNECT_TIMEOUT) -> "rtc.Room":
    """Connects the official LiveKit SDK with a Bedrud join reply (`livekitHost`, `token`),
    within `timeout` seconds, and returns its Room.

    `on` maps SDK event names to handlers; they, like whatever the caller did to a `room`
    it passes in, are in place before the connection starts, so no event of the join is
    missed. A connection that fails or times out is disconnected before the error goes up.
    The SDK needs a network namespace of its own (scripts/netns-run): its libwebrtc
    gathers no candidates on loopback.
    """
    from livekit import rtc  # here: loading the SDK's native library is for the probes only
    if room is None:
        room = rtc.Room()
    for event, handler in (on or {}).items():
        room.on(event, handler)
    try:
        await asyncio.wait_for(room.connect(ws_url(join["livekitHost"]), join["token"],
                                            rtc.RoomOptions(auto_subscribe=auto_subscribe)), timeout)
    except BaseException:
        try:
            await asyncio.wait_for(room.disconnect(), 5)
        except Exception:  # noqa: BLE001 — the connect's own error is the one to report
            pass
        raise
    return room


async def sdk_guest_join(srv: "DevServer", room_name: str, guest_name: str, **options: Any) -> "rtc.Room":
    """Joins `room_name` as the guest `guest_name` (Bedrud's `POST /api/room/guest-join`)
    with the official SDK; `options` as for `sdk_connect`."""
    reply = srv.request("POST", "/api/room/guest-join", {"roomName": room_name, "guestName": guest_name})
    if reply.status != 200:
        raise RuntimeError(f"guest-join {room_name!r} as {guest_name!r}: {reply}")
    return await sdk_connect(reply.json(), **options)


async def run_bot(bot: str, *args: str, env: dict, cwd: str, timeout: float) -> tuple[int, str, str]:
    """Runs the built bot with `args` beside the SDK's event loop and returns (exit code,
    stdout, stderr); a bot still running after `timeout` seconds is killed and the wait's
    TimeoutError goes up."""
    proc = await asyncio.create_subprocess_exec(bot, *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")
