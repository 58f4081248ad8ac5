import BedrudCore
import BedrudProtocol
import FoundationEssentials

/// `bedrud-bot rooms list|create|delete|settings`.
enum RoomCommands {
    static let spec = CommandSpec(
        "rooms", summary: "list, create, delete and configure your rooms",
        subcommands: [list, create, delete, settings])

    static let list = CommandSpec(
        "list", summary: "list the rooms you created",
        options: [OptionGroups.tableJSON.spec],
        action: runList)

    static let create = CommandSpec(
        "create", summary: "create a room (a name is generated when none is given)",
        discussion: """
            Room names are 3-63 lowercase letters, digits and single hyphens.

            Examples:
              bedrud-bot rooms create standup --public
              bedrud-bot rooms create --max 0        # generated name, no participant limit
            """,
        arguments: [ArgumentSpec("NAME", optional: true, help: "the room name")],
        options: [
            CreateOptions.isPublic.spec,
            CreateOptions.max.spec,
            CreateOptions.mode.spec,
            CreateOptions.json.spec,
        ],
        action: runCreate)

    /// Declared once: the spec lists them and the command reads them through these.
    enum CreateOptions {
        static let isPublic = Flag("public", help: "Let people without an account join as guests.")
        static let max = ValueOption("max", value: "N", help: "Participant limit; 0 means none. (Bedrud's default is 20 and counts everyone who ever joined.)")
        static let mode = ValueOption("mode", value: "MODE", help: "Room mode (default: standard).")
        static let json = Flag("json", help: "Print the instance, the meeting link and the room as JSON.")
    }

    static let delete = CommandSpec(
        "delete", summary: "delete a room you created (everyone in it is disconnected)",
        arguments: [ArgumentSpec("ROOM", help: "room name or id")],
        action: runDelete)

    static let settings = CommandSpec(
        "settings", summary: "show or change a room's settings",
        discussion: """
            With no options, prints the current settings. Only the room's creator (or a superadmin)
            may change them. Bedrud replaces the whole settings object on every change, so the
            bot sends back every setting it read, changed ones and unknown ones alike.
            --recordings-allowed no makes every 'join --record' into the room refuse (exit 6),
            whoever runs the bot. A private room (--public no) admits only its creator and
            people already in the meeting.

            Example:
              bedrud-bot rooms settings standup --max 0 --public yes
              bedrud-bot rooms settings standup --recordings-allowed no
            """,
        arguments: [ArgumentSpec("ROOM", help: "room name or id")],
        options: [
            SettingsOptions.isPublic.spec,
            SettingsOptions.max.spec,
            SettingsOptions.chat.spec,
            SettingsOptions.video.spec,
            SettingsOptions.audio.spec,
            SettingsOptions.requireApproval.spec,
            SettingsOptions.e2ee.spec,
            SettingsOptions.recordingsAllowed.spec,
            SettingsOptions.json.spec,
        ],
        action: runSettings)

    /// Declared once: the spec lists them and the command reads them through these.
    enum SettingsOptions {
        static let isPublic = ValueOption("public", value: "yes|no", help: "Allow guest joins.")
        static let max = ValueOption("max", value: "N", help: "Participant limit; 0 means none.")
        static let chat = ValueOption("chat", value: "yes|no", help: "allowChat")
        static let video = ValueOption("video", value: "yes|no", help: "allowVideo")
        static let audio = ValueOption("audio", value: "yes|no", help: "allowAudio")
        static let requireApproval = ValueOption("require-approval", value: "yes|no", help: "requireApproval")
        static let e2ee = ValueOption("e2ee", value: "yes|no", help: "e2ee")
        static let recordingsAllowed = ValueOption("recordings-allowed", value: "yes|no", help: "recordingsAllowed: whether 'join --record' may record the room.")
        static let json = Flag("json", help: "Print the room as JSON.")
    }

    static func roomAPI(_ ctx: BotContext) throws -> (RoomAPI, ResolvedInstance) {
        let inst = try ctx.instance()
        return (RoomAPI(auth: try ctx.authManager(for: inst)), inst)
    }

    /// Runs a room call; Bedrud v0.12.0's 403 for guest accounts (middleware `RejectGuest`
    /// on create, list, settings and delete; handlers/room.go:335-337) becomes a line that
    /// says what to do.
    static func managing<T>(_ inst: ResolvedInstance, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let e as APIError where e.code == .forbidden && e.message.lowercased().contains("guest") {
            throw CommandFailure(.forbidden, "instance '\(inst.name)' is logged in as a Bedrud guest, and Bedrud does not let guests create, list, change or delete rooms: "
                + "log in with an account ('bedrud-bot login --email ADDRESS')")
        }
    }

    static func printJSON<T: Encodable>(_ v: T, _ console: Console) throws {
        try JSONOutput.print(v, to: console)
    }

    /// `rooms create --json`: the room as Bedrud returned it, with the link people join by.
    struct CreatedRoomJSON: Encodable {
        var instance: String
        var meetingLink: String
        var room: Room

        enum CodingKeys: String, CodingKey {
            case instance, room
            case meetingLink = "meeting_link"
        }
    }

    /// The web client's link to a room: `https://host/m/ROOM`.
    static func meetingLink(_ inst: ResolvedInstance, _ room: Room) -> String { "\(inst.url.origin)/m/\(room.name)" }

    static func runList(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        let (api, inst) = try roomAPI(ctx)
        let rooms = try await managing(inst) { try await api.list() }
        if inv[OptionGroups.tableJSON] {
            try printJSON(rooms, inv.console)
            return .success
        }
        if rooms.isEmpty {
            inv.console.out("You have no rooms on \(inst.name). Create one with: bedrud-bot rooms create NAME")
            return .success
        }
        let w = max(4, rooms.map(\.name.count).max() ?? 0) + 2
        inv.console.out("NAME".padded(to: w) + "ID".padded(to: 38) + "PUBLIC  ACTIVE  RECORD  MAX")
        for r in rooms {
            inv.console.out(r.name.padded(to: w) + r.id.padded(to: 38) + yesNo(r.isPublic).padded(to: 8) + yesNo(r.isActive).padded(to: 8)
                + recordable(r.settings).padded(to: 8) + (r.maxParticipants.map(String.init) ?? "-"))
        }
        return .success
    }

    static func yesNo(_ b: Bool?) -> String { b.map { $0 ? "yes" : "no" } ?? "-" }

    /// `recordingsAllowed` for the table: yes, no, or "-" when the server has no such setting.
    static func recordable(_ settings: RoomSettings?) -> String { yesNo(settings?.recordingsAllowed) }

    static func runCreate(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        let name = inv.positionals.first
        if let name, let problem = RoomName.problem(with: name) {
            throw CommandFailure(.usage, "invalid room name '\(name)': \(problem)")
        }
        var max: Int?
        if let m = inv[CreateOptions.max] {
            guard let v = Int(m), v >= 0 else { throw CommandFailure(.usage, "--max expects a number of participants (0 for no limit), got '\(m)'") }
            max = v
        }
        let (api, inst) = try roomAPI(ctx)
        // v0.12.0 reads a missing settings key as false (chat, audio and video off) and
        // turns recordingsAllowed on for every new room (handlers/room.go:297-298).
        let room = try await managing(inst) {
            try await api.create(name: name, isPublic: inv[CreateOptions.isPublic] ? true : nil, maxParticipants: max, mode: inv[CreateOptions.mode], settings: .default)
        }
        if inv[CreateOptions.json] {
            try printJSON(CreatedRoomJSON(instance: inst.name, meetingLink: meetingLink(inst, room), room: room), inv.console)
        } else {
            inv.console.out("Created room '\(room.name)' (id \(room.id)). Meeting link: \(meetingLink(inst, room))")
        }
        return .success
    }

    /// Finds one of the caller's rooms by name or id.
    /// - Parameter purpose: what the caller wants to do, for the message when it is not found.
    static func findRoom(_ api: RoomAPI, _ key: String, to purpose: String) async throws -> Room {
        let rooms = try await api.list()
        let k = RoomName.normalize(key)
        if let r = rooms.first(where: { $0.id == key || $0.name == k }) { return r }
        throw CommandFailure(.notFound, "you have no room named '\(TerminalText.quoted(key))': Bedrud lets only a room's creator \(purpose) (your rooms: 'bedrud-bot rooms list')")
    }

    static func runDelete(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        let (api, inst) = try roomAPI(ctx)
        let room = try await managing(inst) { try await findRoom(api, inv.positionals[0], to: "delete it") }
        do {
            try await managing(inst) { try await api.delete(roomID: room.id) }
        } catch let e as APIError where e.status == 409 && e.message.lowercased().contains("deletion already in progress") {
            // Bedrud after PR #107 (room.go, --room-delete-dedupe in the devserver): an
            // earlier delete of the room is queued. The room goes all the same.
            inv.console.out("Room '\(room.name)' is being deleted already (an earlier delete is queued).")
            return .success
        }
        inv.console.out("Deleted room '\(room.name)'.")
        return .success
    }

    static func runSettings(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        let (api, inst) = try roomAPI(ctx)
        typealias O = SettingsOptions
        let changing = [O.isPublic, O.max, O.chat, O.video, O.audio, O.requireApproval, O.e2ee, O.recordingsAllowed].contains { inv[$0] != nil }
        var room = try await managing(inst) { try await findRoom(api, inv.positionals[0], to: changing ? "change its settings" : "see its settings") }
        func bool(_ option: ValueOption) throws -> Bool? {
            guard let v = inv[option] else { return nil }
            guard let b = ConfigValues.bool(v) else { throw CommandFailure(.usage, "--\(option.name) expects yes or no, got '\(v)'") }
            return b
        }
        let isPublic = try bool(O.isPublic)
        var max: Int?
        if let m = inv[SettingsOptions.max] {
            guard let v = Int(m), v >= 0 else { throw CommandFailure(.usage, "--max expects a number (0 for no limit), got '\(m)'") }
            max = v
        }
        var s = room.settings ?? .default
        let flags: [(ValueOption, WritableKeyPath<RoomSettings, Bool>)] = [
            (O.chat, \.allowChat), (O.video, \.allowVideo), (O.audio, \.allowAudio), (O.requireApproval, \.requireApproval), (O.e2ee, \.e2ee),
        ]
        var settingsChanged = false
        for (option, path) in flags {
            if let b = try bool(option) {
                s[keyPath: path] = b
                settingsChanged = true
            }
        }
        if let b = try bool(O.recordingsAllowed) {
            s.recordingsAllowed = b
            settingsChanged = true
        }
        if isPublic != nil || max != nil || settingsChanged {
            // The whole object as read, with the changes: Bedrud replaces it whole.
            let changed = s
            let id = room.id
            room = try await managing(inst) { try await api.updateSettings(roomID: id, isPublic: isPublic, maxParticipants: max, settings: settingsChanged ? changed : nil) }
        }
        if inv[SettingsOptions.json] {
            try printJSON(room, inv.console)
            return .success
        }
        let st = room.settings ?? .default
        inv.console.out("""
            room:             \(room.name) (id \(room.id))
            public:           \(yesNo(room.isPublic))
            max participants: \(room.maxParticipants.map { $0 == 0 ? "no limit" : String($0) } ?? "-")
            chat:             \(yesNo(st.allowChat))
            video:            \(yesNo(st.allowVideo))
            audio:            \(yesNo(st.allowAudio))
            require approval: \(yesNo(st.requireApproval))
            e2ee:             \(yesNo(st.e2ee))
            recordings:       \(st.recordingsAllowed.map { $0 ? "allowed" : "not allowed" } ?? "-")
            """)
        return .success
    }
}
