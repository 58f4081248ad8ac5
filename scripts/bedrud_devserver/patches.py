"""The few places where aiortc/aioice must behave like LiveKit's pion stack.

Applied once per process by `apply(ice_hosts)`; every patch is small and named:
- Opus at PT 111 `opus/48000/2` with `minptime=10;useinbandfec=1` and NACK feedback,
  RED at PT 63 `red/48000/2` with `111/111`, and no G.722 (LiveKit's room codecs are
  Opus, RED, PCMU, PCMA). Which of them a transceiver offers is set per transceiver.
- aioice offers the configured host addresses (127.0.0.1 by default), which it
  otherwise leaves out, and never a STUN server.
- an RTP sender may carry its own CNAME (LiveKit uses `PA_x|TR_x`) and counts the
  RTCP receiver reports and NACKs it gets, for `/_dev/state`.
- forwarding (forward.py): an RTP receiver hands every packet, as received, to the
  published track's forwarder (`_lk_tap`) and the publisher's sender reports to it
  (`_lk_sr_tap`); RED reaches aiortc's own decoder (the level meter) as its primary.
  A sender with `_lk_forward` runs no encoder: `_lk_send_forwarded` writes the
  forwarder's packets, NACKs are answered from its history, and its sender reports
  come from forward.sender_report_timestamps.
- the DTLS transport hands protected RTP to a fault shaper when one is attached
  (loss, reorder, duplication, jitter, blackhole), after SRTP, like a real network.
- ICE liveness is pion's, as LiveKit v1.10.1 configures it (`_patch_ice_liveness`):
  a connection fails when nothing at all has come from the peer for 15 s, not when
  six STUN consent checks in a row went unanswered within 0.5 s each (aioice's
  RFC 7675 rule, which a busy peer flooding the data channel can break).
"""
from __future__ import annotations

from typing import Optional

from .forward import OPUS_PT, RED_PT

_applied = False


def apply(ice_hosts: Optional[list[str]] = None) -> None:
    global _applied
    import aioice.ice
    hosts = list(ice_hosts or ["127.0.0.1"])
    aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: [
        h for h in hosts if (":" in h and use_ipv6) or (":" not in h and use_ipv4)
    ]
    if _applied:
        return
    _applied = True

    from aiortc import codecs, rtcrtpsender, rtcdtlstransport
    from aiortc.rtcrtpparameters import RTCRtcpFeedback, RTCRtpCodecParameters
    from aiortc.rtp import RTCP_RTPFB_NACK, RtcpRrPacket, RtcpRtpfbPacket, RtcpSrPacket

    opus = RTCRtpCodecParameters(
        mimeType="audio/opus", clockRate=48000, channels=2, payloadType=111,
        rtcpFeedback=[RTCRtcpFeedback(type="nack")],
        parameters={"minptime": 10, "useinbandfec": 1},
    )
    red = RTCRtpCodecParameters(mimeType="audio/red", clockRate=48000, channels=2, payloadType=RED_PT,
                                parameters={f"{OPUS_PT}/{OPUS_PT}": None})
    codecs.CODECS["audio"][:] = [opus, red, codecs.PCMU_CODEC, codecs.PCMA_CODEC]

    sender_cls = rtcrtpsender.RTCRtpSender
    original_send = sender_cls.send
    original_rtcp = sender_cls._handle_rtcp_packet

    async def send(self, parameters):  # type: ignore[no-untyped-def]
        cname = getattr(self, "_lk_cname", None)
        if cname:
            parameters.rtcp.cname = cname
        self._lk_parameters = parameters
        await original_send(self, parameters)

    async def handle_rtcp(self, packet):  # type: ignore[no-untyped-def]
        counters = getattr(self, "_lk_counters", None)
        if counters is not None:
            if isinstance(packet, (RtcpRrPacket, RtcpSrPacket)):
                if any(r.ssrc == self._ssrc for r in packet.reports):
                    counters["rtcp_receiver_reports"] += 1
            elif isinstance(packet, RtcpRtpfbPacket) and packet.fmt == RTCP_RTPFB_NACK:
                counters["nacks"] += 1
                counters["nacked_packets"] += len(packet.lost)
        await original_rtcp(self, packet)

    sender_cls.send = send
    sender_cls._handle_rtcp_packet = handle_rtcp
    _patch_forwarding(sender_cls)

    dtls_cls = rtcdtlstransport.RTCDtlsTransport
    original_send_rtp = dtls_cls._send_rtp

    async def send_rtp(self, data: bytes) -> None:
        shaper = getattr(self, "_lk_shaper", None)
        if shaper is None or rtcdtlstransport.is_rtcp(data):
            await original_send_rtp(self, data)
            return
        if self._state != rtcdtlstransport.State.CONNECTED:
            raise ConnectionError("Cannot send encrypted RTP, not connected")
        protected = self._tx_srtp.protect(data)
        shaper.submit(protected, self.transport._send)

    dtls_cls._send_rtp = send_rtp
    _patch_ice_liveness()


# LiveKit v1.10.1 pkg/rtc/transport.go:80-83 and :395 give pion 10 s to "disconnected",
# 5 s more to "failed", and a 2 s keepalive. pion/ice v4.2.2 (LiveKit's go.mod) judges
# the selected pair by the time since anything was last received from the remote
# candidate (agent.go:885-899); every packet counts, STUN or not (candidate_base.go:332,
# agent.go:1646-1652).
ICE_DISCONNECTED_TIMEOUT = 10.0
ICE_FAILED_TIMEOUT = 5.0
ICE_KEEPALIVE_INTERVAL = 2.0


def _patch_ice_liveness() -> None:
    import asyncio
    import time

    import aioice.ice
    from aioice import stun

    protocol_cls = aioice.ice.StunProtocol
    original_datagram_received = protocol_cls.datagram_received

    def datagram_received(self, data, addr):  # type: ignore[no-untyped-def]
        self.receiver._lk_last_received = time.monotonic()
        original_datagram_received(self, data, addr)

    async def query_consent(self) -> None:  # type: ignore[no-untyped-def]
        """Replaces aioice's consent task: pings while the peer is quiet, and closes
        the connection (as consent expiry did) once the peer has been silent for
        pion's disconnected + failed timeouts."""
        self._lk_last_received = max(getattr(self, "_lk_last_received", 0.0), time.monotonic())
        while True:
            await asyncio.sleep(ICE_KEEPALIVE_INTERVAL)
            silent = time.monotonic() - self._lk_last_received
            if silent > ICE_DISCONNECTED_TIMEOUT + ICE_FAILED_TIMEOUT:
                self._query_consent_task = None
                return await self.close()
            if silent < ICE_KEEPALIVE_INTERVAL:
                continue
            for pair in list(self._nominated.values()):
                request = self.build_request(pair, nominate=False)
                try:
                    await pair.protocol.request(request, pair.remote_addr,
                                                integrity_key=self.remote_password.encode("utf8"),
                                                retransmissions=0)
                except (stun.TransactionError, ConnectionError, OSError):
                    pass  # an unanswered keepalive is not a verdict: silence is

    protocol_cls.datagram_received = datagram_received
    aioice.ice.Connection.query_consent = query_consent


def _patch_forwarding(sender_cls) -> None:  # type: ignore[no-untyped-def]
    import asyncio
    import random
    import time

    from aiortc import rtcrtpreceiver
    from aiortc.rtp import (RTP_HISTORY_SIZE, RtcpByePacket, RtcpRrPacket, RtcpSdesPacket, RtcpSenderInfo,
                            RtcpSourceInfo, RtcpSrPacket, RtpPacket)

    from .forward import SourcePacket, red_primary, sender_report_timestamps

    original_run_rtp = sender_cls._run_rtp
    original_run_rtcp = sender_cls._run_rtcp

    async def run_rtp(self, codec):  # type: ignore[no-untyped-def]
        if not getattr(self, "_lk_forward", False):
            await original_run_rtp(self, codec)
            return
        # No encoder: packets come from the forwarder through _lk_send_forwarded.
        self._RTCRtpSender__rtp_started.set()
        try:
            await asyncio.Future()
        except asyncio.CancelledError:
            pass
        self._RTCRtpSender__rtp_exited.set()

    async def send_forwarded(self, sequence: int, timestamp: int, payload_type: int, payload: bytes,
                             marker: bool) -> None:
        packet = RtpPacket(payload_type=payload_type, sequence_number=sequence, timestamp=timestamp,
                           marker=1 if marker else 0, ssrc=self._ssrc, payload=payload)
        self._RTCRtpSender__rtp_history[sequence % RTP_HISTORY_SIZE] = packet
        data = packet.serialize(self._RTCRtpSender__rtp_header_extensions_map)
        try:
            await self.transport._send_rtp(data)
        except ConnectionError:
            return
        self._RTCRtpSender__packet_count += 1
        self._RTCRtpSender__octet_count += len(payload)

    async def run_rtcp(self):  # type: ignore[no-untyped-def]
        if not getattr(self, "_lk_forward", False):
            await original_run_rtcp(self)
            return
        self._RTCRtpSender__rtcp_started.set()
        try:
            while True:
                await asyncio.sleep(0.5 + random.random())
                down = getattr(self, "_lk_downtrack", None)
                stamps = None
                if down is not None:
                    stamps = sender_report_timestamps(down, getattr(self, "_lk_forwarder", None), time.monotonic())
                packets: list = []
                if stamps is not None:
                    packets.append(RtcpSrPacket(ssrc=self._ssrc, sender_info=RtcpSenderInfo(
                        ntp_timestamp=stamps[0], rtp_timestamp=stamps[1],
                        packet_count=self._RTCRtpSender__packet_count & 0xFFFFFFFF,
                        octet_count=self._RTCRtpSender__octet_count & 0xFFFFFFFF)))
                    self._RTCRtpSender__lsr = (stamps[0] >> 16) & 0xFFFFFFFF
                    self._RTCRtpSender__lsr_time = time.time()
                else:
                    packets.append(RtcpRrPacket(ssrc=self._ssrc))  # RFC 3550 §6.1: a compound starts with SR or RR
                cname = self._RTCRtpSender__cname
                if cname is not None:
                    packets.append(RtcpSdesPacket(chunks=[RtcpSourceInfo(ssrc=self._ssrc,
                                                                         items=[(1, cname.encode("utf8"))])]))
                await self._send_rtcp(packets)
        except asyncio.CancelledError:
            pass
        await self._send_rtcp([RtcpByePacket(sources=[self._ssrc])])
        self._RTCRtpSender__rtcp_exited.set()

    sender_cls._run_rtp = run_rtp
    sender_cls._run_rtcp = run_rtcp
    sender_cls._lk_send_forwarded = send_forwarded

    receiver_cls = rtcrtpreceiver.RTCRtpReceiver
    original_rtp = receiver_cls._handle_rtp_packet
    original_receiver_rtcp = receiver_cls._handle_rtcp_packet

    async def handle_rtp(self, packet, arrival_time_ms):  # type: ignore[no-untyped-def]
        codecs = self._RTCRtpReceiver__codecs
        codec = codecs.get(packet.payload_type)
        mime = codec.mimeType.lower() if codec is not None else ""
        tap = getattr(self, "_lk_tap", None)
        if tap is not None and self._enabled and mime in ("audio/opus", "audio/red"):
            await tap(SourcePacket(sequence=packet.sequence_number, timestamp=packet.timestamp,
                                   marker=bool(packet.marker), payload=bytes(packet.payload),
                                   red=mime == "audio/red"))
        if mime == "audio/red":
            # aiortc decodes Opus only: its decoder (the level meter) gets the primary.
            primary = red_primary(packet.payload)
            opus_pt = next((pt for pt, c in codecs.items() if c.mimeType.lower() == "audio/opus"), None)
            if primary is None or opus_pt is None:
                return
            packet.payload = primary
            packet.payload_type = opus_pt
        await original_rtp(self, packet, arrival_time_ms)

    async def handle_receiver_rtcp(self, packet):  # type: ignore[no-untyped-def]
        tap = getattr(self, "_lk_sr_tap", None)
        if tap is not None and isinstance(packet, RtcpSrPacket):
            tap(packet.sender_info.ntp_timestamp, packet.sender_info.rtp_timestamp)
        await original_receiver_rtcp(self, packet)

    receiver_cls._handle_rtp_packet = handle_rtp
    receiver_cls._handle_rtcp_packet = handle_receiver_rtcp
