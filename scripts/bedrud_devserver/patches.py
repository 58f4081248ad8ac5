"""The few places where aiortc/aioice must behave like LiveKit's pion stack.

Applied once per process by `apply(ice_hosts)`; every patch is small and named:
- Opus at PT 111 `opus/48000/2` with `minptime=10;useinbandfec=1` and NACK feedback,
  and no G.722 (LiveKit's room codecs are Opus, RED, PCMU, PCMA).
- aioice offers the configured host addresses (127.0.0.1 by default), which it
  otherwise leaves out, and never a STUN server.
- an RTP sender may carry its own CNAME (LiveKit uses `PA_x|TR_x`) and counts the
  RTCP receiver reports and NACKs it gets, for `/_dev/state`.
- the DTLS transport hands protected RTP to a fault shaper when one is attached
  (loss, reorder, duplication, jitter, blackhole), after SRTP, like a real network.
"""
from __future__ import annotations

from typing import Optional

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
    codecs.CODECS["audio"][:] = [opus, codecs.PCMU_CODEC, codecs.PCMA_CODEC]

    sender_cls = rtcrtpsender.RTCRtpSender
    original_send = sender_cls.send
    original_rtcp = sender_cls._handle_rtcp_packet

    async def send(self, parameters):  # type: ignore[no-untyped-def]
        cname = getattr(self, "_lk_cname", None)
        if cname:
            parameters.rtcp.cname = cname
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
