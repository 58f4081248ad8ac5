import BedrudCore
import BedrudMedia
import BedrudNet
import BedrudProtocol
import BedrudRuntime
import FoundationEssentials
import Dispatch
import Glibc

/// How `join` gets into a room: which server, which account, which room.
struct JoinPlan: Sendable {
    var instance: ResolvedInstance
    var roomName: String
    var auth: AuthManager
    /// True when logged in as a throwaway guest because no instance matched a link.
    var isThrowawayGuest: Bool
    /// What to do with an ended meeting, a missing room and a room that forbids recording.
    var entryRules = RoomEntry.Rules()

    /// Resolves `ROOM|LINK`: a link whose server is a configured instance uses that
    /// instance's account; a link to any other server logs in as a guest there (like the
    /// iOS app's join-by-link); a bare name uses the selected instance.
    static func make(_ ctx: BotContext, target text: String) throws -> JoinPlan {
        guard let target = MeetingTarget(text) else {
            throw CommandFailure(.usage, "'\(text)' is neither a room name nor a meeting link like https://meet.example.com/m/ROOM")
        }
        switch target {
        case .roomName(let room):
            let inst = try ctx.instance()
            return JoinPlan(instance: inst, roomName: room, auth: try ctx.authManager(for: inst), isThrowawayGuest: false)
        case .link(let server, let room):
            if let match = ctx.config.instance(matching: server) {
                let inst = try ctx.instance(named: match.name)
                return JoinPlan(instance: inst, roomName: room, auth: try ctx.authManager(for: inst), isThrowawayGuest: false)
            }
            let tls = try OptionGroups.tls(from: ctx.invocation)
            let guestName = ctx.invocation[OptionGroups.guestName] ?? OptionGroups.defaultGuestName
            let inst = ResolvedInstance(name: "link-\(InstanceCommands.defaultName(for: server))", url: server, displayName: nil, email: nil,
                                        passwordFile: nil, guestName: guestName, tls: tls, isAdHoc: true, origins: [:])
            ctx.warnIfInsecure(inst)
            let api = try ctx.apiClient(for: inst)
            let auth = AuthManager(instanceKey: inst.name, api: api, store: MemoryCredentialStore(), fallbackLogin: .guest(name: guestName),
                                   now: { Date().timeIntervalSince1970 })
            return JoinPlan(instance: inst, roomName: room, auth: auth, isThrowawayGuest: true)
        }
    }

    /// Asks Bedrud for a LiveKit token (`POST /room/join`), logging in first if needed, and
    /// follows v0.12.0's rules on the way (``RoomEntry``): starts an ended meeting again as
    /// its owner, waits for one with `--wait-for-room`, refuses a room that forbids
    /// recording. Lines for the person go to `console`.
    func requestToken(console: Console? = nil) async throws -> JoinRoomResponse {
        var entry = RoomEntry(room: roomName, rules: entryRules)
        var inputs: [RoomEntry.Input] = [.start]
        while !inputs.isEmpty {
            let input = inputs.removeFirst()
            for action in entry.handle(input, at: Self.now()) {
                switch action {
                case .requestJoin:
                    inputs.append(.joinAnswered(try await askToJoin()))
                case .create(let archived):
                    inputs.append(try await startMeeting(archived))
                case .wait(let seconds):
                    try await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
                    inputs.append(.waited)
                case .say(let line):
                    console?.note(line)
                case .enter(let join):
                    return join
                case .fail(let code, let line):
                    throw CommandFailure(code, line)
                }
            }
        }
        throw CommandFailure(.failure, "joining '\(roomName)' stopped without an answer")  // not reached: every answer ends or asks again
    }

    static func now() -> Double { Double(MonotonicClock.nanos()) / 1e9 }

    /// One `/room/join`, its refusals turned into ``RoomEntry/Answer``s (other errors are thrown).
    private func askToJoin() async throws -> RoomEntry.Answer {
        do {
            switch try await RoomAPI(auth: auth).join(roomName: roomName) {
            case .joined(let r): return .joined(r)
            case .archivedOwned(let a): return .archivedOwned(a)
            }
        } catch let e as APIError {
            switch e.code {
            case .gone: return .ended
            case .notFound: return .notFound
            case .rateLimited: return .rateLimited(retryAfter: e.retryAfter)
            case .forbidden where !e.needsEmailVerification: return .forbidden(e.message)
            default: throw e
            }
        }
    }

    /// "Start new meeting" as the web client does it: `/room/create` with the ended
    /// meeting's name, mode and settings (all of them, unknown keys included). The web
    /// client sends no `isPublic`, which would make a public room private; the bot keeps
    /// the old room's visibility when its room list still shows it.
    private func startMeeting(_ archived: ArchivedRoom) async throws -> RoomEntry.Input {
        let api = RoomAPI(auth: auth)
        let old = try? await api.list().first { $0.name == archived.name }
        let settings = archived.settings ?? old?.settings
        let room: Room
        do {
            room = try await api.create(name: archived.name, isPublic: old?.isPublic, maxParticipants: nil, mode: archived.mode, settings: settings)
        } catch let e as APIError where e.code == .conflict {
            return .createConflict
        }
        // v0.12.0's create turns recordingsAllowed on whatever was sent (handlers/room.go:297-298):
        // an owner who had turned it off gets the same settings back, as the web client means.
        if let settings, settings.recordingsAllowed == false, room.settings?.recordingsAllowed != false {
            _ = try await api.updateSettings(roomID: room.id, isPublic: nil, maxParticipants: nil, settings: settings)
        }
        return .created
    }

    /// A fresh LiveKit token for a full rejoin: `POST /room/refresh-token` (no capacity
    /// count, no join webhook). When the meeting ended during the outage (410), the
    /// room's owner starts a new one (unless `--no-recreate`) and `onRecreated` is called
    /// before the token is returned; anyone else's session ends as "room ended". A 403
    /// (a private room forgets a participant who dropped) ends it with that reason.
    func rejoinToken(onRecreated: @Sendable () -> Void) async throws -> String {
        do {
            return try await RoomAPI(auth: auth).refreshToken(roomName: roomName)
        } catch let e as APIError where e.code == .gone {
            // Only /room/join tells the owner apart (archived_owned); others get 410 again.
            let answer: JoinAnswer
            do {
                answer = try await RoomAPI(auth: auth).join(roomName: roomName)
            } catch let e as APIError where e.code == .gone {
                throw JoinTokenRefusal(.roomEnded, "the meeting in '\(RoomName.normalize(roomName))' ended while the bot was disconnected; it comes back when its owner starts it")
            }
            switch answer {
            case .joined(let r):
                return r.token  // started again meanwhile
            case .archivedOwned(let archived):
                guard entryRules.recreate else {
                    throw JoinTokenRefusal(.roomEnded, "the meeting in '\(RoomName.normalize(roomName))' ended while the bot was disconnected (--no-recreate: not starting a new one)")
                }
                _ = try await startMeeting(archived)
                guard case .joined(let r) = try await RoomAPI(auth: auth).join(roomName: roomName) else {
                    throw JoinTokenRefusal(.roomEnded, "the meeting in '\(RoomName.normalize(roomName))' ended and could not be started again")
                }
                onRecreated()
                return r.token
            }
        } catch let e as APIError where e.code == .forbidden && !e.needsEmailVerification {
            throw JoinTokenRefusal(.forbidden, "Bedrud no longer lets the bot into '\(RoomName.normalize(roomName))' after the drop: "
                + RoomEntry.forbiddenLine(room: RoomName.normalize(roomName), serverText: e.message))
        }
    }
}
