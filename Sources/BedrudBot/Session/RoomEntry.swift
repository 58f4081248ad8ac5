import BedrudCore
import BedrudProtocol

/// How `join` gets from a room name to a LiveKit token under Bedrud v0.12.0's rules, as a
/// pure value: it is told what `/room/join` (and `/room/create`) answered and says what to
/// do next. ``JoinPlan`` performs the actions.
///
/// - An active room: enter it — unless the run records and the room's settings say
///   `recordingsAllowed: false`, which refuses before the media connection (exit 6).
/// - The meeting has ended and the bot's account created the room (200 `archived_owned`,
///   handlers/room.go:436-444): start a new meeting the way the web client does
///   (`apps/web/src/routes/m.$meetId.tsx` "Start new meeting": create with the same name,
///   mode and settings, then join) — once; `--no-recreate` refuses (or waits) instead.
/// - The meeting has ended for anyone else (410, room.go:445), or there is no such room
///   yet (404): exit 5 with a line that says who can start it, or with `--wait-for-room`
///   ask again at a polite interval until the deadline.
/// - 429: wait as `Retry-After` says (or the poll interval), never sooner.
/// - 403: one line that says what would let the bot in (exit 6).
struct RoomEntry: Sendable {
    struct Rules: Sendable {
        /// Start a new meeting when the bot's account owns the ended one (`--no-recreate` clears it).
        var recreate = true
        /// `--wait-for-room`: how long to keep asking for an ended or missing room; nil = not at all.
        var waitForRoom: Double?
        /// `--record`: refuse a room whose owner does not allow recording.
        var record = false
        /// `--dry-run`: change nothing on the server (an ended meeting is not started again).
        var dryRun = false
    }

    /// What the server answered to one `/room/join`.
    enum Answer: Sendable {
        case joined(JoinRoomResponse)
        case archivedOwned(ArchivedRoom)
        /// 410 "room is no longer active".
        case ended
        /// 404 "Room not found".
        case notFound
        /// 429, with `Retry-After` in seconds when given.
        case rateLimited(retryAfter: Double?)
        /// 403 with the server's text.
        case forbidden(String)
    }

    enum Input: Sendable {
        case start
        case joinAnswered(Answer)
        /// `/room/create` made the new meeting.
        case created
        /// `/room/create` answered 409: someone started the meeting meanwhile.
        case createConflict
        /// The wait asked for by `.wait` is over.
        case waited
    }

    enum Action: Sendable {
        case requestJoin
        case create(ArchivedRoom)
        /// Ask again after this many seconds.
        case wait(seconds: Double)
        /// One line for the person or the log.
        case say(String)
        /// Connect with this answer.
        case enter(JoinRoomResponse)
        case fail(ExitCode, String)
    }

    let room: String
    let rules: Rules
    private(set) var recreated = false
    private var waitStartedAt: Double?
    private var rateLimited = 0
    private var saidWaiting = false
    private(set) var finished = false

    init(room: String, rules: Rules) {
        self.room = RoomName.normalize(room)
        self.rules = rules
    }

    /// The polite interval between two questions: every 5 s for the first minute, every
    /// 15 s until ten minutes, then every 30 s (a cron job may wait an hour).
    static func pollInterval(waitedSeconds: Double) -> Double {
        waitedSeconds < 60 ? 5 : waitedSeconds < 600 ? 15 : 30
    }

    /// The line for a room whose meeting has ended, for someone who cannot start it.
    static func endedLine(_ room: String) -> String {
        "the meeting in '\(room)' has ended; it comes back when its owner starts it"
    }

    mutating func handle(_ input: Input, at now: Double) -> [Action] {
        guard !finished else { return [] }
        switch input {
        case .start, .waited:
            return [.requestJoin]
        case .created:
            return [.requestJoin]
        case .createConflict:
            // Someone (the owner in the web client, another bot) started it first: join theirs.
            return [.requestJoin]
        case .joinAnswered(let answer):
            return answered(answer, at: now)
        }
    }

    private mutating func answered(_ answer: Answer, at now: Double) -> [Action] {
        switch answer {
        case .joined(let r):
            if rules.record, r.room.settings?.recordingsAllowed == false {
                return fail(.forbidden, "the owner of '\(room)' does not allow recording in it (the room's recordingsAllowed setting is off): "
                    + "join without --record, or ask them to allow it ('bedrud-bot rooms settings \(room) --recordings-allowed yes')")
            }
            finished = true
            return [.enter(r)]
        case .archivedOwned(let archived):
            if rules.recreate && rules.dryRun {
                return fail(.notFound, "the meeting in '\(room)' has ended; without --dry-run the bot would start a new one as the room's owner")
            }
            if rules.recreate && !recreated {
                recreated = true
                return [.say("The meeting in '\(room)' had ended; starting a new one as its owner (same name, mode and settings)."), .create(archived)]
            }
            if recreated {
                return fail(.server, "the server still says the meeting in '\(room)' has ended right after a new one was started; try again later")
            }
            return waitOr(at: now, failing: "the meeting in '\(room)' has ended; as its owner, start it again in Bedrud or run without --no-recreate")
        case .ended:
            return waitOr(at: now, failing: Self.endedLine(room) + (rules.waitForRoom == nil ? " (--wait-for-room DURATION waits for that)" : ""))
        case .notFound:
            return waitOr(at: now, failing: "there is no room '\(room)' on this server (check the name; 'bedrud-bot rooms list' shows your own rooms)",
                          waiting: "there is no room '\(room)' yet")
        case .rateLimited(let retryAfter):
            // As long as the server asks (capped at 5 min), and never sooner than the poll
            // interval; three times at most unless --wait-for-room allows longer.
            let delay = min(300, max(retryAfter ?? 0, Self.pollInterval(waitedSeconds: now - (waitStartedAt ?? now))))
            rateLimited += 1
            let withinWait = rules.waitForRoom.map { now + delay <= (waitStartedAt ?? now) + $0 } ?? false
            guard withinWait || rateLimited <= 3 else {
                return fail(.rejected, "the server kept answering 'too many requests' (429) for '\(room)'; try again later")
            }
            return [.say("The server asks the bot to slow down (429); asking again in \(ConfigValues.formatDuration(delay.rounded(.up))).")]
                + [.wait(seconds: delay)]
        case .forbidden(let text):
            return fail(.forbidden, Self.forbiddenLine(room: room, serverText: text))
        }
    }

    /// Waits (with `--wait-for-room`, until its deadline) or fails with `line`.
    private mutating func waitOr(at now: Double, failing line: String, waiting what: String? = nil) -> [Action] {
        guard let limit = rules.waitForRoom else { return fail(.notFound, line) }
        let started = waitStartedAt ?? now
        waitStartedAt = started
        let waited = now - started
        if waited >= limit {
            return fail(.notFound, "waited \(ConfigValues.formatDuration(limit.rounded())) for '\(room)': " + line)
        }
        let delay = min(Self.pollInterval(waitedSeconds: waited), limit - waited)
        var actions: [Action] = []
        if !saidWaiting {
            saidWaiting = true
            let why = what ?? "the meeting in '\(room)' has ended"
            actions.append(.say("Waiting up to \(ConfigValues.formatDuration(limit.rounded())) for '\(room)' (\(why)): asking the server again every few seconds."))
        }
        return actions + [.wait(seconds: delay)]
    }

    private mutating func fail(_ code: ExitCode, _ line: String) -> [Action] {
        finished = true
        return [.fail(code, line)]
    }

    /// Bedrud's 403s for `/room/join` as one line that says what would let the bot in.
    static func forbiddenLine(room: String, serverText text: String) -> String {
        let clean = TerminalText.sanitize(String(text.prefix(200)))
        switch text.lowercased() {
        case let t where t.contains("requires approval"):
            return "'\(room)' is a private room that requires approval, and Bedrud has no approval flow a bot can use: "
                + "only the account that created the room, or someone already in the meeting, gets in. Join with the creator's account"
        case let t where t.contains("private"):
            return "'\(room)' is a private room: Bedrud admits only the account that created it and people already in the meeting "
                + "(and nobody can ask to be let in). Join with the creator's account, or ask the owner to make the room public"
        case let t where t.contains("banned"):
            return "the bot's account is banned from '\(room)' (the server said: \(clean))"
        case let t where t.contains("full"):
            return "'\(room)' is full (the server said: \(clean)); its owner can raise the limit ('bedrud-bot rooms settings \(room) --max N')"
        default:
            return "the server does not let the bot into '\(room)': \(clean)"
        }
    }
}
