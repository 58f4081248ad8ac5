import BedrudCore
import BedrudMedia
import BedrudProtocol
import Dispatch
import FoundationEssentials
import Glibc

/// Why a session ended: the summary's `end_reason`, one value per cause.
public enum EndReason: String, Sendable, Codable, CaseIterable {
    /// `--duration` (or `record.max_duration`) passed.
    case duration
    /// Everyone else left and `alone_timeout` passed.
    case alone
    /// `--wait-for-participants` passed and no person ever came (exit 14).
    case nobodyCame = "nobody_came"
    /// SIGINT or SIGTERM: a clean stop (exit 0).
    case signal
    /// The room was deleted or closed, or the server shut down.
    case roomEnded = "room_ended"
    /// A moderator removed the bot (kick or ban).
    case kicked
    /// Another connection with the bot's identity replaced it.
    case replaced
    /// The connection was lost and could not be re-established.
    case network
    /// Free space fell below `record.min_free` (exit 15).
    case diskLow = "disk_low"
    /// A write failed because the disk (or quota) is full (exit 15).
    case diskFull = "disk_full"
    /// A write failed for another reason (exit 15).
    case writeError = "write_error"
    /// Anything else that ended the room (refused join, protocol error, …).
    case error
    /// The bot left without a recorded cause (not expected; kept for completeness).
    case left

    /// Why a room the server or the connection ended is over: the first of two steps from
    /// a ``RoomDisconnectReason`` to an exit code (``exitCode`` is the second).
    public init(_ reason: RoomDisconnectReason) {
        switch reason {
        case .left: self = .left
        case .kicked: self = .kicked
        case .roomDeleted, .roomClosed, .serverShutdown, .roomEnded: self = .roomEnded
        case .duplicateIdentity: self = .replaced
        case .network: self = .network
        case .joinFailure, .refused, .notAllowed, .roomNotFound, .forbidden, .protocolError, .subscriberNotPrimary, .server: self = .error
        }
    }

    /// The exit code of a session that ended this way: the one table (docs/CLI.md, "How a
    /// session ends"). ``error`` has no code of its own: ``RoomDisconnectReason/exitCode``
    /// names the error's class (a bot-decided stop is never an error).
    public var exitCode: ExitCode {
        switch self {
        case .duration, .alone, .signal, .left: .success
        case .nobodyCame: .nobodyCame
        case .diskLow, .diskFull, .writeError: .diskLow
        case .kicked, .roomEnded, .replaced: .removed
        case .network: .network
        case .error: .failure
        }
    }
}

/// The session's lifecycle rules, as a pure value: when to leave and why.
///
/// The owner (``RoomRun``) feeds it what happens — the session started, the number of
/// people in the room changed, a timer fired, a signal, the room ended, a free-space
/// sample, a failed write — with the instant it happened on a monotonic clock, and carries
/// out the actions it returns: arm or cancel a timer, sample free space, leave with a
/// cause. The first stop cause wins; everything after it only finishes. Bots
/// (``BotRecognition``) are never people: they neither keep the bot in the room nor count
/// as having come.
public struct SessionLifecycle: Sendable, Equatable {
    /// The settings the rules use. Each default is the settings table's (``Settings/Record``),
    /// so a run that sets nothing behaves as a config file that sets nothing.
    public struct Rules: Sendable, Equatable {
        /// Leave after this many seconds (`--duration`, `record.max_duration`); nil = no limit.
        public var duration: Double? = Self.positive(Settings.Record.maxDuration.builtIn)
        /// Leave when no person has been here this long, once one was; 0 = never.
        public var aloneTimeout: Double = Settings.Record.aloneTimeout.builtIn
        /// Leave with `nobody_came` when no person came within this many seconds; nil = wait.
        public var waitForParticipants: Double? = Self.positive(Settings.Record.waitForParticipants.builtIn)
        /// Stop below this many free bytes (`record.min_free`); 0 = no check. Only when recording.
        public var minFreeBytes: Int64 = Settings.Record.minFree.builtIn
        /// Seconds between free-space samples while recording.
        public var diskCheckInterval: Double = Settings.Record.diskCheckInterval
        /// Rotate the files every this many seconds (`--split`, `record.split`); nil = never.
        /// Only when recording.
        public var split: Double? = Self.positive(Settings.Record.split.builtIn)
        /// Rotate the files when one of them reaches this many bytes (`--split-size`,
        /// `record.split_size`); 0 = no limit. Only when recording.
        public var splitBytes: Int64 = Settings.Record.splitSize.builtIn
        public init() {}

        /// The settings' "0 means never" as nil.
        static func positive(_ seconds: Double) -> Double? { seconds > 0 ? seconds : nil }
    }

    public enum Timer: String, Sendable, Hashable, CaseIterable {
        case duration, alone, waitForParticipants, diskCheck, split
    }

    public enum Input: Sendable, Equatable {
        /// The session begins (before joining).
        case started
        /// Someone came, came back, changed or left: the number of people (not bots, as
        /// ``BotRecognition`` tells them) in the room now. The lifecycle keeps no list of its
        /// own: the count is ``RoomMediaBridge/people``'s, which follows the room's events.
        case people(Int)
        case timerFired(Timer)
        case signal(Int32)
        /// The room ended for the bot (also after the bot's own leave: `.left`).
        case roomEnded(RoomDisconnectReason)
        /// The server said on topic `system` that the meeting is over (`room_ended`,
        /// `room_closed`, `room_archived`, `room_deleted`), with its own words.
        case roomEndNotice(event: String, message: String)
        /// A free-space sample of the recording folder's file system.
        case diskFree(bytes: Int64)
        /// A write to the session folder failed. `noSpace`: ENOSPC or EDQUOT.
        case writeFailed(noSpace: Bool, detail: String)
        /// SIGHUP: rotate the files now.
        case hangup
        /// The size of the largest file of the segment being written (sampled while recording).
        case segmentBytes(Int64)
        /// The meeting ended during an outage and the bot, as the room's owner, started a
        /// new one: the new meeting's audio goes into new numbered files.
        case meetingRestarted
    }

    public enum Action: Sendable, Equatable {
        /// Arm (or re-arm) `timer` to fire `seconds` from now.
        case arm(Timer, seconds: Double)
        case cancel(Timer)
        /// Sample the free space and feed it back as `.diskFree`.
        case checkDisk
        /// Leave the room and finish the files; `detail` is the one line to report.
        case leave(EndReason, detail: String)
        /// End every file here and continue in the next numbered segment.
        case rotate(RotationCause)
    }

    /// How the session ended, once it did.
    public struct Ending: Sendable, Equatable {
        public var reason: EndReason
        public var exitCode: ExitCode
        public var detail: String
    }

    public let rules: Rules
    public let recording: Bool
    /// The number of people (not bots) in the room now, as last told by ``Input/people(_:)``.
    public private(set) var people = 0
    /// Whether a person was ever here.
    public private(set) var somebodyCame = false
    /// The stop cause, once one was decided.
    public var stopReason: EndReason? { stop?.reason }
    public private(set) var ending: Ending?
    /// The most recent free-space sample.
    public private(set) var lastFreeBytes: Int64?
    private var stop: Stop?
    private var deadlines: [Timer: Double] = [:]
    private var now: Double = 0
    /// Rotations so far, and when the last one was asked for.
    public private(set) var rotations = 0
    private var lastRotation: Double?
    /// A size sample this soon after a rotation may still be of the old segment: not used.
    static let sizeSettleSeconds = 1.5

    struct Stop: Sendable, Equatable {
        var reason: EndReason
        var detail: String
    }

    public init(rules: Rules, recording: Bool) {
        self.rules = rules
        self.recording = recording
    }

    /// Whether a stop was decided (the bot is leaving or has left).
    public var isStopping: Bool { stop != nil || ending != nil }

    public mutating func handle(_ input: Input, at now: Double) -> [Action] {
        self.now = now
        guard ending == nil else { return [] }
        switch input {
        case .started:
            var out: [Action] = []
            if let d = rules.duration { out += arm(.duration, d) }
            if let w = rules.waitForParticipants, !somebodyCame { out += arm(.waitForParticipants, w) }
            if checksDisk { out += [.checkDisk] + arm(.diskCheck, rules.diskCheckInterval) }
            if recording, let split = rules.split { out += arm(.split, split) }
            return out
        case .people(let count):
            let before = people
            people = max(0, count)
            if people > 0 {
                somebodyCame = true
                return cancel(.alone) + cancel(.waitForParticipants)
            }
            return before > 0 ? personLeft() : []
        case .timerFired(let timer):
            // A timer that was cancelled or re-armed after it was scheduled fires late: ignored.
            guard let deadline = deadlines[timer], now >= deadline - 0.001 else { return [] }
            deadlines[timer] = nil
            switch timer {
            case .duration:
                return leave(.duration, "duration of \(ConfigValues.formatDuration(rules.duration ?? 0)) reached")
            case .alone:
                guard people == 0, somebodyCame else { return [] }
                return leave(.alone, "everyone else left (alone for \(ConfigValues.formatDuration(rules.aloneTimeout)))")
            case .waitForParticipants:
                guard !somebodyCame else { return [] }
                return leave(.nobodyCame, "nobody came within \(ConfigValues.formatDuration(rules.waitForParticipants ?? 0))")
            case .diskCheck:
                guard checksDisk, stop == nil else { return [] }
                return [.checkDisk] + arm(.diskCheck, rules.diskCheckInterval)
            case .split:
                return rotate(.duration)
            }
        case .hangup:
            return rotate(.signal)
        case .meetingRestarted:
            return rotate(.meetingRestarted)
        case .segmentBytes(let bytes):
            guard rules.splitBytes > 0, bytes >= rules.splitBytes else { return [] }
            if let last = lastRotation, now - last < Self.sizeSettleSeconds { return [] }
            return rotate(.size)
        case .signal(let sig):
            return leave(.signal, sig == 2 ? "interrupted (Ctrl-C)" : "terminated (SIGTERM)")
        case .diskFree(let bytes):
            lastFreeBytes = bytes
            guard checksDisk, bytes < rules.minFreeBytes else { return [] }
            return leave(.diskLow, "only \(Self.formatBytes(bytes)) free on the recording disk, below record.min_free (\(Self.formatBytes(rules.minFreeBytes)))")
        case .roomEndNotice(let event, let message):
            // The server's words, made safe for a terminal line and the summary, and bounded.
            let text = TerminalText.sanitize(String(message.prefix(Self.maxNoticeCharacters)))
            return leave(.roomEnded, "the server ended the meeting (\(TerminalText.sanitize(String(event.prefix(40)))))" + (text.isEmpty ? "" : ": \(text)"))
        case .writeFailed(let noSpace, let detail):
            return noSpace ? leave(.diskFull, "the recording disk is full: \(detail)") : leave(.writeError, "a recording write failed: \(detail)")
        case .roomEnded(let reason):
            ending = Self.ending(reason, stop: stop)
            return Timer.allCases.flatMap { cancel($0) }
        }
    }

    /// Characters of a server's room-end text kept in the summary.
    static let maxNoticeCharacters = 300

    private var checksDisk: Bool { recording && rules.minFreeBytes > 0 }

    /// Every rotation starts a new `--split` period: no segment is longer than it.
    private mutating func rotate(_ cause: RotationCause) -> [Action] {
        guard recording, stop == nil else { return [] }
        rotations += 1
        lastRotation = now
        return [.rotate(cause)] + (rules.split.map { arm(.split, $0) } ?? [])
    }

    private mutating func personLeft() -> [Action] {
        guard people == 0, somebodyCame, rules.aloneTimeout > 0, stop == nil else { return [] }
        return arm(.alone, rules.aloneTimeout)
    }

    private mutating func arm(_ timer: Timer, _ seconds: Double) -> [Action] {
        deadlines[timer] = now + seconds
        return [.arm(timer, seconds: seconds)]
    }

    private mutating func cancel(_ timer: Timer) -> [Action] {
        guard deadlines.removeValue(forKey: timer) != nil else { return [] }
        return [.cancel(timer)]
    }

    private mutating func leave(_ reason: EndReason, _ detail: String) -> [Action] {
        guard stop == nil else { return [] }  // the first cause wins
        stop = Stop(reason: reason, detail: detail)
        return Timer.allCases.flatMap { cancel($0) } + [.leave(reason, detail: detail)]
    }

    /// The end of a room, given the stop cause the bot had decided (if any).
    static func ending(_ reason: RoomDisconnectReason, stop: Stop?) -> Ending {
        if reason == .left, let stop {
            return Ending(reason: stop.reason, exitCode: stop.reason.exitCode, detail: stop.detail)
        }
        return Ending(reason: EndReason(reason), exitCode: reason.exitCode, detail: RoomEventFormatter.explain(reason))
    }

    static func formatBytes(_ n: Int64) -> String {
        if n >= 1 << 30 { return String(cFormat: "%.1f GiB", Double(n) / Double(1 << 30)) }
        if n >= 1 << 20 { return String(cFormat: "%.1f MiB", Double(n) / Double(1 << 20)) }
        if n >= 1 << 10 { return String(cFormat: "%.0f KiB", Double(n) / Double(1 << 10)) }
        return "\(n) bytes"
    }
}
