import BedrudProtocol

/// Everything the media thread keeps for one participant: the ring of the current
/// track, the jitter buffer, the clock, the passthrough Ogg stream, the decoder and the
/// speech detector. All buffers are allocated when the participant is added.
///
/// The participant's file runs from its first packet to when it leaves (or the session
/// stops). Every stretch without packets is written as concealment packets
/// (RFC 7845 §4.1), so the file's timeline is the session's.
/// Thread contract: owned by the media thread.
final class ParticipantRecorder {
    let identity: String
    let name: String
    var trackSid: String
    let streamID: Int
    var ring: PacketRing?
    /// The file's reorder buffer (`fileWaitMillis`): what it releases is written to disk.
    var jitter: JitterBuffer
    /// The live path's reorder buffer (`jitterWaitMillis`): what it releases is decoded
    /// for the mix and speech detection. Unused (and minimal) when nothing is decoded.
    var live: JitterBuffer
    /// Session sample up to which the live path has decoded (nil before its first packet).
    var liveEnd: Int64?
    /// Sequence numbers the live window gave up since its last packet (FEC recovers one).
    var liveLostBefore: Int64 = 0
    var liveLossSinceLastPacket = false
    var clock: TrackClock
    var writer: OggStreamWriter?
    let decoder: OpusDecoderBox?
    var vad = VoiceActivityDetector()
    let pan: Float

    var ssrc: UInt32?
    /// The current stream's counters, unwrapped once for both windows.
    var sequences = RTPCounterUnwrapper.sequenceNumbers()
    var timestamps = RTPCounterUnwrapper.timestamps()
    var senderReport: (rtp: UInt32, ntpNanos: Int64)?
    var fileStart: Int64?
    /// Session sample where the file currently ends.
    var writtenEnd: Int64 = 0
    var lastTOC: UInt8 = 31 << 3  // CELT FB 20 ms until a packet says otherwise
    var muted = false
    var mutedSinceLastPacket = false
    var pendingCause: GapCause?
    /// Session sample where our connection was lost while reconnecting (the last moment
    /// the participant was known to be in the room); nil while in contact.
    var contactLostAt: Int64?
    var lossSinceLastPacket = false
    var lastPacketArrival: UInt64 = 0
    var everReceived = false
    /// When the participant's first track was added (monotonic ns).
    var addedAt: UInt64 = 0
    var openGap: (start: Int64, end: Int64, cause: GapCause)?
    /// Gap time per cause in samples; `stats.gapMillis` is derived from it, never summed in ms.
    var gapSamples: [GapCause: Int64] = [:]
    var stats: ParticipantMediaStats
    var finished = false
    /// Rotation: the number of the file segment being written (1 = the first file),
    /// its channel count, and the played samples of the segments already finished.
    var segment = 1
    var stereo = false
    var earlierSegmentsSamples: Int64 = 0

    init(spec: MediaTrackSpec, streamID: Int, config: MediaPipelineConfig, pan: Float) {
        identity = spec.participantIdentity
        name = spec.participantName
        trackSid = spec.trackSid
        self.streamID = streamID
        jitter = JitterBuffer(
            capacity: config.jitterSlots, arenaBytes: config.jitterArenaBytes,
            waitNanos: UInt64(config.fileWaitMillis) * 1_000_000)
        live = JitterBuffer(
            capacity: config.decode ? config.jitterSlots : 8, arenaBytes: config.decode ? config.liveArenaBytes : 0,
            waitNanos: UInt64(config.jitterWaitMillis) * 1_000_000)
        clock = TrackClock(settleNanos: UInt64(config.startHoldMillis) * 1_000_000)
        decoder = config.decode ? OpusDecoderBox(channels: 1) : nil
        decoder?.timeCalls = config.timeCodecCalls
        self.pan = pan
        stats = ParticipantMediaStats(identity: identity)
    }

    // MARK: - Why there was no audio

    /// The one rule for a gap's cause, whatever ends it (a packet, a new stream, or
    /// nothing yet): a cause already known (a reconnect, a mute learned at a new track)
    /// wins, then a mute since the last packet, then what the end says.
    func gapCause(endedBy end: GapEnd) -> GapCause {
        if let c = pendingCause { return c }
        if muted || mutedSinceLastPacket { return .mute }
        switch end {
        case .packet(let loss): return loss ? .loss : .dtx
        case .newStream: return .reconnect
        case .nothing: return .noPackets
        }
    }
}

/// What ends a stretch of a participant's timeline without audio (see
/// ``ParticipantRecorder/gapCause(endedBy:)``).
enum GapEnd {
    /// A packet; `loss` when sequence numbers were given up (or a packet was corrupt)
    /// since the one before it. Without loss, the sender paused (DTX).
    case packet(loss: Bool)
    /// A new stream begins (another track, a new SSRC): the old one ended.
    case newStream
    /// No packet (yet): the file grows with filler, or ends.
    case nothing
}
