import BedrudProtocol
import BedrudRuntime

/// What the packet path reports upwards (rare events only; never per packet).
protocol MediaReceiverDelegate: AnyObject {
    func mediaUnknownSSRC(_ ssrc: UInt32, payloadType: UInt8)
    func mediaBye(_ ssrc: UInt32)
    /// A track has missing packets and the NACK timer is not running: start it (it calls
    /// ``MediaReceiver/sendNACKs(nowNanos:)`` until that returns false).
    func mediaNACKPending()
}

/// Per-SSRC receive state. Touched only on the loop thread.
final class InboundStream {
    let track: RemoteTrack
    var ring: PacketRing?
    var stats: RTPReceiveStatistics
    var nack: NACKTracker
    var ringDrops: UInt64 = 0
    var senderReports: UInt64 = 0
    var packetsPerSecond: Double = 0
    var lastRatePackets: UInt64 = 0
    var lastRateNanos: UInt64 = 0

    init(track: RemoteTrack, nack: NACKTracker.Configuration) {
        self.track = track
        stats = RTPReceiveStatistics(clockRate: track.clockRate)
        self.nack = NACKTracker(configuration: nack)
    }
}

/// The packet path: SRTP unprotect into a reused buffer, RTP/RTCP parse, per-SSRC
/// statistics and NACK bookkeeping, and the push into the track's ``PacketRing``; plus
/// the receiver reports and NACKs sent back.
///
/// Thread contract: confined to the loop thread. In steady state a received RTP packet
/// costs no allocation here, no lock and no actor hop (libsrtp2 itself may allocate; see
/// ``SRTPTransform``).
package final class MediaReceiver {
    package var srtp: (any SRTPTransform)?
    weak var delegate: (any MediaReceiverDelegate)?
    /// Sends one protected datagram; set by the transport.
    var sendDatagram: ((UnsafeRawPointer, Int) -> Bool)?
    private(set) var streams: [UInt32: InboundStream] = [:]
    /// Our published tracks by SSRC: NACKs for them are answered from their history.
    var senders: [UInt32: MediaSender] = [:]
    var counters = TransportStats()
    let maxDatagram: Int
    private let buffer: UnsafeMutableRawPointer
    private let sendBuffer: UnsafeMutableRawPointer
    private static let sendCapacity = 1500
    private var nackScratch: UnsafeMutableBufferPointer<UInt16>
    private var reportedUnknown: [UInt32] = []
    /// Our RTCP sender SSRC and CNAME.
    let localSSRC: UInt32
    /// Our RTCP CNAME (also in the publisher offer's a=ssrc lines).
    let cname: [UInt8]
    private let nackConfig: NACKTracker.Configuration
    private var badInput: RateLimitedLog
    /// True from ``MediaReceiverDelegate/mediaNACKPending()`` until the timer stops: while
    /// nothing is missing no timer runs, so an idle or loss-free connection never wakes the
    /// loop for NACKs.
    private(set) var nackTimerRunning = false

    package init(maxDatagram: Int, nack: NACKTracker.Configuration, logRoom: String? = nil) {
        badInput = RateLimitedLog(Logger("rtc.media", room: logRoom))
        self.maxDatagram = max(256, maxDatagram)
        buffer = .allocate(byteCount: self.maxDatagram + 64, alignment: 16)
        sendBuffer = .allocate(byteCount: Self.sendCapacity + 256, alignment: 16)
        nackScratch = .allocate(capacity: 256)
        localSSRC = UInt32.random(in: 1...UInt32.max)
        cname = Array("bedrud-\(String(UInt64.random(in: 0...UInt64.max), radix: 36))".utf8)
        nackConfig = nack
        reportedUnknown.reserveCapacity(64)
    }

    deinit {
        buffer.deallocate()
        sendBuffer.deallocate()
        nackScratch.deallocate()
    }

    // MARK: - Tracks and rings (control plane, loop thread)

    /// Makes `tracks` the set of known SSRCs. Existing streams keep their state and ring;
    /// streams no longer listed are removed (their rings detached).
    /// The figures of a stream that is gone are kept in ``endedTrackStats``.
    package func setTracks(_ tracks: [RemoteTrack]) {
        var next: [UInt32: InboundStream] = [:]
        for t in tracks {
            if let s = streams[t.ssrc] {
                next[t.ssrc] = s
            } else {
                next[t.ssrc] = InboundStream(track: t, nack: nackConfig)
            }
        }
        for (ssrc, s) in streams.sorted(by: { $0.key < $1.key }) where next[ssrc] == nil {
            var final = Self.stats(of: s)
            final.attached = false
            if endedTrackStats.count >= Self.endedTrackLimit {
                endedTrackStats.removeFirst()
                endedTracksForgotten &+= 1
            }
            endedTrackStats.append(final)
        }
        streams = next
        reportedUnknown.removeAll { next[$0] != nil }
    }

    /// Attaches `ring` to the stream of `ssrc`. Returns false if no such track is known.
    package func attach(_ ring: PacketRing?, ssrc: UInt32) -> Bool {
        guard let s = streams[ssrc] else { return false }
        s.ring = ring
        return true
    }

    // MARK: - Receive path

    /// One SRTP or SRTCP datagram from the ICE transport.
    @inline(__always)
    package func handle(_ datagram: UnsafeRawPointer, count n: Int, isRTCP: Bool, nowNanos: UInt64) {
        guard n <= maxDatagram else {
            counters.unknownDatagrams &+= 1
            return
        }
        guard let srtp else {
            counters.srtpBeforeKeys &+= 1
            return
        }
        buffer.copyMemory(from: datagram, byteCount: n)
        let status = isRTCP ? srtp.unprotectRTCP(buffer, length: n) : srtp.unprotectRTP(buffer, length: n)
        let length: Int
        switch status {
        case .ok(let l): length = l
        case .authenticationFailed:
            counters.srtpAuthFailures &+= 1
            return
        case .replayed:
            counters.srtpReplays &+= 1
            return
        case .malformed, .failed:
            counters.srtpOtherErrors &+= 1
            return
        }
        let packet = UnsafeRawBufferPointer(start: buffer, count: length)
        if isRTCP {
            counters.rtcpPackets &+= 1
            handleRTCP(packet, nowNanos: nowNanos)
        } else {
            handleRTP(packet, nowNanos: nowNanos)
        }
    }

    @inline(__always)
    private func handleRTP(_ packet: UnsafeRawBufferPointer, nowNanos: UInt64) {
        let h: RTPHeader
        do {
            h = try RTPHeader.parse(packet)
        } catch {
            counters.malformedRTP &+= 1
            return
        }
        counters.rtpPackets &+= 1
        guard let s = streams[h.ssrc] else {
            counters.unknownSSRCPackets &+= 1
            reportUnknown(h.ssrc, payloadType: h.payloadType)
            return
        }
        let r = s.stats.record(sequenceNumber: h.sequenceNumber, rtpTimestamp: h.timestamp, payloadBytes: h.payloadLength, arrivalNanos: nowNanos)
        if s.track.nack {
            s.nack.packetArrived(r.extended, nowNanos: nowNanos)
            if !nackTimerRunning, s.nack.pendingCount > 0 {
                nackTimerRunning = true
                delegate?.mediaNACKPending()
            }
        }
        // Padding-only packets (bandwidth probes, keep-alives) carry no media: counted in the
        // statistics above, not handed to the media thread.
        guard h.payloadLength > 0 else {
            counters.paddingOnlyPackets &+= 1
            return
        }
        guard let ring = s.ring else {
            counters.unattachedPackets &+= 1
            return
        }
        let header = MediaPacketHeader(
            kind: .rtp, ssrc: h.ssrc, sequenceNumber: h.sequenceNumber, rtpTimestamp: h.timestamp,
            payloadType: h.payloadType, marker: h.marker, arrivalNanos: nowNanos)
        if !ring.push(header, payload: UnsafeRawBufferPointer(rebasing: packet[h.payloadOffset..<(h.payloadOffset + h.payloadLength)])) {
            s.ringDrops &+= 1
        }
    }

    private func reportUnknown(_ ssrc: UInt32, payloadType: UInt8) {
        guard reportedUnknown.count < 64, !reportedUnknown.contains(ssrc) else { return }
        reportedUnknown.append(ssrc)
        delegate?.mediaUnknownSSRC(ssrc, payloadType: payloadType)
    }

    private func handleRTCP(_ packet: UnsafeRawBufferPointer, nowNanos: UInt64) {
        do {
            try RTCPCompound.forEach(packet) { v in
                switch v.packetType {
                case RTCPPacketType.senderReport:
                    guard let sr = RTCPSenderReport(v), let s = streams[sr.ssrc] else { return }
                    s.senderReports &+= 1
                    s.stats.recordSenderReport(compactNTP: sr.compactNTP, arrivalNanos: nowNanos)
                    if let ring = s.ring {
                        let header = MediaPacketHeader(
                            kind: .senderReport, ssrc: sr.ssrc, rtpTimestamp: sr.rtpTimestamp,
                            arrivalNanos: nowNanos, ntpTimestamp: sr.ntpTimestamp)
                        if !ring.push(header, payload: UnsafeRawBufferPointer(start: nil, count: 0)) { s.ringDrops &+= 1 }
                    }
                case RTCPPacketType.goodbye:
                    RTCPGoodbye.forEachSource(v) { ssrc in delegate?.mediaBye(ssrc) }
                case RTCPPacketType.transportFeedback:
                    guard let ssrc = RTCPGenericNACK.mediaSSRC(v), let sender = senders[ssrc], let send = sendDatagram else { return }
                    counters.nacksReceived &+= 1
                    RTCPGenericNACK.forEachLost(v) { seq in sender.retransmit(seq, send: send) }
                default:
                    break  // RR, SDES, other feedback
                }
            }
        } catch {
            counters.malformedRTCP &+= 1
            badInput.log(.debug, now: nowNanos, "RTCP compound dropped: \(error)")
        }
    }

    // MARK: - RTCP we send (timer-driven, loop thread)

    /// Sends receiver reports (+ SDES CNAME) for every stream that has received packets,
    /// and updates packets-per-second.
    func sendReceiverReports(nowNanos: UInt64) {
        let active = streams.values.filter { $0.stats.packetsReceived > 0 }.sorted { $0.track.ssrc < $1.track.ssrc }
        for s in active {
            if s.lastRateNanos != 0, nowNanos > s.lastRateNanos {
                s.packetsPerSecond = Double(s.stats.packetsReceived &- s.lastRatePackets) * 1e9 / Double(nowNanos - s.lastRateNanos)
            }
            s.lastRatePackets = s.stats.packetsReceived
            s.lastRateNanos = nowNanos
        }
        var i = 0
        repeat {
            let chunk = active[i..<min(active.count, i + 31)]
            let blocks = chunk.map { $0.stats.makeReportBlock(ssrc: $0.track.ssrc, nowNanos: nowNanos) }
            var w = RTCPWriter(buffer: UnsafeMutableRawBufferPointer(start: sendBuffer, count: Self.sendCapacity))
            w.appendReceiverReport(senderSSRC: localSSRC, blocks: blocks)
            cname.withUnsafeBytes { _ = w.appendSourceDescription(ssrc: localSSRC, cname: $0) }
            if sendRTCP(length: w.count) { counters.receiverReportsSent &+= 1 }
            i += 31
        } while i < active.count
    }

    /// Sends generic NACKs for packets that are due (one tick of the NACK timer).
    /// - Returns: whether some track still has missing packets, i.e. whether the timer
    ///   must keep running; when false the timer stops, until the next gap.
    @discardableResult
    func sendNACKs(nowNanos: UInt64) -> Bool {
        counters.nackTimerTicks &+= 1
        var pending = false
        for s in streams.values where s.track.nack && s.nack.pendingCount > 0 {
            let n = s.nack.collectDue(nowNanos: nowNanos, into: nackScratch)
            if s.nack.pendingCount > 0 { pending = true }
            guard n > 0 else { continue }
            var w = RTCPWriter(buffer: UnsafeMutableRawBufferPointer(start: sendBuffer, count: Self.sendCapacity))
            // RFC 4585 feedback goes in a compound starting with an RR unless reduced-size
            // RTCP was negotiated; an empty RR keeps it valid for both.
            w.appendReceiverReport(senderSSRC: localSSRC, blocks: [RTCPReportBlock]())
            // The tracker reports in ascending (extended) order, which PID+BLP packing relies on.
            w.appendNACK(senderSSRC: localSSRC, mediaSSRC: s.track.ssrc, lost: UnsafeBufferPointer(rebasing: nackScratch[0..<n]))
            if sendRTCP(length: w.count) { counters.nacksSent &+= 1 }
        }
        nackTimerRunning = pending
        return pending
    }

    /// The NACK timer was cancelled (close, failure); the next gap starts it again.
    func nackTimerStopped() { nackTimerRunning = false }

    /// Sends a sender report (+ SDES CNAME) for every published track that has sent.
    func sendSenderReports(nowNanos: UInt64, unixNanos: UInt64) {
        guard !senders.isEmpty else { return }
        let ntp = RTPSender.ntp(unixNanos: unixNanos)
        for sender in senders.values {
            var w = RTCPWriter(buffer: UnsafeMutableRawBufferPointer(start: sendBuffer, count: Self.sendCapacity))
            guard sender.rtp.appendSenderReport(to: &w, ntp: ntp, nowNanos: nowNanos) else { continue }
            cname.withUnsafeBytes { _ = w.appendSourceDescription(ssrc: sender.rtp.ssrc, cname: $0) }
            if sendRTCP(length: w.count) { counters.senderReportsSent &+= 1 }
        }
    }

    private func sendRTCP(length: Int) -> Bool {
        guard length > 0, let srtp, let send = sendDatagram else { return false }
        guard case .ok(let protected) = srtp.protectRTCP(sendBuffer, length: length, capacity: Self.sendCapacity + 256) else {
            counters.rtcpSendFailures &+= 1
            return false
        }
        if !send(sendBuffer, protected) {
            counters.rtcpSendFailures &+= 1
            return false
        }
        return true
    }

    /// Per-track statistics.
    func trackStats() -> [TrackStats] {
        streams.values.sorted { $0.track.ssrc < $1.track.ssrc }.map(Self.stats(of:))
    }

    static func stats(of s: InboundStream) -> TrackStats {
        TrackStats(
            ssrc: s.track.ssrc, participantSID: s.track.participantSID, trackSID: s.track.trackSID, attached: s.ring != nil,
            packetsReceived: s.stats.packetsReceived, bytesReceived: s.stats.bytesReceived,
            packetsLost: s.stats.cumulativeLost, jitterMs: s.stats.jitterSeconds * 1000,
            packetsPerSecond: s.packetsPerSecond, nackedPackets: s.nack.requested, recoveredPackets: s.nack.recovered,
            ringDrops: s.ringDrops, senderReports: s.senderReports)
    }

    /// The last figures of every stream that ended on this connection (its speaker left,
    /// or unpublished), oldest first, at most ``endedTrackLimit``: summary.json's
    /// `network.tracks` keeps them, so a speaker who leaves before the bot keeps its NACK
    /// and recovery figures.
    private(set) var endedTrackStats: [TrackStats] = []
    /// Ended streams beyond ``endedTrackLimit`` whose figures were let go.
    private(set) var endedTracksForgotten = 0
    /// How many ended streams' figures are kept: a day of a busy room, 64 bytes each.
    static let endedTrackLimit = 4096
}
