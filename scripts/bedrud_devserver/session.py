"""One signalling connection and the participant behind it (LiveKit v0, dual PC,
subscriber primary), with aiortc as the SFU end of both peer connections.

Order of a fresh join: `join` → (JOINED, others hear `update`) → `refresh_token` →
subscriber `offer` with every existing track (fast start) and server-created
`_reliable`/`_lossy` → client `answer` → trickle both ways → ICE connected ⇒ ACTIVE.
Every later change of subscriptions is one more offer, never two at once.
"""
from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from aiohttp import WSMsgType, web
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError, MediaStreamTrack
from aiortc.sdp import candidate_from_sdp
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from livekit.protocol import models as lkm
from livekit.protocol import rtc as lkr

from . import jwt_hs256
from . import pion_rule
from .faults import FaultShaper
from .forward import DownTrack, VideoDownTrack
from .media import rms_level
from .sdp import AudioPublishPrefs, configure_publisher_answer, edit_description, publisher_red_mids
from .sfu import LKRoom, Participant, PublishedTrack

if TYPE_CHECKING:
    from .signalling import JoinParams, SignalService

log = logging.getLogger("devserver.session")

OUT_QUEUE_LIMIT = 4096
DATA_BACKLOG_LIMIT = 256
NEGOTIATION_DEBOUNCE = 0.03
ICE_FAILED_GRACE = 5.0


@dataclass
class Subscription:
    track: PublishedTrack
    transceiver: Any
    proxy: Optional[MediaStreamTrack]
    stream_id: str
    paused: bool = False
    counters: dict = field(default_factory=lambda: {"rtcp_receiver_reports": 0, "nacks": 0, "nacked_packets": 0})
    down: Optional[DownTrack] = None   # forwarding mode

    def dev_state(self) -> dict:
        sender = self.transceiver.sender
        out = {"track": self.track.sid, "publisher": self.track.owner.identity, "ssrc": sender._ssrc,
               "mid": self.transceiver.mid, "paused": self.paused,
               "direction": self.transceiver.currentDirection, "senderStarted": hasattr(sender, "_lk_parameters"),
               "packetsSent": getattr(sender, "_RTCRtpSender__packet_count", 0),
               "payloadBytesSent": getattr(sender, "_RTCRtpSender__octet_count", 0), **self.counters}
        if isinstance(self.down, VideoDownTrack):
            out.update({"codec": self.down.codec, "videoSent": self.down.sent_video})
        elif self.down is not None:
            out.update({"codec": self.down.codec, "redSent": self.down.sent_red, "opusSent": self.down.sent_opus})
        return out


class LevelMeter:
    """Reads decoded frames of a published client track; level decays to 0 when
    packets stop (DTX, mute)."""

    def __init__(self, track: MediaStreamTrack) -> None:
        self.track = track
        self.value = 0.0
        self.at = 0.0
        self.task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        try:
            while True:
                frame = await self.track.recv()
                arr = frame.to_ndarray()
                self.value = rms_level(arr)
                self.at = time.monotonic()
        except (MediaStreamError, asyncio.CancelledError):
            pass
        except Exception:  # noqa: BLE001 — a meter must never take anything down
            log.exception("level meter failed")

    def level(self) -> float:
        return self.value if time.monotonic() - self.at < 0.3 else 0.0

    def stop(self) -> None:
        self.task.cancel()
        self.track.stop()


class ClientParticipant(Participant):
    """A participant with a real client: owns its WebSocket, both PCs and its
    subscriptions. Owned by the asyncio loop."""

    def __init__(self, room: LKRoom, service: "SignalService", params: "JoinParams") -> None:
        super().__init__(room, params.identity, params.name, params.metadata, params.can_update_metadata,
                         params.can_publish)
        self.service = service
        self.config = service.config
        self.params = params
        self.can_publish_data = params.can_publish_data
        self.ws: Optional[web.WebSocketResponse] = None
        self.json_mode = False
        self.out: asyncio.Queue = asyncio.Queue(maxsize=OUT_QUEUE_LIMIT)
        self.sub_pc: Optional[RTCPeerConnection] = None
        self.pub_pc: Optional[RTCPeerConnection] = None
        self.sub_channels: dict[str, Any] = {}
        self.data_backlog: list[tuple[bytes, bool]] = []
        self.subscriptions: dict[str, Subscription] = {}
        # Tracks the client disabled (`track_setting`, `sync_state.track_sids_disabled`),
        # kept also before they are subscribed: LiveKit stores the setting and applies it
        # when the subscription starts (v1.10.1 pkg/rtc/subscriptionmanager.go:346-358,
        # 1378-1390). Bounded like the number of tracks a room can hold.
        self.disabled_tracks: set[str] = set()
        self.pending_tracks: dict[str, PublishedTrack] = {}
        self.meters: dict[str, LevelMeter] = {}
        self.publisher_red_mids: set[str] = set()
        self.offer_id = 0
        self.offer_outstanding = False
        self.renegotiate = False
        self.last_offer: Optional[lkr.SessionDescription] = None
        self.candidates_sent = False
        self.sub_remote_set = False
        self.pending_sub_candidates: list[dict] = []
        self.pending_pub_candidates: list[dict] = []
        self.negotiation_lock = asyncio.Lock()
        self.closed = False
        self.last_client_sequence = 0
        self.shaper = FaultShaper(room.faults, salt=hash(self.sid) & 0xFFFF)
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task] = set()
        self.stats = {"signal_in": 0, "signal_out": 0, "signal_dropped": 0, "bad_frames": 0, "offers_sent": 0,
                      "answers_received": 0, "publisher_offers": 0, "trickles_in": 0, "trickles_out": 0,
                      "data_sent": 0, "data_received": 0, "data_dropped": 0, "pings": 0, "resumes": 0,
                      "refresh_tokens_sent": 0, "sync_states": 0}
        self._writer = self._spawn(self._write_loop())

    # MARK: - plumbing

    def _spawn(self, coro) -> asyncio.Task:  # type: ignore[no-untyped-def]
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("%s: task failed: %r", self.identity, task.exception(), exc_info=task.exception())

    def _timer(self, name: str, delay: float, fn) -> None:  # type: ignore[no-untyped-def]
        self._cancel_timer(name)
        self._timers[name] = asyncio.get_running_loop().call_later(delay, fn)

    def _cancel_timer(self, name: str) -> None:
        handle = self._timers.pop(name, None)
        if handle is not None:
            handle.cancel()

    def send_signal(self, response: lkr.SignalResponse) -> None:
        if self.ws is None or self.ws.closed:
            self.stats["signal_dropped"] += 1
            return
        payload: Any = json_format.MessageToJson(response) if self.json_mode else response.SerializeToString()
        try:
            self.out.put_nowait(payload)
        except asyncio.QueueFull:
            log.warning("%s: signal queue full; closing the signal connection", self.identity)
            self._spawn(self.ws.close())

    async def _write_loop(self) -> None:
        while True:
            payload = await self.out.get()
            try:
                ws = self.ws
                if ws is None or ws.closed:
                    self.stats["signal_dropped"] += 1
                    continue
                if isinstance(payload, str):
                    await ws.send_str(payload)
                else:
                    await ws.send_bytes(payload)
                self.stats["signal_out"] += 1
            except (ConnectionError, RuntimeError) as exc:
                log.info("%s: signal write failed: %s", self.identity, exc)
            finally:
                self.out.task_done()

    async def _flush(self, timeout: float = 2.0) -> None:
        try:
            await asyncio.wait_for(self.out.join(), timeout)
        except asyncio.TimeoutError:
            pass

    # MARK: - join

    def join_response(self) -> lkr.JoinResponse:
        others = [p.info() for p in self.room.participants.values() if p is not self]
        server_info = lkm.ServerInfo(edition=lkm.ServerInfo.Standard, version=self.config.server_version,
                                     protocol=self.config.server_protocol, node_id=self.room.sfu.node_id)
        return lkr.JoinResponse(
            room=self.room.room_info(), participant=self.info(), other_participants=others,
            server_version=self.config.server_version, ice_servers=turn_servers(self.config, self.identity),
            subscriber_primary=True,
            ping_timeout=self.config.ping_timeout, ping_interval=self.config.ping_interval,
            server_info=server_info, fast_publish=self.can_publish,
            enabled_publish_codecs=[lkm.Codec(mime="audio/opus"), lkm.Codec(mime="audio/red")],
        )

    async def start(self, ws: web.WebSocketResponse) -> None:
        self.ws = ws
        self.sub_pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        self.sub_pc.on("connectionstatechange", self._on_sub_state)
        reliable = self.sub_pc.createDataChannel("_reliable", ordered=True)
        lossy = self.sub_pc.createDataChannel("_lossy", ordered=False, maxRetransmits=0)
        # LiveKit >= 1.11 opens a third one for data tracks, unordered without
        # retransmissions (v1.13.5 pkg/rtc/transportmanager.go:466-471, label from
        # transport.go:73), whether or not the client will ever use data tracks.
        data_track = self.sub_pc.createDataChannel("_data_track", ordered=False, maxRetransmits=0)
        for channel in (reliable, lossy, data_track):
            self.sub_channels[channel.label] = channel
            channel.on("open", self._flush_data_backlog)
            channel.on("message", self._on_subscriber_channel_message)
        self.state = lkm.ParticipantInfo.JOINED
        self.send_signal(lkr.SignalResponse(join=self.join_response()))
        self.room.add(self)
        self._send_refresh_token()
        if self.params.auto_subscribe:
            for other in list(self.room.participants.values()):
                if other is not self:
                    for track in other.tracks.values():
                        self._subscribe(track, negotiate=False)
        self.schedule_negotiation(0)
        self._timer("join", self.config.join_timeout, self._on_join_timeout)
        self._timer("refresh", self.config.lk_refresh_interval, self._on_refresh_timer)

    def _send_refresh_token(self) -> None:
        claims = dict(self.params.claims)
        now = int(time.time())
        remaining = int(claims.get("exp", now)) - now
        claims.update({"nbf": now, "exp": now + max(600, remaining), "iat": now})
        claims["metadata"] = self.metadata
        claims["name"] = self.name
        token = jwt_hs256.encode(claims, self.config.lk_api_secret)
        self.params.token = token
        self.stats["refresh_tokens_sent"] += 1
        self.send_signal(lkr.SignalResponse(refresh_token=token))

    def _on_refresh_timer(self) -> None:
        if not self.closed:
            self._send_refresh_token()
            self._timer("refresh", self.config.lk_refresh_interval, self._on_refresh_timer)

    def _on_join_timeout(self) -> None:
        if not self.closed and self.state != lkm.ParticipantInfo.ACTIVE:
            log.info("%s: not ACTIVE %.0fs after join: JOIN_FAILURE", self.identity, self.config.join_timeout)
            self._spawn(self.room.remove(self, lkm.DisconnectReason.JOIN_FAILURE))

    def _on_sub_state(self) -> None:
        pc = self.sub_pc
        if pc is None or self.closed:
            return
        state = pc.connectionState
        if state == "connected":
            self._cancel_timer("ice_failed")
            if self.state != lkm.ParticipantInfo.ACTIVE:
                self.state = lkm.ParticipantInfo.ACTIVE
                self._cancel_timer("join")
                self.touch()
                self.room.broadcast_update(self)
                log.info("%s: ACTIVE", self.identity)
        elif state == "failed":
            self._timer("ice_failed", ICE_FAILED_GRACE, self._on_ice_failed)

    def _on_ice_failed(self) -> None:
        if not self.closed:
            self._spawn(self.room.remove(self, lkm.DisconnectReason.CONNECTION_TIMEOUT))

    # MARK: - the read loop

    async def read_loop(self, ws: web.WebSocketResponse) -> None:
        try:
            async for msg in ws:
                if msg.type == WSMsgType.BINARY:
                    try:
                        req = lkr.SignalRequest.FromString(msg.data)
                    except (DecodeError, ValueError, RuntimeWarning):
                        self._bad_frame("undecodable protobuf")
                        break
                    self.json_mode = False
                elif msg.type == WSMsgType.TEXT:
                    try:
                        req = json_format.Parse(msg.data, lkr.SignalRequest(), ignore_unknown_fields=True)
                    except (json_format.ParseError, ValueError, TypeError):
                        self._bad_frame("unparsable JSON")
                        break
                    self.json_mode = True
                else:
                    break
                self.stats["signal_in"] += 1
                try:
                    await self.handle(req)
                except Exception:  # noqa: BLE001 — one bad request must not end the session
                    log.exception("%s: handling %s failed", self.identity, req.WhichOneof("message"))
                if self.closed:
                    break
        finally:
            if self.ws is ws:
                self.ws = None
                self._signal_lost()

    def _bad_frame(self, what: str) -> None:
        # LiveKit stops reading a signal connection that sends garbage (it closes the
        # WebSocket); the participant lives on as if its signal connection dropped.
        self.stats["bad_frames"] += 1
        self.room.sfu.counters["bad_frames"] += 1
        log.warning("%s: %s on the signal connection; closing it", self.identity, what)

    def _signal_lost(self) -> None:
        if self.closed:
            return
        if self.state != lkm.ParticipantInfo.ACTIVE:
            # Never connected media: the session goes at once.
            self._spawn(self.room.remove(self, lkm.DisconnectReason.SIGNAL_CLOSE))

    async def handle(self, req: lkr.SignalRequest) -> None:
        kind = req.WhichOneof("message")
        if kind == "offer":
            await self._on_publisher_offer(req.offer)
        elif kind == "answer":
            await self._on_answer(req.answer)
        elif kind == "trickle":
            await self._on_trickle(req.trickle)
        elif kind == "add_track":
            self._on_add_track(req.add_track)
        elif kind == "mute":
            self._on_mute(req.mute)
        elif kind == "subscription":
            self._on_subscription(req.subscription)
        elif kind == "track_setting":
            self._on_track_setting(req.track_setting)
        elif kind == "leave":
            await self.room.remove(self, lkm.DisconnectReason.CLIENT_INITIATED)
        elif kind == "ping":
            self.stats["pings"] += 1
            self.send_signal(lkr.SignalResponse(pong=int(time.time() * 1000)))
        elif kind == "ping_req":
            self.stats["pings"] += 1
            self.send_signal(lkr.SignalResponse(pong_resp=lkr.Pong(last_ping_timestamp=req.ping_req.timestamp,
                                                                   timestamp=int(time.time() * 1000))))
        elif kind == "update_metadata":
            self._on_update_metadata(req.update_metadata)
        elif kind == "sync_state":
            self.stats["sync_states"] += 1
            # LiveKit applies the disabled tracks before anything else of the sync
            # (v1.10.1 pkg/rtc/room.go:686-691).
            self._on_track_setting(lkr.UpdateTrackSettings(track_sids=req.sync_state.track_sids_disabled,
                                                           disabled=True))
        elif kind == "simulate":
            await self._on_simulate(req.simulate)
        # Everything else (subscription_permission, data tracks, ...) is accepted and ignored.

    # MARK: - subscriber PC

    def subscribed_to_participant(self, sid: str) -> bool:
        return any(s.track.owner.sid == sid for s in self.subscriptions.values())

    def track_added(self, track: PublishedTrack) -> None:
        if self.params.auto_subscribe:
            self._subscribe(track)

    def track_removed(self, track: PublishedTrack) -> None:
        self._unsubscribe(track.sid)

    def _subscribe(self, track: PublishedTrack, negotiate: bool = True) -> None:
        if self.closed or self.sub_pc is None or track.sid in self.subscriptions or not track.forwardable:
            return
        audio = track.kind == lkm.TrackType.AUDIO
        # Audio is forwarded packet by packet under `--media forward`, re-encoded per
        # subscriber under `--media reencode`; video (a scripted VP8 camera) is always
        # forwarded packet by packet.
        forward = not audio or self.config.media == "forward"
        proxy = None if forward else track.subscribe()
        transceiver = self.sub_pc.addTransceiver(proxy if proxy is not None else ("audio" if audio else "video"),
                                                 direction="sendonly")
        transceiver.setCodecPreferences(subscriber_codecs(red=forward and track.mime == "audio/red") if audio
                                        else video_codecs(track.mime))
        stream_id = f"{track.owner.sid}|{track.sid}"
        sub = Subscription(track=track, transceiver=transceiver, proxy=proxy, stream_id=stream_id)
        sender = transceiver.sender
        sender._stream_id = stream_id
        sender._track_id = track.sid
        sender._lk_cname = stream_id
        sender._lk_counters = sub.counters
        if forward:
            sender._lk_forward = True
            sub.down = DownTrack(sender, sub.counters) if audio else VideoDownTrack(sender, sub.counters)
            sub.paused = sub.down.paused = track.sid in self.disabled_tracks
            track.forwarder.add(sub.down)
        self.subscriptions[track.sid] = sub
        if negotiate:
            self.schedule_negotiation()

    def _unsubscribe(self, track_sid: str) -> None:
        sub = self.subscriptions.pop(track_sid, None)
        if sub is None:
            return
        sub.transceiver.sender.replaceTrack(None)
        sub.transceiver.direction = "inactive"
        if sub.down is not None:
            sub.track.forwarder.remove(sub.transceiver.sender)
        if sub.proxy is not None:
            sub.proxy.stop()
        self.schedule_negotiation()

    def schedule_negotiation(self, delay: float = NEGOTIATION_DEBOUNCE) -> None:
        if self.closed or "negotiate" in self._timers:
            return
        self._timers["negotiate"] = asyncio.get_running_loop().call_later(
            delay, lambda: (self._timers.pop("negotiate", None), self._spawn(self._negotiate())))

    async def _negotiate(self) -> None:
        async with self.negotiation_lock:
            pc = self.sub_pc
            # A closed PC cannot make an offer (InvalidStateError): nothing to negotiate.
            if self.closed or pc is None or pc.connectionState == "closed":
                return
            if self.offer_outstanding:
                self.renegotiate = True
                return
            self.renegotiate = False
            offer = await pc.createOffer()
            await pc.setLocalDescription(offer)
            if self.closed:
                return
            msids = {s.transceiver.sender._ssrc: (s.stream_id, s.track.sid) for s in self.subscriptions.values()}
            edited = edit_description(pc.localDescription.sdp, msids, bad_fingerprint=self.config.bad_fingerprint)
            self.offer_id += 1
            desc = lkr.SessionDescription(type="offer", sdp=edited.sdp, id=self.offer_id)
            for sub in self.subscriptions.values():
                if sub.transceiver.mid is not None:
                    desc.mid_to_track_id[sub.transceiver.mid] = sub.track.sid
            self.last_offer = desc
            self.offer_outstanding = True
            self.stats["offers_sent"] += 1
            self.send_signal(lkr.SignalResponse(offer=desc))
            if not self.candidates_sent:
                self.candidates_sent = True
                self._trickle_out(edited.candidates, edited.first_mid, lkr.SignalTarget.SUBSCRIBER)
            if self.state == lkm.ParticipantInfo.ACTIVE:
                self._timer("renegotiation", self.config.renegotiation_timeout, self._on_negotiation_timeout)

    def _trickle_out(self, candidates: list[str], mid: str, target: int) -> None:
        for i, cand in enumerate(candidates):
            init = json.dumps({"candidate": cand, "sdpMid": mid, "sdpMLineIndex": 0, "usernameFragment": None})
            self.stats["trickles_out"] += 1
            self.send_signal(lkr.SignalResponse(trickle=lkr.TrickleRequest(
                candidateInit=init, target=target, final=(i == len(candidates) - 1))))

    def flood_trickles(self, count: int, garbage: int) -> int:
        """`/_dev/rooms/ROOM/trickle-flood/ID`: `count` subscriber trickles at once, every
        `garbage`-th one not JSON (0: none), the rest host candidates on ports nobody
        listens on. Returns how many were queued."""
        for i in range(count):
            if garbage and i % garbage == 0:
                init = "not a candidate %d" % i
            else:
                init = json.dumps({"candidate": "candidate:%d 1 udp 2122260223 127.0.0.1 %d typ host" % (i, 20000 + i % 40000),
                                   "sdpMid": "0", "sdpMLineIndex": 0, "usernameFragment": None})
            self.stats["trickles_out"] += 1
            self.send_signal(lkr.SignalResponse(trickle=lkr.TrickleRequest(candidateInit=init, target=lkr.SignalTarget.SUBSCRIBER)))
        return count

    def _on_negotiation_timeout(self) -> None:
        if not self.closed and self.offer_outstanding:
            log.info("%s: re-offer unanswered: leave RECONNECT", self.identity)
            self._spawn(self.room.remove(self, lkm.DisconnectReason.STATE_MISMATCH, lkr.LeaveRequest.RECONNECT))

    async def _on_answer(self, answer: lkr.SessionDescription) -> None:
        pc = self.sub_pc
        if pc is None or not self.offer_outstanding or answer.type != "answer":
            log.info("%s: unexpected subscriber answer ignored", self.identity)
            return
        problems = pion_rule.violations(answer.sdp)
        if problems:
            # LiveKit's pion would refuse it (and LiveKit then forces a full reconnect).
            self.stats["answers_pion_refused"] = self.stats.get("answers_pion_refused", 0) + 1
            log.warning("%s: subscriber answer pion would refuse (%s): leave RECONNECT", self.identity, "; ".join(problems))
            await self.room.remove(self, lkm.DisconnectReason.STATE_MISMATCH, lkr.LeaveRequest.RECONNECT)
            return
        try:
            await pc.setRemoteDescription(RTCSessionDescription(sdp=answer.sdp, type="answer"))
        except Exception as exc:  # noqa: BLE001 — a bad answer is a negotiation failure
            log.warning("%s: subscriber answer rejected (%s): leave RECONNECT", self.identity, exc)
            await self.room.remove(self, lkm.DisconnectReason.STATE_MISMATCH, lkr.LeaveRequest.RECONNECT)
            return
        self.stats["answers_received"] += 1
        self.offer_outstanding = False
        _rebundle(pc)
        self._start_inactive_senders(pc)
        for transceiver in pc.getTransceivers():
            transport = transceiver.sender.transport
            if transport is not None:
                transport._lk_shaper = self.shaper  # faults act on what leaves towards this client
        self._cancel_timer("renegotiation")
        if not self.sub_remote_set:
            self.sub_remote_set = True
            for cand in self.pending_sub_candidates:
                await self._add_candidate(pc, cand)
            self.pending_sub_candidates.clear()
        if self.renegotiate:
            self.schedule_negotiation()

    def _start_inactive_senders(self, pc: RTCPeerConnection) -> None:
        """pion (LiveKit's WebRTC stack) starts the sender of every transceiver it put in
        an offer once the answer is set, whatever direction the answer gives it
        (pion/webrtc v3.1.56 peerconnection.go:2299-2301 marks them negotiated when the
        offer is made, :1440-1451 starts them): a subscriber that answers a video section
        `inactive` still receives its packets until it disables the track. aiortc starts
        only senders the answer lets send; forwarded ones are started here as pion would."""
        for sub in self.subscriptions.values():
            transceiver = sub.transceiver
            sender = transceiver.sender
            if sub.down is None or transceiver.currentDirection != "inactive" or hasattr(sender, "_lk_parameters") \
                    or not transceiver._codecs:
                continue
            self._spawn(sender.send(pc._RTCPeerConnection__localRtp(transceiver)))  # type: ignore[attr-defined]

    async def _on_trickle(self, trickle: lkr.TrickleRequest) -> None:
        self.stats["trickles_in"] += 1
        try:
            init = json.loads(trickle.candidateInit)
        except ValueError:
            return
        if not isinstance(init, dict):
            return
        if trickle.target == lkr.SignalTarget.SUBSCRIBER:
            if self.sub_pc is None:
                return
            if not self.sub_remote_set:
                if len(self.pending_sub_candidates) < 64:
                    self.pending_sub_candidates.append(init)
                return
            await self._add_candidate(self.sub_pc, init)
        else:
            if self.pub_pc is None or self.pub_pc.remoteDescription is None:
                if len(self.pending_pub_candidates) < 64:
                    self.pending_pub_candidates.append(init)
                return
            await self._add_candidate(self.pub_pc, init)

    @staticmethod
    async def _add_candidate(pc: RTCPeerConnection, init: dict) -> None:
        text = init.get("candidate")
        if not isinstance(text, str) or not text.strip():
            return  # end of candidates
        if text.startswith("candidate:"):
            text = text[len("candidate:"):]
        try:
            cand = candidate_from_sdp(text)
            mid = init.get("sdpMid")
            cand.sdpMid = mid if isinstance(mid, str) else None
            index = init.get("sdpMLineIndex")
            cand.sdpMLineIndex = index if isinstance(index, int) else 0
            if cand.protocol.lower() != "udp":
                return  # aioice is UDP only; LiveKit would also take ICE/TCP
            if cand.ip.endswith(".local"):
                return  # mDNS: resolving it would send multicast off this host
            await pc.addIceCandidate(cand)
        except Exception as exc:  # noqa: BLE001 — unknown candidate forms are discarded, like LiveKit
            log.debug("candidate %r discarded: %s", text, exc)

    def _on_subscriber_channel_message(self, message: Any) -> None:
        # The real server has no data handler on the subscriber PC: dropped.
        self.stats["data_dropped"] += 1

    def deliver_data(self, packet: bytes, reliable: bool) -> None:
        channel = self.sub_channels.get("_reliable" if reliable else "_lossy")
        if channel is None or self.closed:
            return
        if channel.readyState != "open":
            if len(self.data_backlog) < DATA_BACKLOG_LIMIT:
                self.data_backlog.append((packet, reliable))
            else:
                self.stats["data_dropped"] += 1
            return
        if self.shaper.blackhole_until > time.monotonic():
            self.stats["data_dropped"] += 1
            return
        channel.send(packet)
        self.stats["data_sent"] += 1

    def send_data_track(self, message: bytes) -> bool:
        """One message on the `_data_track` channel (`/_dev/`): false when it is not open."""
        channel = self.sub_channels.get("_data_track")
        if channel is None or channel.readyState != "open" or self.closed:
            return False
        channel.send(message)
        self.stats["data_track_sent"] = self.stats.get("data_track_sent", 0) + 1
        return True

    def _flush_data_backlog(self) -> None:
        backlog, self.data_backlog = self.data_backlog, []
        for packet, reliable in backlog:
            self.deliver_data(packet, reliable)

    def _on_track_setting(self, setting: lkr.UpdateTrackSettings) -> None:
        for sid in setting.track_sids:
            if setting.disabled and len(self.disabled_tracks) < 4096:
                self.disabled_tracks.add(sid)
            elif not setting.disabled:
                self.disabled_tracks.discard(sid)
            sub = self.subscriptions.get(sid)
            if sub is None or sub.paused == setting.disabled:
                continue
            sub.paused = setting.disabled
            if sub.down is not None:
                sub.down.paused = setting.disabled  # the forwarder drops, then resyncs
                continue
            sender = sub.transceiver.sender
            if setting.disabled:
                sender.replaceTrack(None)
                if sub.proxy is not None:
                    sub.proxy.stop()
                sub.proxy = None
            else:
                sub.proxy = sub.track.subscribe()
                sender.replaceTrack(sub.proxy)
            sender._track_id = sub.track.sid

    def _on_subscription(self, update: lkr.UpdateSubscription) -> None:
        sids = list(update.track_sids) + [s for pt in update.participant_tracks for s in pt.track_sids]
        for sid in sids:
            track = next((t for p in self.room.participants.values() if p is not self
                          for t in p.tracks.values() if t.sid == sid), None)
            if update.subscribe and track is not None:
                self._subscribe(track)
            elif update.subscribe:
                self.send_signal(lkr.SignalResponse(subscription_response=lkr.SubscriptionResponse(
                    track_sid=sid, err=lkm.SubscriptionError.SE_TRACK_NOTFOUND)))
            else:
                self._unsubscribe(sid)

    # MARK: - publisher PC

    def _on_add_track(self, req: lkr.AddTrackRequest) -> None:
        if not self.can_publish:
            log.info("%s: add_track without canPublish ignored", self.identity)
            return
        if req.cid in self.pending_tracks or len(self.pending_tracks) + len(self.tracks) >= 32:
            return
        kind = req.type
        mime = "audio/opus" if kind == lkm.TrackType.AUDIO else "video/vp8"
        track = PublishedTrack(self, req.name, req.source, None, kind=kind, mime=mime, stereo=req.stereo)
        track.muted = req.muted
        track.disable_dtx, track.disable_red = req.disable_dtx, req.disable_red
        self.pending_tracks[req.cid] = track
        self.send_signal(lkr.SignalResponse(track_published=lkr.TrackPublishedResponse(cid=req.cid, track=track.info())))

    async def _on_publisher_offer(self, offer: lkr.SessionDescription) -> None:
        self.stats["publisher_offers"] += 1
        if self.pub_pc is None:
            self.pub_pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
            self.pub_pc.on("track", self._on_remote_track)
            self.pub_pc.on("datachannel", self._on_publisher_channel)
        pc = self.pub_pc
        # Before setRemoteDescription, which publishes the tracks it carries.
        prefs = {cid: AudioPublishPrefs(dtx=not t.disable_dtx, red=not t.disable_red, stereo=t.stereo)
                 for cid, t in self.pending_tracks.items() if t.kind == lkm.TrackType.AUDIO}
        if self.config.media == "forward":
            self.publisher_red_mids |= publisher_red_mids(offer.sdp, prefs)
        try:
            await pc.setRemoteDescription(RTCSessionDescription(sdp=offer.sdp, type="offer"))
            answer = await pc.createAnswer()
            await pc.setLocalDescription(answer)
        except Exception as exc:  # noqa: BLE001 — a publisher offer we cannot take is a negotiation failure
            log.warning("%s: publisher offer rejected (%s): leave RECONNECT", self.identity, exc)
            await self.room.remove(self, lkm.DisconnectReason.STATE_MISMATCH, lkr.LeaveRequest.RECONNECT)
            return
        answer_sdp = pc.localDescription.sdp
        if self.config.media == "forward":
            answer_sdp = configure_publisher_answer(answer_sdp, offer.sdp, prefs)
        edited = edit_description(answer_sdp, {}, downstream=False, bad_fingerprint=self.config.bad_fingerprint)
        self.send_signal(lkr.SignalResponse(answer=lkr.SessionDescription(type="answer", sdp=edited.sdp, id=offer.id)))
        self._trickle_out(edited.candidates, edited.first_mid, lkr.SignalTarget.PUBLISHER)
        pending, self.pending_pub_candidates = self.pending_pub_candidates, []
        for cand in pending:
            await self._add_candidate(pc, cand)

    def _on_remote_track(self, remote: MediaStreamTrack) -> None:
        track = self.pending_tracks.pop(remote.id, None)
        if track is None:
            cid = next((c for c, t in self.pending_tracks.items()
                        if (t.kind == lkm.TrackType.AUDIO) == (remote.kind == "audio")), None)
            track = self.pending_tracks.pop(cid) if cid is not None else None
        if track is None:
            log.info("%s: media track %s without add_track; drained", self.identity, remote.id)
            self._spawn(_drain(remote))
            return
        if remote.kind == "audio":
            track.source_track = remote
            transceiver = next((t for t in self.pub_pc.getTransceivers() if t.receiver.track is remote), None) \
                if self.pub_pc is not None else None
            if transceiver is not None and self.config.media == "forward":
                receiver = transceiver.receiver
                receiver._lk_tap = track.forwarder.on_packet
                receiver._lk_sr_tap = track.forwarder.on_sender_report
                # The publisher sends the first codec of our answer: RED where we put it first.
                if transceiver.mid in self.publisher_red_mids:
                    track.mime = "audio/red"
            meter = LevelMeter(track.subscribe())
            self.meters[track.sid] = meter
            track.level_fn = meter.level
        else:
            self._spawn(_drain(remote))  # video is announced but not forwarded

        @remote.on("ended")
        def _ended() -> None:
            if not self.closed and track.sid in self.tracks:
                meter = self.meters.pop(track.sid, None)
                if meter:
                    meter.stop()
                self.room.unpublish(self, track.sid)

        self.room.publish(self, track)

    def _on_publisher_channel(self, channel: Any) -> None:
        label = channel.label

        @channel.on("message")
        def _message(message: Any) -> None:
            self._on_client_data(label, message)

    def _on_client_data(self, label: str, message: Any) -> None:
        # What arrives after the participant left (its channels close a moment later) is
        # dropped, as LiveKit does (v1.10.1 pkg/rtc/participant.go:2304, IsDisconnected):
        # the others never get data from someone they were told is gone.
        if self.state == lkm.ParticipantInfo.DISCONNECTED:
            return
        self.stats["data_received"] += 1
        if label not in ("_reliable", "_lossy") or not isinstance(message, (bytes, bytearray)):
            return  # data tracks and unlabeled channels are not forwarded here
        try:
            packet = lkm.DataPacket.FromString(bytes(message))
        except (DecodeError, ValueError):
            self.stats["bad_frames"] += 1
            return
        if not self.can_publish_data or packet.WhichOneof("value") in (None, "metrics", "transcription"):
            return
        reliable = label == "_reliable"
        destinations = list(packet.destination_identities) or (
            list(packet.user.destination_identities) if packet.HasField("user") else [])
        # The sender's identity and sid, whatever the client wrote (v1.10.1
        # pkg/rtc/participant.go:2316, 2391-2392, 2504).
        packet.participant_identity = self.identity
        packet.participant_sid = self.sid
        if packet.HasField("user"):
            packet.user.participant_sid = self.sid
            packet.user.participant_identity = self.identity
        if reliable and packet.sequence:
            self.last_client_sequence = packet.sequence
        self.room.send_data(packet, reliable, self, destinations)

    def _on_mute(self, req: lkr.MuteTrackRequest) -> None:
        track = self.tracks.get(req.sid) or next((t for t in self.pending_tracks.values() if t.sid == req.sid), None)
        if track is None:
            return
        if track.sid in self.tracks:
            self.room.set_muted(self, track, req.muted)
        else:
            track.muted = req.muted

    def server_muted(self, track: PublishedTrack) -> None:
        self.send_signal(lkr.SignalResponse(mute=lkr.MuteTrackRequest(sid=track.sid, muted=True)))

    def _on_update_metadata(self, req: lkr.UpdateParticipantMetadata) -> None:
        if not self.can_update_metadata:
            if req.request_id:
                self.send_signal(lkr.SignalResponse(request_response=lkr.RequestResponse(
                    request_id=req.request_id, reason=lkr.RequestResponse.NOT_ALLOWED,
                    message="does not have permission to update own metadata")))
            return
        if req.metadata:
            self.metadata = req.metadata
        if req.name:
            self.name = req.name
        for key, value in req.attributes.items():
            if value:
                self.attributes[key] = value
            else:
                self.attributes.pop(key, None)
        self.touch()
        self.room.broadcast_update(self)
        if req.request_id:
            self.send_signal(lkr.SignalResponse(request_response=lkr.RequestResponse(
                request_id=req.request_id, reason=lkr.RequestResponse.OK)))

    async def _on_simulate(self, sim: lkr.SimulateScenario) -> None:
        which = sim.WhichOneof("scenario")
        if which == "server_leave":
            await self.room.remove(self, lkm.DisconnectReason.SERVER_SHUTDOWN)
        elif which in ("node_failure", "migration"):
            if self.ws is not None:
                await self.ws.close()

    # MARK: - resume, drop, leave

    def media_closed(self) -> bool:
        """Whether the subscriber PC is gone (aiortc closes it when ICE or DTLS fails):
        nothing a resume could continue."""
        return self.sub_pc is None or self.sub_pc.connectionState == "closed"

    async def resume(self, ws: web.WebSocketResponse) -> None:
        old = self.ws
        self.ws = ws
        if old is not None and not old.closed:
            await old.close()
        self.stats["resumes"] += 1
        server_info = lkm.ServerInfo(edition=lkm.ServerInfo.Standard, version=self.config.server_version,
                                     protocol=self.config.server_protocol, node_id=self.room.sfu.node_id)
        self.send_signal(lkr.SignalResponse(reconnect=lkr.ReconnectResponse(
            ice_servers=turn_servers(self.config, self.identity), server_info=server_info,
            last_message_seq=self.last_client_sequence)))
        self.send_signal(lkr.SignalResponse(update=lkr.ParticipantUpdate(
            participants=[p.info() for p in self.room.participants.values()])))
        self.send_signal(lkr.SignalResponse(room_update=lkr.RoomUpdate(room=self.room.room_info())))
        self._send_refresh_token()
        # LiveKit restarts ICE on the subscriber PC here; aiortc cannot, so the
        # client gets a fresh offer on the same ICE session (see docs/DEVSERVER.md).
        if self.offer_outstanding and self.last_offer is not None:
            self.send_signal(lkr.SignalResponse(offer=self.last_offer))
        else:
            self.schedule_negotiation(0)

    def drop_connection(self, seconds: float) -> None:
        self.shaper.blackhole(seconds)
        ws = self.ws
        if ws is not None:
            transport = ws._req.transport if ws._req is not None else None  # type: ignore[attr-defined]
            if transport is not None:
                transport.abort()

    async def shutdown(self, reason: int, action: int = lkr.LeaveRequest.DISCONNECT) -> None:
        if self.closed:
            return
        self.closed = True
        for name in list(self._timers):
            self._cancel_timer(name)
        if reason != lkm.DisconnectReason.CLIENT_INITIATED:
            self.send_signal(lkr.SignalResponse(leave=lkr.LeaveRequest(
                can_reconnect=action != lkr.LeaveRequest.DISCONNECT, reason=reason, action=action)))
        await self._flush()
        ws = self.ws
        self.ws = None
        if ws is not None and not ws.closed:
            try:
                await asyncio.wait_for(ws.close(), 2.0)
            except (asyncio.TimeoutError, ConnectionError, RuntimeError):
                pass
        for meter in self.meters.values():
            meter.stop()
        for sub in self.subscriptions.values():
            if sub.proxy is not None:
                sub.proxy.stop()
        self._spawn(self._close_pcs())
        self._writer.cancel()

    async def _close_pcs(self) -> None:
        for pc in (self.sub_pc, self.pub_pc):
            if pc is not None:
                try:
                    await asyncio.wait_for(pc.close(), 5.0)
                except Exception:  # noqa: BLE001
                    pass

    def dev_state(self) -> dict:
        out = super().dev_state()
        out.update({
            "client": True, "protocol": self.params.protocol, "sdk": self.params.sdk,
            "signalConnected": self.ws is not None and not self.ws.closed,
            "subscriberState": self.sub_pc.connectionState if self.sub_pc else None,
            "publisherState": self.pub_pc.connectionState if self.pub_pc else None,
            "offerId": self.offer_id, "offerOutstanding": self.offer_outstanding,
            "stats": dict(self.stats), "faults": self.shaper.stats.to_json(),
            "subscriptions": [s.dev_state() for s in self.subscriptions.values()],
        })
        return out


def turn_servers(config, identity: str, now: Optional[float] = None) -> list:  # type: ignore[no-untyped-def]
    """`ice_servers` for a JoinResponse or ReconnectResponse: the configured TURN URLs
    with credentials that expire `turn_ttl` from now (TURN REST API, coturn's
    use-auth-secret). LiveKit >= 1.12 hands out such credentials and checks their expiry
    on new allocations only (v1.13.5 pkg/service/turn.go:270-279); every response has a
    fresh pair, so a client that resumes can allocate again."""
    if not config.turn_urls:
        return []
    import base64
    import hashlib
    import hmac
    expiry = int((time.time() if now is None else now) + config.turn_ttl)
    username = f"{expiry}:{identity}"
    password = base64.b64encode(hmac.new(config.turn_secret.encode(), username.encode(), hashlib.sha1).digest()).decode()
    return [lkr.ICEServer(urls=list(config.turn_urls), username=username, credential=password)]


def subscriber_codecs(red: bool) -> list:
    """A subscriber transceiver's offered codecs, as LiveKit orders them: RED first
    (`red/48000/2`, `111/111`) for a track its publisher sends as RED, else Opus
    first and no RED; then PCMU and PCMA."""
    from aiortc import RTCRtpSender
    caps = RTCRtpSender.getCapabilities("audio").codecs
    by_mime = {c.mimeType.lower(): c for c in caps}
    order = (["audio/red"] if red else []) + ["audio/opus", "audio/pcmu", "audio/pcma"]
    return [by_mime[m] for m in order if m in by_mime]


def video_codecs(mime: str) -> list:
    """A video subscriber transceiver's offered codecs: the track's own codec and its
    RTX, as LiveKit offers a subscriber the codec its publisher sends."""
    from aiortc import RTCRtpSender
    caps = RTCRtpSender.getCapabilities("video").codecs
    return [c for c in caps if c.mimeType.lower() in (mime.lower(), "video/rtx")]


def _rebundle(pc: RTCPeerConnection) -> None:
    """Puts every media section on the BUNDLE transport of the answer, as pion has one
    transport for everything. aiortc's default policy ("balanced") creates the 2nd, 3rd…
    video section of one offer on the first video section's own transport, marked bundled,
    and leaves them there when the answer moves that first one onto mid 0's transport:
    their packets would never leave."""
    remote = pc.remoteDescription
    group = next((g for g in (remote.sdp.split("\r\n") if remote else []) if g.startswith("a=group:BUNDLE ")), None)
    if group is None:
        return
    first = group.split()[1]
    transceivers = pc.getTransceivers()
    primary = next((t.receiver.transport for t in transceivers if t.mid == first), None)
    sctp = pc.sctp
    if primary is None and sctp is not None and sctp.mid == first:
        primary = sctp.transport
    if primary is None:
        return
    for t in transceivers:
        if t.mid is not None and t.sender.transport is not primary:
            t.receiver.setTransport(primary)
            t.sender.setTransport(primary)


async def _drain(track: MediaStreamTrack) -> None:
    try:
        while True:
            await track.recv()
    except (MediaStreamError, asyncio.CancelledError):
        pass


async def run_session(service: "SignalService", request: web.Request, params: "JoinParams") -> web.WebSocketResponse:
    sfu = service.sfu
    room = sfu.room(params.room)
    ws = web.WebSocketResponse(heartbeat=10, max_msg_size=2 * 1024 * 1024)
    await ws.prepare(request)
    sfu.counters["signal_connections"] += 1
    if room is None:  # deleted between the check and here
        await _leave_and_close(ws, lkm.DisconnectReason.ROOM_DELETED, lkr.LeaveRequest.DISCONNECT)
        return ws
    existing = room.participants.get(params.identity)
    if params.reconnect:
        if isinstance(existing, ClientParticipant) and not existing.closed and existing.media_closed():
            # LiveKit v1.10.1 pkg/service/roommanager.go:313-343 ("cannot restart a closed
            # participant"): a session whose media is gone cannot be resumed; the client
            # is told at once (leave STATE_MISMATCH, RECONNECT) and rejoins in full. Here
            # aiortc closed the subscriber PC during the outage; the ghost goes first.
            log.info("%s: resume of a closed peer connection: leave STATE_MISMATCH, RECONNECT", existing.identity)
            await room.remove(existing, lkm.DisconnectReason.STATE_MISMATCH, lkr.LeaveRequest.RECONNECT)
            await _leave_and_close(ws, lkm.DisconnectReason.STATE_MISMATCH, lkr.LeaveRequest.RECONNECT)
        elif isinstance(existing, ClientParticipant) and not existing.closed:
            existing.params.token = params.token
            await existing.resume(ws)
            await existing.read_loop(ws)
        else:
            await _leave_and_close(ws, lkm.DisconnectReason.STATE_MISMATCH, lkr.LeaveRequest.RECONNECT)
        return ws
    if existing is not None:
        await room.remove(existing, lkm.DisconnectReason.DUPLICATE_IDENTITY)
    if room.max_participants and len(room.participants) >= room.max_participants:
        await _leave_and_close(ws, lkm.DisconnectReason.JOIN_FAILURE, lkr.LeaveRequest.DISCONNECT)
        return ws
    participant = ClientParticipant(room, service, params)
    await participant.start(ws)
    await participant.read_loop(ws)
    return ws


async def _leave_and_close(ws: web.WebSocketResponse, reason: int, action: int) -> None:
    leave = lkr.SignalResponse(leave=lkr.LeaveRequest(can_reconnect=action != lkr.LeaveRequest.DISCONNECT,
                                                      reason=reason, action=action))
    try:
        await ws.send_bytes(leave.SerializeToString())
        await asyncio.wait_for(ws.close(), 2.0)
    except (ConnectionError, RuntimeError, asyncio.TimeoutError):
        pass
