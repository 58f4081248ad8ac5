import BedrudMedia
import BedrudProtocol
import BedrudRTC
import Dispatch
import FoundationEssentials
import Glibc

/// `summary.json`, as typed values (docs/EVENTS.md lists every field): the one definition
/// of the file, written at the end of a live session (``SessionSummary/init(_:)`` from
/// ``SessionSummary/Facts``) and rebuilt by `repair` after a crash (``SessionRepair``). Keys
/// are spelled out: they are the file's schema. Absent values are written as `null`, never
/// left out; only `repaired` is left out of a summary that `repair` did not write.
struct SessionSummary: Encodable, Equatable {
    /// One participant's recording: a file (with its rotated segments, when it rotates)
    /// and the figures of the session that wrote it. A participant who came back as a new
    /// session (a rejoin) has one entry per file, each describing its own file.
    struct Participant: Encodable, Equatable {
        var identity: String
        var name: String
        var file: Nullable<String>
        /// Milliseconds from session start to the first sample of the file.
        var startOffsetMs: Nullable<Int64>
        var durationMs: Nullable<Int64>
        /// The participant's speaking turns inside this file's span.
        var speakingMs: Int64
        var packets: Nullable<Int>
        var lost: Nullable<Int>
        var late: Nullable<Int>
        var duplicates: Nullable<Int>
        var fecRecovered: Nullable<Int>
        var concealedMs: Nullable<Int64>
        var gapsMs: [String: Int64]
        /// Packets too late for the live mix and speech detection (`record.jitter_wait`),
        /// whether or not they reached the file; and the time the live path concealed.
        var mixLate: Nullable<Int> = Nullable(0)
        var mixConcealedMs: Nullable<Int64> = Nullable(0)
        /// Packets received and not used: placed onto audio already written, undecodable,
        /// or with no room in the media thread's queue.
        var dropped: Nullable<Int> = Nullable(0)

        enum CodingKeys: String, CodingKey {
            case identity, name, file, packets, lost, late, duplicates, dropped
            case startOffsetMs = "start_offset_ms", durationMs = "duration_ms", speakingMs = "speaking_ms"
            case fecRecovered = "fec_recovered", concealedMs = "concealed_ms", gapsMs = "gaps_ms"
            case mixLate = "mix_late", mixConcealedMs = "mix_concealed_ms"
        }
    }

    /// How chat messages arrived (``ChatAssembler/Stats``): long chats come in chunks.
    struct Chat: Encodable, Equatable {
        var chats: Int
        var reassembled: Int
        var duplicateChats: Int
        var orphanChunks: Int
        var ignoredChunks: Int
        var dropped: Int
        enum CodingKeys: String, CodingKey {
            case chats, reassembled, dropped
            case duplicateChats = "duplicate_chats", orphanChunks = "orphan_chunks", ignoredChunks = "ignored_chunks"
        }

        init(_ s: ChatAssembler.Stats) {
            (chats, reassembled, duplicateChats, orphanChunks, ignoredChunks, dropped) =
                (s.chats, s.reassembled, s.duplicateChats, s.orphanChunks, s.ignoredChunks, s.dropped)
        }
    }

    /// What `repair` read and fixed (only in a summary it rebuilt).
    struct Repair: Encodable, Equatable {
        var eventLines: Int
        var eventLinesUnreadable: Int
        var filesRepaired: [String]
        enum CodingKeys: String, CodingKey {
            case eventLines = "event_lines", eventLinesUnreadable = "event_lines_unreadable", filesRepaired = "files_repaired"
        }
    }

    /// The transport's own figures for the subscriber connection (the last one, after a rejoin).
    struct Network: Encodable, Equatable {
        struct Track: Encodable, Equatable {
            var ssrc: Int
            var trackSid: Nullable<String>
            var participant: Nullable<String>
            var packets: Int
            var lost: Int
            var jitterMs: Double
            var nacked: Int
            var recovered: Int
            enum CodingKeys: String, CodingKey {
                case ssrc, participant, packets, lost, nacked, recovered
                case trackSid = "track_sid", jitterMs = "jitter_ms"
            }
        }
        var srtpProfile: Nullable<String>
        var selectedPair: Nullable<String>
        var tracks: [Track]
        /// Reconnects that began soon after the previous one completed (a flapping link).
        var flappingReconnects = 0
        enum CodingKeys: String, CodingKey {
            case tracks
            case srtpProfile = "srtp_profile", selectedPair = "selected_pair", flappingReconnects = "flapping_reconnects"
        }

        init(_ s: PeerConnectionStats, identities: [String: String], flappingReconnects: Int = 0) {
            self.flappingReconnects = flappingReconnects
            srtpProfile = Nullable(s.srtpProfile.map { "\($0)" })
            selectedPair = Nullable(s.selectedPair)
            // Tracks that ended (their speaker left first) keep their figures too.
            tracks = (s.endedTracks + s.tracks).map { t in
                Track(ssrc: Int(t.ssrc), trackSid: Nullable(t.trackSID), participant: Nullable(t.trackSID.flatMap { identities[$0] }),
                      packets: Int(t.packetsReceived), lost: Int(t.packetsLost), jitterMs: t.jitterMs,
                      nacked: Int(t.nackedPackets), recovered: Int(t.recoveredPackets))
            }
        }
    }

    /// What `on_finish` did.
    struct OnFinish: Encodable, Equatable {
        var command: String
        /// The command's exit status; null while it runs (the copy it reads) or when it was killed.
        var exitCode: Nullable<Int>
        var signal: Nullable<Int>
        var timedOut: Bool
        var durationMs: Int64
        enum CodingKeys: String, CodingKey {
            case command, signal
            case exitCode = "exit_code", timedOut = "timed_out", durationMs = "duration_ms"
        }
    }

    /// How writing went: failed writes, what they cost (issue 13 §1; docs/EVENTS.md).
    struct Storage: Encodable, Equatable {
        var diskFull: Bool
        var error: Nullable<String>
        var pagesDropped: Int
        var unfinishedFiles: Int
        var eventsLost: Int
        enum CodingKeys: String, CodingKey {
            case error
            case diskFull = "disk_full", pagesDropped = "pages_dropped", unfinishedFiles = "unfinished_files", eventsLost = "events_lost"
        }
    }

    var room: Nullable<String>
    var server: Nullable<String>
    var started: Nullable<String>
    var ended: Nullable<String>
    var durationMs: Int64
    /// An ``EndReason``'s raw value, or `crashed` from `repair`.
    var endReason: String
    var exitCode: Nullable<Int>
    var message: String
    var participants: [Participant]
    var files: [String]
    var roomFile: Nullable<String>
    /// Outages: times the connection was lost (a resume that became a rejoin is one).
    var reconnects: Int
    /// Reconnect attempts (resumes and rejoins) over all outages.
    var reconnectAttempts = 0
    var chatMessages: Int
    var chat: Nullable<Chat> = Nullable(nil)
    var network: Nullable<Network>
    var onFinish: Nullable<OnFinish>
    var storage: Nullable<Storage> = Nullable(nil)
    var repaired: Repair? = nil

    enum CodingKeys: String, CodingKey {
        case room, server, started, ended, message, participants, files, reconnects, network, chat, storage, repaired
        case durationMs = "duration_ms", endReason = "end_reason", exitCode = "exit_code", roomFile = "room_file"
        case chatMessages = "chat_messages", onFinish = "on_finish", reconnectAttempts = "reconnect_attempts"
    }

    /// Pretty, sorted, with control characters escaped for terminals (`cat summary.json`),
    /// written by ``JSONWriter``.
    func json() -> String {
        let text = (try? JSONOutput.string(self)) ?? "{}"
        return TerminalText.escapingJSON(text) + "\n"
    }
}

/// An optional that is written as `null` when absent (synthesized Codable leaves it out).
/// As a property wrapper, `@Nullable var x: T?`, it gives a synthesized `encode(to:)` the
/// `null`s the `--json` answers print for values not known.
@propertyWrapper
struct Nullable<Wrapped: Encodable>: Encodable {
    var value: Wrapped?
    init(_ value: Wrapped?) { self.value = value }
    init(wrappedValue: Wrapped?) { self.value = wrappedValue }
    var wrappedValue: Wrapped? {
        get { value }
        set { value = newValue }
    }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        if let value { try c.encode(value) } else { try c.encodeNil() }
    }
}

extension Nullable: Equatable where Wrapped: Equatable {}
