#!/usr/bin/env python3
"""An aiortc peer that behaves like LiveKit's subscriber peer connection, for the
BedrudRTC interop tests.

It offers (ICE controlling, DTLS actpass) Opus at PT 111 with
``minptime=10;useinbandfec=1`` and ``a=rtcp-fb:111 nack``, one sendonly audio section
per track with ``a=msid`` / ``a=ssrc … msid:`` as ``PA_x|TR_x TR_x``, an optional RED
payload type the answer must decline, and the server-created data channels
``_reliable`` and ``_lossy``. Each track sends an Opus sine tone. It counts the RTP it
sent (first sends and retransmissions separately) and the RTCP receiver reports and
NACKs it received, and can drop and reorder its own RTP with a seeded generator.

Driven over stdin/stdout with one JSON object per line. Binds 127.0.0.1 only and uses
no STUN server, so no packet leaves the machine.

Commands (stdin) → replies (stdout):
  {"cmd":"offer","tracks":[{"participant":"PA_a","track":"TR_a","freq":440,"stereo":false}],
   "data":true,"red":true,"wrong_fingerprint":false}       → {"event":"offer","sdp":…}
  {"cmd":"add_track","tracks":[…]}                          → {"event":"offer","sdp":…}  (re-offer)
  {"cmd":"answer","sdp":…}                                  → {"event":"answer_applied"}
  {"cmd":"candidate","candidate":"candidate:…"|"" }         → (nothing; errors reported)
  {"cmd":"impair","loss":0.05,"reorder":0.05,"seed":7}      → {"event":"impaired"}
  {"cmd":"send_data","label":"_reliable","hex":"…","binary":true} → {"event":"data_sent","label":…}
  {"cmd":"stop_media"}                                      → {"event":"stats",…} once sending stopped
  {"cmd":"stats"}                                           → {"event":"stats",…}
  {"cmd":"close"}                                           → {"event":"closed"} and exit
Unsolicited: {"event":"ready"}, {"event":"state","connection":…,"ice":…},
  {"event":"channel_open","label":…}, {"event":"error","message":…}.
"""
import asyncio
import fractions
import json
import math
import random
import struct
import sys
import time

import aioice.ice
from av import AudioFrame

aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: ["127.0.0.1"]

import aiortc.codecs  # noqa: E402
from aiortc import (  # noqa: E402
    RTCConfiguration,
    RTCPeerConnection,
    RTCSessionDescription,
)
from aiortc.mediastreams import AudioStreamTrack, MediaStreamError  # noqa: E402
from aiortc.rtcdtlstransport import RTCDtlsTransport, RtpRouter  # noqa: E402
from aiortc.rtcrtpparameters import RTCRtcpFeedback, RTCRtpCodecParameters  # noqa: E402
from aiortc.rtp import RtcpRrPacket, RtcpRtpfbPacket, RtcpSrPacket, is_rtcp  # noqa: E402
from aiortc.sdp import candidate_from_sdp  # noqa: E402

# LiveKit's Opus: PT 111, minptime=10;useinbandfec=1, NACK feedback.
aiortc.codecs.CODECS["audio"][0] = RTCRtpCodecParameters(
    mimeType="audio/opus",
    clockRate=48000,
    channels=2,
    payloadType=111,
    rtcpFeedback=[RTCRtcpFeedback(type="nack")],
    parameters={"minptime": 10, "useinbandfec": 1},
)

RED_PT = 63


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


class Counters:
    def __init__(self):
        self.first_sends = {}  # ssrc -> packets sent on the wire the first time
        self.dropped = {}  # ssrc -> first sends dropped on purpose
        self.retransmissions = {}  # ssrc -> retransmitted packets sent
        self.seen = {}  # ssrc -> set of sequence numbers already sent or dropped
        self.rr_packets = 0
        self.rr_blocks = 0
        self.nack_packets = 0
        self.nack_seqs = 0
        self.sr_sent = 0
        self.loss = 0.0
        self.reorder = 0.0
        self.rng = random.Random(1)
        self.held = None
        self.media_stopped = False

    def as_event(self):
        def keyed(d):
            return {str(k): v for k, v in d.items()}

        return {
            "event": "stats",
            "sent": keyed(self.first_sends),
            "dropped": keyed(self.dropped),
            "retransmitted": keyed(self.retransmissions),
            "rr_packets": self.rr_packets,
            "rr_blocks": self.rr_blocks,
            "nack_packets": self.nack_packets,
            "nack_seqs": self.nack_seqs,
        }


COUNTERS = Counters()

# --- instrumentation: what we send, what RTCP we get ------------------------------------

_orig_send_rtp = RTCDtlsTransport._send_rtp


async def _counting_send_rtp(self, data):
    if is_rtcp(data):
        return await _orig_send_rtp(self, data)
    if COUNTERS.media_stopped:
        return
    ssrc = struct.unpack("!L", data[8:12])[0]
    seq = struct.unpack("!H", data[2:4])[0]
    seen = COUNTERS.seen.setdefault(ssrc, set())
    if seq in seen:
        COUNTERS.retransmissions[ssrc] = COUNTERS.retransmissions.get(ssrc, 0) + 1
        return await _orig_send_rtp(self, data)
    seen.add(seq)
    if COUNTERS.loss and COUNTERS.rng.random() < COUNTERS.loss:
        COUNTERS.dropped[ssrc] = COUNTERS.dropped.get(ssrc, 0) + 1
        return
    COUNTERS.first_sends[ssrc] = COUNTERS.first_sends.get(ssrc, 0) + 1
    if COUNTERS.held is None and COUNTERS.reorder and COUNTERS.rng.random() < COUNTERS.reorder:
        COUNTERS.held = (self, data)  # sent after the next packet
        return
    await _orig_send_rtp(self, data)
    if COUNTERS.held is not None:
        (transport, held), COUNTERS.held = COUNTERS.held, None
        await _orig_send_rtp(transport, held)


RTCDtlsTransport._send_rtp = _counting_send_rtp

_orig_route_rtcp = RtpRouter.route_rtcp


def _counting_route_rtcp(self, packet):
    if isinstance(packet, RtcpRrPacket):
        COUNTERS.rr_packets += 1
        COUNTERS.rr_blocks += len(packet.reports)
    elif isinstance(packet, RtcpRtpfbPacket) and packet.fmt == 1:
        COUNTERS.nack_packets += 1
        COUNTERS.nack_seqs += len(packet.lost)
    elif isinstance(packet, RtcpSrPacket):
        pass
    return _orig_route_rtcp(self, packet)


RtpRouter.route_rtcp = _counting_route_rtcp


class ToneTrack(AudioStreamTrack):
    """A 48 kHz sine tone in 20 ms frames, paced in real time."""

    def __init__(self, freq, stereo):
        super().__init__()
        self.freq = freq
        self.stereo = stereo
        self.phase = 0
        self._t0 = None
        self._pts = 0

    async def recv(self):
        if self.readyState != "live":
            raise MediaStreamError
        rate, samples = 48000, 960
        if self._t0 is None:
            self._t0 = time.time()
        else:
            self._pts += samples
            wait = self._t0 + self._pts / rate - time.time()
            if wait > 0:
                await asyncio.sleep(wait)
        values = []
        for i in range(samples):
            v = int(0.3 * 32767 * math.sin(2 * math.pi * self.freq * (self.phase + i) / rate))
            values.append(v)
            if self.stereo:
                values.append(v)
        self.phase += samples
        layout = "stereo" if self.stereo else "mono"
        frame = AudioFrame(format="s16", layout=layout, samples=samples)
        frame.planes[0].update(struct.pack("<%dh" % len(values), *values))
        frame.pts = self._pts
        frame.sample_rate = rate
        frame.time_base = fractions.Fraction(1, rate)
        return frame


class Peer:
    def __init__(self):
        self.pc = None
        self.channels = {}
        self.tracks = []  # (ToneTrack, transceiver, spec)
        self.red = False
        self.wrong_fingerprint = False
        self.stereo_mids = set()

    def ensure_pc(self, data):
        if self.pc is not None:
            return
        self.pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))

        @self.pc.on("connectionstatechange")
        async def on_state():
            emit({"event": "state", "connection": self.pc.connectionState, "ice": self.pc.iceConnectionState})

        if data:
            for label, kwargs in (("_reliable", {}), ("_lossy", {"ordered": False, "maxRetransmits": 0})):
                ch = self.pc.createDataChannel(label, **kwargs)
                self.channels[label] = ch

                def on_open(label=label):
                    emit({"event": "channel_open", "label": label})

                ch.on("open", on_open)

    def add_tracks(self, specs):
        for spec in specs:
            track = ToneTrack(spec.get("freq", 440), spec.get("stereo", False))
            tr = self.pc.addTransceiver(track, direction="sendonly")
            tr.sender._stream_id = f"{spec['participant']}|{spec['track']}"
            tr.sender._track_id = spec["track"]
            self.tracks.append((track, tr, spec))

    def munge(self, sdp):
        """LiveKit's shape on top of aiortc's offer: a=ssrc msid lines, RED, sprop-stereo, wrong fingerprint."""
        out = []
        sections = sdp.split("\r\nm=")
        for i, sec in enumerate(sections):
            if i > 0:
                sec = "m=" + sec
            lines = sec.split("\r\n")
            mid = next((ln[6:] for ln in lines if ln.startswith("a=mid:")), None)
            spec = None
            for _, tr, s in self.tracks:
                if tr.mid == mid:
                    spec = s
            new = []
            for ln in lines:
                if ln.startswith("m=audio") and self.red:
                    ln = ln + f" {RED_PT}"
                if ln.startswith("a=fingerprint:") and self.wrong_fingerprint:
                    algo, value = ln[len("a=fingerprint:"):].split(" ", 1)
                    first = int(value[0:2], 16) ^ 0xFF
                    ln = f"a=fingerprint:{algo} {first:02X}{value[2:]}"
                if ln.startswith("a=fmtp:111") and spec and spec.get("stereo"):
                    ln = ln + ";sprop-stereo=1"
                new.append(ln)
                if ln.startswith("a=rtpmap:111") and self.red:
                    new.append(f"a=rtpmap:{RED_PT} red/48000/2")
                    new.append(f"a=fmtp:{RED_PT} 111/111")
                if ln.startswith("a=ssrc:") and " cname:" in ln and spec:
                    ssrc = ln[len("a=ssrc:"):].split(" ")[0]
                    new.append(f"a=ssrc:{ssrc} msid:{spec['participant']}|{spec['track']} {spec['track']}")
            out.append("\r\n".join(new))
        return "\r\n".join(out)

    async def make_offer(self):
        offer = await self.pc.createOffer()
        await self.pc.setLocalDescription(offer)
        return self.munge(self.pc.localDescription.sdp)

    async def handle(self, msg):
        cmd = msg.get("cmd")
        if cmd == "offer":
            self.red = msg.get("red", False)
            self.wrong_fingerprint = msg.get("wrong_fingerprint", False)
            self.ensure_pc(msg.get("data", True))
            self.add_tracks(msg.get("tracks", []))
            emit({"event": "offer", "sdp": await self.make_offer()})
        elif cmd == "add_track":
            self.add_tracks(msg.get("tracks", []))
            emit({"event": "offer", "sdp": await self.make_offer()})
        elif cmd == "answer":
            await self.pc.setRemoteDescription(RTCSessionDescription(sdp=msg["sdp"], type="answer"))
            emit({"event": "answer_applied"})
        elif cmd == "candidate":
            text = msg.get("candidate", "")
            if not text:
                await self.pc.addIceCandidate(None)
            else:
                if text.startswith("candidate:"):
                    text = text[len("candidate:"):]
                cand = candidate_from_sdp(text)
                cand.sdpMid = msg.get("sdpMid", "0")
                cand.sdpMLineIndex = msg.get("sdpMLineIndex", 0)
                await self.pc.addIceCandidate(cand)
        elif cmd == "impair":
            COUNTERS.loss = float(msg.get("loss", 0))
            COUNTERS.reorder = float(msg.get("reorder", 0))
            COUNTERS.rng = random.Random(int(msg.get("seed", 1)))
            emit({"event": "impaired"})
        elif cmd == "send_data":
            label = msg["label"]
            ch = self.channels[label]
            deadline = time.time() + 15
            while ch.readyState != "open" and time.time() < deadline:
                await asyncio.sleep(0.02)
            payload = bytes.fromhex(msg.get("hex", ""))
            ch.send(payload if msg.get("binary", True) else payload.decode("utf-8"))
            emit({"event": "data_sent", "label": label, "state": ch.readyState})
        elif cmd == "stop_media":
            for track, _, _ in self.tracks:
                track.stop()
            await asyncio.sleep(0.3)  # let encoders drain and in-flight sends finish
            COUNTERS.media_stopped = True
            if COUNTERS.held is not None:
                (transport, held), COUNTERS.held = COUNTERS.held, None
                await _orig_send_rtp(transport, held)
            emit(COUNTERS.as_event())
        elif cmd == "stats":
            emit(COUNTERS.as_event())
        elif cmd == "close":
            if self.pc:
                await self.pc.close()
            emit({"event": "closed"})
            return False
        else:
            emit({"event": "error", "message": f"unknown command {cmd}"})
        return True


async def main():
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 22)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    peer = Peer()
    emit({"event": "ready"})
    while True:
        line = await reader.readline()
        if not line:
            break
        try:
            msg = json.loads(line)
            if not await peer.handle(msg):
                break
        except Exception as exc:  # report and keep serving: the test decides what is fatal
            emit({"event": "error", "message": f"{type(exc).__name__}: {exc}"})
    if peer.pc:
        await peer.pc.close()


if __name__ == "__main__":
    asyncio.run(main())
