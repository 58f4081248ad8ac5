import BedrudProtocol
import Synchronization

/// Settings of one recording pipeline. Defaults suit a recorder (latency is cheap,
/// completeness is not).
public struct MediaPipelineConfig: Sendable {
    /// Room name, written to every file's OpusTags (`ROOM=`).
    public var room: String = ""
    /// The room of the media layer's log lines when one process records several
    /// (``Logger/room``); nil for a single room, whose lines need no tag.
    public var logRoom: String?
    /// Wall-clock time of session sample 0, in nanoseconds since the Unix epoch; start
    /// times in OpusTags (`START_TIME=`) are this plus each file's offset.
    public var sessionStartUnixNanos: Int64 = 0
    /// How long the live path (decoding: the mix, levels and speech detection) waits for a
    /// missing packet before concealing it.
    public var jitterWaitMillis: Int = 60
    /// How long the participant's file waits for a missing packet before the packet is
    /// declared lost and its time written as a `loss` gap. Files are written to disk and
    /// never played live, so they can wait for NACK retransmissions; the wait delays a
    /// page by at most this much (pages are flushed every `pageFlushMillis`). Never shorter
    /// than `jitterWaitMillis` (see ``fileWaitMillis``).
    public var fileJitterWaitMillis: Int = 400
    /// A new participant's packets are held this long before the first is written, so the
    /// backlog burst after subscribing cannot shift the start (see ``TrackClock``).
    public var startHoldMillis: Int = 500
    /// Decode every track (levels, speech detection, mixed file). Off = passthrough only.
    public var decode: Bool = true
    /// Write the mixed `room.opus` (needs `decode`).
    public var mix: Bool = true
    /// 1 = mono mix, 2 = stereo with each participant panned.
    public var mixChannels: Int = 1
    /// The mix's coder and bit rate: CELT at 64 kbit/s (docs/BENCHMARKS.md, *The mix
    /// encoder*, for why not the voice coder at 32).
    public var mixCoder: MixCoder = .celt
    public var mixBitrate: Int = 64000
    /// libopus complexity of the mix encoder (0...10); see docs/BENCHMARKS.md.
    public var mixComplexity: Int = 5
    /// While one voice alone is heard, write its packets into a mono mix as they are
    /// instead of encoding (``RoomMixer``).
    public var mixPassthrough: Bool = true
    /// A page is written at least every this many milliseconds of audio.
    public var pageFlushMillis: Int = 1000
    /// Losses up to this long are concealed with FEC/PLC in the decoded path; longer
    /// gaps (and every mute, DTX and reconnect gap) are true silence.
    public var concealMaxMillis: Int = 120
    /// Gaps at least this long are reported as ``MediaEvent/gap``; shorter ones are counted.
    public var gapEventMinMillis: Int = 200
    /// When a present participant sends nothing for this long, the file is filled up to
    /// the mix edge so that it keeps growing (and a crash loses little).
    public var liveFillAfterMillis: Int = 1000
    /// Jitter buffer slots and payload arena per participant.
    public var jitterSlots: Int = 64
    public var jitterArenaBytes: Int = 32 * 1024
    /// The live path's payload arena: it holds the start hold and 60 ms (about 28 packets,
    /// 2.3 KB at 32 kbit/s; 8 KB is 500 ms at 128 kbit/s). When it is full the oldest packet
    /// goes to the decoder early, which touches only the live path, never the file.
    public var liveArenaBytes: Int = 8 * 1024
    /// Seed for Ogg serial numbers (deterministic output for tests).
    public var serialSeed: UInt32 = 0x6265_6472
    /// With nothing arriving, the media thread still takes a turn this often: silent
    /// files grow, the mix is finalized and paged, stats are published.
    public var idleTurnMillis: Int = 250
    /// The same with no participant in the room (a scheduled recording waiting for its
    /// meeting): only the mix grows, one page a turn. The first packet still wakes the
    /// media thread at once.
    public var emptyRoomTurnMillis: Int = 1000
    /// Time every libopus call (benchmark only; costs two clock reads per call).
    public var timeCodecCalls: Bool = false
    /// `record.align = session`: every participant's file starts at session sample 0,
    /// padded up to the participant's first audio with 120 ms concealment packets of two
    /// bytes each (``ConcealmentPackets``), so files line up in an audio editor. Off: a
    /// file starts at the participant's first audio (its `START_OFFSET_MS`).
    public var alignToSession: Bool = false

    public init() {}

    /// Session samples behind "now" at which the mix is finalized: the hold, the jitter
    /// wait and a margin for the media thread's poll interval.
    public var mixLatencySamples: Int64 { Int64(startHoldMillis + jitterWaitMillis + 140) * 48 }
    /// The file's reorder window in effect: `fileJitterWaitMillis`, at least the live one.
    public var fileWaitMillis: Int { max(fileJitterWaitMillis, jitterWaitMillis) }
    /// Session samples behind "now" up to which a silent participant's file is filled: as
    /// for the mix, with the file's longer wait, so a retransmission still finds its place.
    public var fileLatencySamples: Int64 { Int64(startHoldMillis + fileWaitMillis + 140) * 48 }
    /// The mixed file is paged more often, since it already lags by the mix latency:
    /// together they stay within about a second of real time.
    public var roomPageFlushMillis: Int = 250
}

/// Who a track belongs to.
public struct MediaTrackSpec: Sendable, Equatable {
    public var trackSid: String
    public var participantIdentity: String
    public var participantName: String
    public init(trackSid: String, participantIdentity: String, participantName: String) {
        self.trackSid = trackSid
        self.participantIdentity = participantIdentity
        self.participantName = participantName
    }
}

/// Why a stretch of a participant's file holds concealment instead of audio.
public enum GapCause: String, Sendable, CaseIterable {
    /// Packets were lost (sequence numbers skipped, or corrupt packets).
    case loss
    /// The sender paused (discontinuous transmission: timestamps jumped, sequence did not).
    case dtx
    /// The participant was muted.
    case mute
    /// The participant reconnected (new SSRC, or a reconnect signalled by the session).
    case reconnect
    /// No packets arrived and nothing explains why (no track, or a stalled sender).
    case noPackets
    /// The recording's pages could not be written (a full disk) for longer than the
    /// writer keeps them in memory: the span is concealment (see ``PageStreamRecovery``).
    case writeError = "write_error"
}

/// What a pipeline reports to the session. Delivered off the media thread's hot path
/// (one per turn, gap or file, never one per packet). Times are milliseconds from
/// session start.
public enum MediaEvent: Sendable, Equatable {
    case fileStarted(identity: String, output: RecordingOutput, startOffsetMillis: Int64)
    case gap(identity: String, trackSid: String, startMillis: Int64, durationMillis: Int64, cause: GapCause)
    case speakingTurn(identity: String, startMillis: Int64, endMillis: Int64)
    case fileFinished(identity: String, output: RecordingOutput, startOffsetMillis: Int64, durationMillis: Int64)
    /// The output was rotated at `atMillis`: the previous segment was finished and
    /// segment number `segment` (2, 3, …) begins there (its own `fileStarted` follows).
    case fileRotated(identity: String, output: RecordingOutput, segment: Int, atMillis: Int64, cause: RotationCause)
    /// Something was dropped or failed; the text says what (rate-limited by the pipeline).
    case warning(String)
}

/// An output file of a session.
public enum RecordingOutput: Sendable, Equatable, Hashable {
    case participant(identity: String, name: String)
    case room
}

/// Creates the sink for each output. Called on the media thread when the output starts.
public protocol RecordingSinkFactory: AnyObject {
    func makeSink(for output: RecordingOutput) throws -> PageSink
    /// The sink of segment `segment` (2, 3, …) of a rotated output. Segment 1 is
    /// `makeSink(for:)`.
    func makeSink(for output: RecordingOutput, segment: Int) throws -> PageSink
}

extension RecordingSinkFactory {
    /// A factory that does not number segments cannot rotate.
    public func makeSink(for output: RecordingOutput, segment: Int) throws -> PageSink {
        guard segment > 1 else { return try makeSink(for: output) }
        throw MediaIOError(message: "this recorder does not number rotated files")
    }
}

/// Why the files were rotated (`file_rotated.reason`).
public enum RotationCause: String, Sendable, Equatable, CaseIterable {
    /// `--split DURATION` passed since the segment began.
    case duration
    /// A file of the segment reached `--split-size`.
    case size
    /// SIGHUP.
    case signal
    /// The meeting ended during an outage and the bot started a new one as the room's owner.
    case meetingRestarted = "meeting_restarted"
}

/// Writes `<directory>/room.opus` and `<directory>/<participant-name>.opus` (names
/// reduced to letters, digits, space, `.`, `_`, `-`; duplicates get `-2`, `-3`, …), each
/// as `*.part` until closed cleanly.
public final class DirectorySinkFactory: RecordingSinkFactory, Sendable {
    public let directory: String
    private let state = Mutex<(used: Set<String>, paths: [RecordingOutput: String])>((["room"], [:]))

    public init(directory: String) { self.directory = directory }

    /// The path each output was given (final names, without `.part`).
    public var paths: [RecordingOutput: String] { state.withLock { $0.paths } }

    public func makeSink(for output: RecordingOutput) throws -> PageSink {
        let path = state.withLock { st -> String in
            let base: String
            switch output {
            case .room: base = "room"
            case .participant(let identity, let name):
                var b = Self.fileName(name.isEmpty ? identity : name)
                if st.used.contains(b) {
                    var i = 2
                    while st.used.contains("\(b)-\(i)") { i += 1 }
                    b = "\(b)-\(i)"
                }
                st.used.insert(b)
                base = b
            }
            let path = directory + "/" + base + ".opus"
            st.paths[output] = path
            return path
        }
        return try FileSink(path: path)
    }

    static func fileName(_ name: String) -> String {
        let mapped = name.unicodeScalars.map { s -> Character in
            let ok = (s >= "a" && s <= "z") || (s >= "A" && s <= "Z") || (s >= "0" && s <= "9") || s == " " || s == "-" || s == "_"
                || s == "."
            return ok ? Character(s) : "_"
        }
        var s = String(mapped).trimmingSpacesAndDots()
        if s.isEmpty { s = "participant" }
        return String(s.prefix(100))
    }
}

extension String {
    fileprivate func trimmingSpacesAndDots() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "." { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "." { s = s.dropLast() }
        return String(s)
    }
}

/// Counters for one participant, for the status line and summary.json.
public struct ParticipantMediaStats: Sendable, Equatable {
    public var identity: String
    public var packets = 0
    public var payloadBytes = 0
    public var lost = 0
    public var late = 0
    public var duplicates = 0
    public var corrupt = 0
    public var overlapDropped = 0
    public var fecRecovered = 0
    /// Loss time of the file short enough for a player to conceal (`concealMaxMillis`).
    public var concealedMillis: Int64 = 0
    /// Packets that came too late for the live path (mix, speech detection), whether or
    /// not they were in time for the file; and the live path's concealed time.
    public var mixLate = 0
    public var mixConcealedMillis: Int64 = 0
    public var gapMillis: [GapCause: Int64] = [:]
    public var fileDurationMillis: Int64 = 0
    public var levelDBFS: Float = -120
    public var peakDBFS: Float = -120
    public var speaking = false
    public var clockAdjustments = 0
    public var ringDropped = 0
}

public struct MediaStats: Sendable, Equatable {
    public var participants: [ParticipantMediaStats] = []
    public var mixLateSamplesDropped = 0
    public var mixLimitedFrames = 0
    public var mixFramesEncoded = 0
    /// Packets of a lone voice written into the mix as they are (``RoomMixer``).
    public var mixPacketsPassedThrough = 0
    public var pageBytesWritten = 0
    /// The live path's level strips, by participant identity ("" for the room mix); only
    /// in the stats published when the pipeline stops (a copy every second would copy
    /// the whole strip).
    public var levels: [String: LevelStrip] = [:]
}
