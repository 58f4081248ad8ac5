#if canImport(Glibc)
import Glibc
#endif
import BedrudCore

/// What `serve` decides, as a value: which meetings to record, from Bedrud's webhooks and
/// from reconciling against the list of active rooms. `handle` takes what happened and
/// returns what to do; the shell (``ServeRun``) starts and stops the recordings and logs.
///
/// Rules (docs/OPERATIONS.md, "Recording every meeting"):
/// - `participant.joined` for a room in the policy and this replica's shard that is not
///   being recorded starts a recording, unless it is the bot's own join.
/// - `room.ended` (Bedrud sends it only when an owner deletes the room) finishes that
///   meeting's recording at once. An idle meeting sends nothing: a recording ends as a
///   `join --record` does (alone, or the room's end over LiveKit).
/// - A reconcile lists the active rooms; each one with people in it, in the policy and
///   shard, not recorded, and allowed, is joined. `recordingsAllowed: false` is never
///   joined (said once per meeting).
/// - A room whose recording was refused (private, forbidden) or that removed the bot
///   rests for the rest of its meeting: until a reconcile sees it empty or inactive, a
///   `room.ended`, or ``restHold`` passes. A recording that ended in the ordinary way
///   rests until the next `participant.joined` or a reconcile that saw it empty, so a
///   room that still lists a departed participant is not joined again and again. No
///   room is ever left locked.
/// - At ``Policy/maxMeetings`` recordings, more wait (the next reconcile takes them).
struct ServeState: Sendable {
    struct Policy: Sendable, Equatable {
        /// Shell globs against the room's name; `*` is every room.
        var rooms: [String] = ["*"]
        var shard = ServeShard("0/1")!
        var maxMeetings = 50

        func matches(roomName: String) -> Bool {
            rooms.contains { fnmatch($0, roomName, 0) == 0 }
        }
    }

    /// How long a refused or removed room rests at most when nothing says its meeting
    /// ended (no superadmin account to reconcile with): ten minutes.
    static let restHold: Double = 600

    enum Cause: String, Sendable, Equatable { case webhook, reconcile }

    struct Meeting: Sendable, Equatable {
        var roomID: String
        var roomName: String
        var cause: Cause
    }

    /// How a recording ended, as the shell saw it.
    enum Result: Sendable, Equatable {
        /// The session ran and ended (any end reason but removal).
        case finished(reason: String)
        /// The bot was removed (kicked, banned, room deleted, replaced).
        case removed(reason: String)
        /// The join was refused for this meeting: a private room, recording not allowed.
        case refused(reason: String)
        /// Any other failure (network, server): the next webhook or reconcile tries again.
        case failed(reason: String)
    }

    enum Input: Sendable, Equatable {
        /// The bot's own user id, once logged in: its own joins fire webhooks too.
        case loggedIn(userID: String)
        case webhook(WebhookEnvelope)
        /// The active rooms (`GET /api/admin/rooms?status=active`).
        case reconciled([AdminRoom])
        case recordingEnded(roomID: String, Result)
        case stop
    }

    enum Action: Sendable, Equatable {
        case record(Meeting)
        /// Finish this room's recording now (`room.ended`).
        case finish(roomID: String)
        /// Finish every recording and stop taking new ones.
        case finishAll
        /// A line for the log, said once per fact.
        case note(String)
    }

    /// Why a room is not joined now.
    enum Rest: Sendable, Equatable {
        /// Its recording ended in the ordinary way; a new join or an empty room wakes it.
        case ended(until: Double)
        /// Refused or removed: only the end of its meeting (or the hold) wakes it.
        case refused(until: Double)
    }

    /// Counted decisions, for /metrics.
    struct Counts: Sendable, Equatable {
        var webhooks: [String: Int] = [:]
        var ignoredOwnJoin = 0
        var outOfShard = 0
        var notInPolicy = 0
        var notAllowed = 0
        var atCapacity = 0
        var resting = 0
        var reconcileRuns = 0
        var started: [Cause: Int] = [:]
        var finished: [String: Int] = [:]
        var failed: [String: Int] = [:]
    }

    var policy: Policy
    private(set) var myUserID: String?
    private(set) var recording: [String: Meeting] = [:]
    private(set) var resting: [String: Rest] = [:]
    /// Rooms already said to not allow recording, this meeting.
    private var notAllowedSaid: Set<String> = []
    private var capacitySaid: Set<String> = []
    private(set) var stopping = false
    private(set) var counts = Counts()

    init(policy: Policy) { self.policy = policy }

    mutating func handle(_ input: Input, at now: Double) -> [Action] {
        switch input {
        case .loggedIn(let id):
            myUserID = id
            return []
        case .webhook(let e):
            counts.webhooks[e.event, default: 0] += 1
            return webhook(e, at: now)
        case .reconciled(let rooms):
            counts.reconcileRuns += 1
            return reconcile(rooms, at: now)
        case .recordingEnded(let id, let result):
            guard recording.removeValue(forKey: id) != nil else { return [] }
            capacitySaid.removeAll()
            switch result {
            case .finished(let reason):
                counts.finished[reason, default: 0] += 1
                resting[id] = .ended(until: now + Self.restHold)
            case .removed(let reason):
                counts.finished[reason, default: 0] += 1
                resting[id] = .refused(until: now + Self.restHold)
            case .refused(let reason):
                counts.failed[reason, default: 0] += 1
                resting[id] = .refused(until: now + Self.restHold)
            case .failed(let reason):
                counts.failed[reason, default: 0] += 1
            }
            return []
        case .stop:
            guard !stopping else { return [] }
            stopping = true
            return [.finishAll]
        }
    }

    // MARK: - Webhooks

    private mutating func webhook(_ e: WebhookEnvelope, at now: Double) -> [Action] {
        guard !stopping, let kind = e.kind, let id = e.data.roomId, !id.isEmpty else { return [] }
        switch kind {
        case .participantJoined:
            if let me = myUserID, e.data.userId == me {
                counts.ignoredOwnJoin += 1
                return []
            }
            let name = e.data.roomName ?? ""
            if case .ended = resting[id] { resting[id] = nil }  // someone came: a meeting to record
            return consider(roomID: id, roomName: name, cause: .webhook, at: now)
        case .roomEnded:
            resting[id] = nil
            notAllowedSaid.remove(id)
            return recording[id] == nil ? [] : [.finish(roomID: id)]
        case .roomCreated, .recordingCompleted, .ping:
            return []
        }
    }

    // MARK: - Reconcile

    private mutating func reconcile(_ rooms: [AdminRoom], at now: Double) -> [Action] {
        guard !stopping else { return [] }
        let busy = Set(rooms.filter { $0.isActive && $0.participantsCount > 0 }.map(\.id))
        // A room that is empty or gone has ended its meeting: whatever rested wakes.
        for id in resting.keys where !busy.contains(id) { resting[id] = nil }
        notAllowedSaid = notAllowedSaid.intersection(busy)
        var actions: [Action] = []
        for room in rooms where busy.contains(room.id) {
            if room.settings?.recordingsAllowed == false {
                guard recording[room.id] == nil, policy.shard.owns(roomID: room.id), policy.matches(roomName: room.name) else { continue }
                counts.notAllowed += 1
                if notAllowedSaid.insert(room.id).inserted {
                    actions.append(.note("Not recording '\(room.name)': its owner does not allow recording (recordingsAllowed is off)."))
                }
                continue
            }
            actions += consider(roomID: room.id, roomName: room.name, cause: .reconcile, at: now)
        }
        return actions
    }

    // MARK: - One room

    private mutating func consider(roomID id: String, roomName name: String, cause: Cause, at now: Double) -> [Action] {
        guard recording[id] == nil else { return [] }
        guard policy.shard.owns(roomID: id) else {
            counts.outOfShard += 1
            return []
        }
        guard policy.matches(roomName: name) else {
            counts.notInPolicy += 1
            return []
        }
        if let rest = resting[id] {
            switch rest {
            case .ended(let until), .refused(let until):
                if now < until {
                    counts.resting += 1
                    return []
                }
                resting[id] = nil
            }
        }
        guard recording.count < policy.maxMeetings else {
            counts.atCapacity += 1
            return capacitySaid.insert(id).inserted
                ? [.note("Not recording '\(name)' yet: \(policy.maxMeetings) meetings are being recorded (serve.max_meetings).")] : []
        }
        let meeting = Meeting(roomID: id, roomName: name, cause: cause)
        recording[id] = meeting
        counts.started[cause, default: 0] += 1
        return [.record(meeting)]
    }
}
