"""Packet forwarding, the way LiveKit's SFU does it (its `Forwarder` and `RTPMunger`).

A publisher's RTP packets reach every subscriber with their payload untouched;
only the header is rewritten, per subscriber (one `DownTrack` each):
- the subscriber's own SSRC (the one announced in its offer);
- sequence numbers offset so they stay contiguous when the server drops packets
  (publisher muted, subscriber paused): the receiver sees no loss that did not
  happen on the wire;
- timestamps offset, never re-stamped: DTX pauses and the publisher's own jumps
  come through as they were sent; after a run the server dropped, the offset is
  moved so the timestamp advances by the wall time that passed (LiveKit's resync);
- RTCP sender reports written per subscriber with its SSRC and the offset
  timestamps, passed through from the publisher's last report (its own NTP clock),
  and none before the publisher sent one (`sender_report_timestamps`).

RED (RFC 2198, `audio/red`): a subscriber that negotiated RED gets the RED packet
as it came; one that did not gets the primary block as plain Opus, with the
packet's own sequence number and the primary's timestamp (LiveKit's
RedPrimaryReceiver). A scripted participant's encoder feeds the same path.

Everything here runs on the asyncio loop; the only I/O is `Forwarder.on_packet` handing
each decision to the subscriber's sender (`_lk_send_forwarded`, patches.py).
"""
from __future__ import annotations

import random
import time
from collections import deque
from dataclasses import dataclass
from typing import Optional


AUDIO_CLOCK = 48000
VIDEO_CLOCK = 90000
OPUS_PT = 111
RED_PT = 63
PACKET_LOG_LIMIT = 6000   # per track: two minutes of 20 ms packets, for /_dev/ packet logs


# MARK: - RED (RFC 2198 §3)

def red_blocks(payload: bytes) -> Optional[list[tuple[int, int, bytes]]]:
    """Splits a RED payload into (payload type, timestamp offset, data) blocks, oldest
    first; the last one is the primary (its offset is 0). None when malformed.

        0                   1                   2                   3
        0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
       +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
       |F|   block PT  |  timestamp offset         |   block length    |
       +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
       last header: |0|   block PT  |
    """
    headers: list[tuple[int, int, int]] = []
    i = 0
    while True:
        if i >= len(payload):
            return None
        first = payload[i]
        if first & 0x80 == 0:
            headers.append((first & 0x7F, 0, -1))
            i += 1
            break
        if i + 4 > len(payload):
            return None
        offset = (payload[i + 1] << 6) | (payload[i + 2] >> 2)
        length = ((payload[i + 2] & 0x03) << 8) | payload[i + 3]
        headers.append((first & 0x7F, offset, length))
        i += 4
    blocks: list[tuple[int, int, bytes]] = []
    for pt, offset, length in headers:
        if length < 0:
            length = len(payload) - i
        if length < 0 or i + length > len(payload):
            return None
        blocks.append((pt, offset, payload[i:i + length]))
        i += length
    return blocks


def red_primary(payload: bytes) -> Optional[bytes]:
    blocks = red_blocks(payload)
    return blocks[-1][2] if blocks else None


def red_encode(primary: bytes, redundant: list[tuple[int, bytes]], pt: int = OPUS_PT) -> bytes:
    """A RED payload: `redundant` is (timestamp offset, data), oldest first."""
    out = bytearray()
    for offset, data in redundant:
        out += bytes([0x80 | pt, (offset >> 6) & 0xFF, ((offset & 0x3F) << 2) | (len(data) >> 8), len(data) & 0xFF])
    out.append(pt)
    for _, data in redundant:
        out += data
    out += primary
    return bytes(out)


# MARK: - the source side

@dataclass
class SourcePacket:
    """One packet as the publisher sent it (or a scripted encoder made it)."""
    sequence: int           # 16-bit, as on the wire
    timestamp: int          # 32-bit, as on the wire
    marker: bool
    payload: bytes          # exactly as received
    red: bool = False       # payload is RFC 2198 RED around Opus
    keyframe: bool = False  # video: the first packet of a key frame (a down track may start here)

    def opus_payload(self) -> Optional[bytes]:
        return red_primary(self.payload) if self.red else self.payload


class Unwrapper:
    """16-bit sequence numbers and 32-bit timestamps extended to ints (RFC 3550 A.1)."""

    def __init__(self, bits: int) -> None:
        self.mod = 1 << bits
        self.half = self.mod >> 1
        self.highest: Optional[int] = None

    def extend(self, value: int) -> int:
        if self.highest is None:
            self.highest = value
            return value
        delta = (value - self.highest) % self.mod
        if delta >= self.half:
            delta -= self.mod
        ext = self.highest + delta
        if ext > self.highest:
            self.highest = ext
        return ext


# MARK: - the header rewrite (pure)

class RtpMunger:
    """Per subscriber: maps a publisher's extended (sequence, timestamp) to the
    subscriber's. Decisions only; no I/O.

    `forward` answers the outgoing 16-bit sequence number and 32-bit timestamp, or
    None when the packet must not be sent (a duplicate, or older than a run the
    server dropped). `drop` is told about every packet the server withholds (mute,
    pause), so the next forwarded one follows the last sent without a hole.
    """

    HISTORY = 64

    def __init__(self, first_sequence: int, first_timestamp: int, clock: int = AUDIO_CLOCK) -> None:
        self.clock = clock
        self.first_sequence = first_sequence
        self.first_timestamp = first_timestamp
        self.sn_offset: Optional[int] = None
        self.ts_offset = 0
        self.highest_in: Optional[int] = None      # extended sequence of the newest packet seen
        self.last_out_sn: Optional[int] = None
        self.last_out_ts = 0
        self.last_out_at = 0.0
        self.resync = False                         # the next packet follows a dropped run
        # (first extended sequence, sn offset) of each run since the last drop; older
        # packets that arrive late are sent with the offset of their run.
        self.runs: list[tuple[int, int]] = []
        self.dropped: set[int] = set()
        self.sent: set[int] = set()

    def forward(self, ext_sn: int, ext_ts: int, now: float) -> Optional[tuple[int, int]]:
        if self.sn_offset is None:
            self.sn_offset = ext_sn - self.first_sequence
            self.ts_offset = ext_ts - self.first_timestamp
            self.runs = [(ext_sn, self.sn_offset)]
        elif self.highest_in is not None and ext_sn <= self.highest_in:
            # Late (reordered) or duplicate.
            if ext_sn in self.sent or ext_sn in self.dropped or ext_sn < self.runs[0][0]:
                return None
            offset = next((o for start, o in reversed(self.runs) if ext_sn >= start), None)
            if offset is None:
                return None
            self._remember(ext_sn)
            return (ext_sn - offset) & 0xFFFF, (ext_ts - self.ts_offset) & 0xFFFFFFFF
        elif self.resync:
            # First packet after a dropped run: continue the sequence and move the
            # timestamp on by the wall time that passed (at least 10 ms).
            assert self.last_out_sn is not None
            self.sn_offset = ext_sn - (self.last_out_sn + 1)
            elapsed = max(int((now - self.last_out_at) * self.clock), self.clock // 100)
            self.ts_offset = ext_ts - (self.last_out_ts + elapsed)
            self.runs = [(ext_sn, self.sn_offset)]
            self.dropped.clear()
            self.sent.clear()
        # Otherwise a gap on the publisher's side is forwarded as a gap: loss stays loss.
        self.resync = False
        self.highest_in = ext_sn if self.highest_in is None else max(self.highest_in, ext_sn)
        out_sn = ext_sn - self.sn_offset
        out_ts = ext_ts - self.ts_offset
        self.last_out_sn = out_sn
        self.last_out_ts = out_ts
        self.last_out_at = now
        self._remember(ext_sn)
        return out_sn & 0xFFFF, out_ts & 0xFFFFFFFF

    def drop(self, ext_sn: int) -> None:
        """The server withholds this packet (mute, pause)."""
        if self.sn_offset is None:
            return  # nothing sent yet: the first packet sent starts the stream
        self.dropped.add(ext_sn)
        if len(self.dropped) > 2 * self.HISTORY:  # a long mute: only recent ones can come late
            self.dropped = {s for s in self.dropped if s > ext_sn - self.HISTORY}
        if self.highest_in is not None and ext_sn <= self.highest_in:
            return
        self.highest_in = ext_sn
        self.resync = True

    def translate_timestamp(self, ext_ts: int) -> Optional[int]:
        """A publisher timestamp as this subscriber sees it (for sender reports)."""
        if self.sn_offset is None:
            return None
        return (ext_ts - self.ts_offset) & 0xFFFFFFFF

    def _remember(self, ext_sn: int) -> None:
        self.sent.add(ext_sn)
        if len(self.sent) > self.HISTORY:
            floor = ext_sn - self.HISTORY
            self.sent = {s for s in self.sent if s > floor}
            self.dropped = {s for s in self.dropped if s > floor}


# MARK: - one subscriber

class DownTrack:
    """One subscriber of one published track. `sender` is the subscriber PC's
    RTCRtpSender (patched into forwarding mode by patches.py); it owns the SSRC,
    the negotiated payload types and the transport."""

    def __init__(self, sender, counters: dict) -> None:  # type: ignore[no-untyped-def]
        self.sender = sender
        self.counters = counters
        self.munger = RtpMunger(random.randint(0, 0x7FFF), random.getrandbits(32))
        self.paused = False
        self.sent_red = 0
        self.sent_opus = 0
        self.first_out_ts: Optional[int] = None   # extended, of the first packet sent
        # Set when the subscription ends: the sender (its transceiver is reused) is
        # renegotiated afterwards, and its new codec list says nothing about this stream.
        self.final_codec: Optional[str] = None

    @property
    def payload_types(self) -> tuple[Optional[int], Optional[int]]:
        """(Opus PT, RED PT) as the subscriber negotiated them; None before negotiation."""
        params = getattr(self.sender, "_lk_parameters", None)
        if params is None:
            return None, None
        opus = red = None
        for codec in params.codecs:
            mime = codec.mimeType.lower()
            if mime == "audio/opus" and opus is None:
                opus = codec.payloadType
            elif mime == "audio/red" and red is None:
                red = codec.payloadType
        return opus, red

    @property
    def codec(self) -> str:
        if self.final_codec is not None:
            return self.final_codec
        opus, red = self.payload_types
        if opus is None:
            return ""
        return "audio/red" if red is not None and self._prefers_red() else "audio/opus"

    def _prefers_red(self) -> bool:
        params = getattr(self.sender, "_lk_parameters", None)
        return bool(params and params.codecs and params.codecs[0].mimeType.lower() == "audio/red")

    def handle(self, pkt: SourcePacket, ext_sn: int, ext_ts: int, withheld: bool, now: float) -> Optional[tuple]:
        """Decides what goes out for `pkt`: (sequence, timestamp, payload type, payload)."""
        opus_pt, red_pt = self.payload_types
        if opus_pt is None or self.sender.transport is None:
            return None
        if withheld or self.paused:
            self.munger.drop(ext_sn)
            return None
        if pkt.red and red_pt is not None and self._prefers_red():
            pt, payload = red_pt, pkt.payload
        elif pkt.red:
            primary = pkt.opus_payload()
            if primary is None:
                self.counters["bad_red"] = self.counters.get("bad_red", 0) + 1
                self.munger.drop(ext_sn)
                return None
            pt, payload = opus_pt, primary
        else:
            pt, payload = opus_pt, pkt.payload
        out = self.munger.forward(ext_sn, ext_ts, now)
        if out is None:
            return None
        if self.first_out_ts is None:
            self.first_out_ts = self.munger.last_out_ts
        return out[0], out[1], pt, payload

    def note_sent(self, payload_type: int, size: int) -> None:
        if payload_type == self.payload_types[1]:
            self.sent_red += 1
        else:
            self.sent_opus += 1


class VideoDownTrack(DownTrack):
    """One subscriber of a video track (a scripted VP8 camera). Like LiveKit's forwarder it
    sends nothing while the subscriber disabled the track (`UpdateTrackSettings{disabled}`
    → `DownTrack.Mute`, livekit v1.10.1 pkg/rtc/subscribedtrack.go:364-366) or the
    publisher muted it: `GetTranslationParams` drops every packet then
    (pkg/sfu/forwarder.go:1695-1699). It starts, and starts again after such a pause, at a
    key frame (the layer selector locks on at one: pkg/sfu/videolayerselector/simulcast.go:96),
    with sequence numbers that follow on and the timestamp moved by the wall time
    (forwarder.go:510, resyncLocked on mute)."""

    def __init__(self, sender, counters: dict) -> None:  # type: ignore[no-untyped-def]
        super().__init__(sender, counters)
        self.munger = RtpMunger(random.randint(0, 0x7FFF), random.getrandbits(32), clock=VIDEO_CLOCK)
        self.waiting_for_keyframe = True
        self.sent_video = 0
        self.video_bytes = 0

    @property
    def payload_types(self) -> tuple[Optional[int], Optional[int]]:
        """(VP8 PT, None) as the subscriber negotiated it; None before negotiation."""
        params = getattr(self.sender, "_lk_parameters", None)
        if params is None:
            return None, None
        return next((c.payloadType for c in params.codecs if c.mimeType.lower() == "video/vp8"), None), None

    @property
    def codec(self) -> str:
        if self.final_codec is not None:
            return self.final_codec
        return "video/vp8" if self.payload_types[0] is not None else ""

    def handle(self, pkt: SourcePacket, ext_sn: int, ext_ts: int, withheld: bool, now: float) -> Optional[tuple]:
        pt = self.payload_types[0]
        if pt is None or self.sender.transport is None:
            return None
        if withheld or self.paused:
            self.munger.drop(ext_sn)
            self.waiting_for_keyframe = True
            return None
        if self.waiting_for_keyframe and not pkt.keyframe:
            self.munger.drop(ext_sn)
            return None
        out = self.munger.forward(ext_sn, ext_ts, now)
        if out is None:
            return None
        self.waiting_for_keyframe = False
        if self.first_out_ts is None:
            self.first_out_ts = self.munger.last_out_ts
        return out[0], out[1], pt, pkt.payload

    def note_sent(self, payload_type: int, size: int) -> None:
        self.sent_video += 1
        self.video_bytes += size


class Forwarder:
    """All subscribers of one published track, fed packet by packet."""

    def __init__(self, log_limit: int = PACKET_LOG_LIMIT) -> None:
        self.downtracks: dict[int, DownTrack] = {}     # id(sender) -> DownTrack
        self.finished: list[DownTrack] = []             # unsubscribed ones, newest last
        self.seq = Unwrapper(16)
        self.ts = Unwrapper(32)
        self.muted = False
        self.received = 0
        # (arrival monotonic, sequence, timestamp, red, payload, withheld because muted, marker), newest last
        self.log: deque[tuple[float, int, int, bool, bytes, bool, bool]] = deque(maxlen=log_limit)
        self.last_sr: Optional[tuple[int, int, float]] = None   # (publisher ntp, ext rtp, arrival monotonic)

    def add(self, down: DownTrack) -> None:
        self.downtracks[id(down.sender)] = down
        down.sender._lk_downtrack = down
        down.sender._lk_forwarder = self

    def remove(self, sender) -> None:  # type: ignore[no-untyped-def]
        down = self.downtracks.pop(id(sender), None)
        if down is not None:
            down.final_codec = down.codec
            self.finished.append(down)  # its counters stay readable (/_dev/ packets)
            del self.finished[:-16]

    async def on_packet(self, pkt: SourcePacket) -> None:
        now = time.monotonic()
        self.received += 1
        self.log.append((now, pkt.sequence, pkt.timestamp, pkt.red, pkt.payload, self.muted, pkt.marker))
        ext_sn = self.seq.extend(pkt.sequence)
        ext_ts = self.ts.extend(pkt.timestamp)
        for down in list(self.downtracks.values()):
            decision = down.handle(pkt, ext_sn, ext_ts, self.muted, now)
            if decision is not None:
                down.note_sent(decision[2], len(decision[3]))
                await down.sender._lk_send_forwarded(*decision, pkt.marker)

    def on_sender_report(self, ntp: int, rtp: int) -> None:
        self.last_sr = (ntp, self.ts.extend(rtp) if self.ts.highest is not None else rtp, time.monotonic())


def ntp_plus(ntp: int, seconds: float) -> int:
    """A 64-bit NTP timestamp moved by `seconds` (either way), wrapping as NTP does."""
    return (ntp + int(seconds * (1 << 32))) & 0xFFFFFFFFFFFFFFFF


def sender_report_timestamps(down: DownTrack, forwarder: Optional[Forwarder], now: float) -> Optional[tuple[int, int]]:
    """(NTP, RTP) of a subscriber's sender report, or None: LiveKit writes none for a
    downtrack until its publisher has sent a report of its own (livekit v1.10.1
    pkg/sfu/rtpstats/rtpstats_sender.go:964, `publisherSRData == nil`). Then, passing the
    publisher's report through as LiveKit does by default (downtrack.go:1771 passes
    `!DisableSenderReportPassThrough`, which nothing sets; rtpstats_sender.go:975-981): the
    publisher's NTP time and timestamp (in this subscriber's offset timestamps), both moved
    on by the time since that report arrived. The NTP clock is the publisher's own, so two
    publishers' reports need not agree with each other."""
    munger = down.munger
    if munger.sn_offset is None or forwarder is None or forwarder.last_sr is None:
        return None
    ntp, rtp, at = forwarder.last_sr
    base = munger.translate_timestamp(rtp)
    if base is None:
        return None
    elapsed = max(0.0, now - at)
    return ntp_plus(ntp, elapsed), (base + int(elapsed * munger.clock)) & 0xFFFFFFFF


def packet_log_json(forwarder: Forwarder) -> list[dict]:
    import base64
    return [{"t": round(t, 6), "seq": seq, "ts": ts, "red": red, "muted": muted, "marker": marker,
             "payload": base64.b64encode(payload).decode()}
            for t, seq, ts, red, payload, muted, marker in forwarder.log]


def downtracks_json(forwarder: Forwarder) -> list[dict]:
    return [{"ssrc": d.sender._ssrc, "codec": d.codec, "redSent": d.sent_red, "opusSent": d.sent_opus,
             "firstTimestamp": d.first_out_ts, "lastTimestamp": d.munger.last_out_ts if d.first_out_ts is not None else None}
            for d in [*forwarder.finished, *forwarder.downtracks.values()]]
