import BedrudProtocol
import BedrudRuntime

/// Everything the media thread keeps for one participant: the ring of the current
/// track, the two reorder windows, the passthrough Ogg stream, the decoder and the
/// speech detector — the shell's parts — and the ``ParticipantTimeline``, which decides
/// where each packet lands and why there is no audio where there is none. All buffers
/// are allocated when the participant is added.
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
    var timeline: ParticipantTimeline
    var writer: OggStreamWriter?
    let decoder: OpusDecoderBox?
    var vad = VoiceActivityDetector()
    let pan: Float
    /// The last audio packet's TOC byte: concealment packets copy its mode and bandwidth.
    var lastTOC: UInt8 = 31 << 3  // CELT FB 20 ms until a packet says otherwise
    /// Packet counters; the timeline's (gaps, concealment, file duration) are added by
    /// ``MediaEngine/stats()``.
    var stats: ParticipantMediaStats

    init(spec: MediaTrackSpec, streamID: Int, config: MediaPipelineConfig, pan: Float, startNanos: UInt64 = 0, addedAt: UInt64 = 0) {
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
        decoder = config.decode ? OpusDecoderBox(channels: 1) : nil
        decoder?.timeCalls = config.timeCodecCalls
        var settings = ParticipantTimeline.Settings(config: config, startNanos: startNanos)
        settings.decodes = decoder != nil
        timeline = ParticipantTimeline(settings: settings, addedAt: addedAt)
        self.pan = pan
        stats = ParticipantMediaStats(identity: identity)
    }
}
