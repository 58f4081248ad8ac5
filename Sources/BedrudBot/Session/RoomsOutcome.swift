/// The decisions of one process recording several rooms (`join A B C`), as a pure value:
/// which rooms a signal goes to, and — once every room has finished — the process's exit
/// code and the final line.
///
/// The owner (``MultiRoomRun``) feeds it what happens: a room became ready for signals
/// (its run started), a SIGINT/SIGTERM or SIGHUP for the process, a room finished with its
/// own exit code; it carries out the actions (forward a signal to a room's run, report the
/// end). A room that fails never stops the others: its end only counts.
///
/// Exit code (docs/CLI.md): 0 when every room succeeded; the rooms' shared code when every
/// room failed the same way; otherwise ``ExitCode/roomsFailed`` (16).
struct RoomsOutcome: Sendable, Equatable {
    /// How one room ended (its own exit code, as in its summary).
    struct RoomEnd: Sendable, Equatable {
        var code: ExitCode
        /// `end_reason`, or nil for a room that never started a session (its token was refused).
        var endReason: EndReason?
        /// The one line that says how it ended ("duration of 5s reached", "Room not found").
        var detail: String
        /// The session folder, or nil when nothing was recorded.
        var folder: String?
    }

    enum Input: Sendable, Equatable {
        /// Room `label`'s run can take signals now.
        case ready(String)
        /// SIGINT (2) or SIGTERM (15) for the process.
        case signal(Int32)
        /// SIGHUP for the process (rotate the files of recording rooms).
        case hangup
        /// Room `label` is finished: every file of it closed and its summary written.
        case finished(String, RoomEnd)
    }

    enum Action: Sendable, Equatable {
        /// Give this signal to room `label`'s run (it leaves and finishes its files).
        case stop(String, signal: Int32)
        /// Rotate room `label`'s files.
        case rotate(String)
        /// Every room is finished: exit with `code`; `line` says how the run went.
        case finish(code: ExitCode, line: String)
    }

    /// The rooms, in the order given on the command line.
    let labels: [String]
    private(set) var ready: Set<String> = []
    private(set) var ends: [String: RoomEnd] = [:]
    /// The first SIGINT/SIGTERM, once one came.
    private(set) var signal: Int32?

    init(labels: [String]) { self.labels = labels }

    var isFinished: Bool { ends.count == labels.count }

    mutating func handle(_ input: Input) -> [Action] {
        switch input {
        case .ready(let label):
            guard labels.contains(label), ends[label] == nil, ready.insert(label).inserted else { return [] }
            // A signal that came while this room was still asking for its token stops it now.
            return signal.map { [.stop(label, signal: $0)] } ?? []
        case .signal(let sig):
            guard signal == nil else { return [] }  // a second signal exits at once (SignalWatcher)
            signal = sig
            return running.map { .stop($0, signal: sig) }
        case .hangup:
            return running.map { .rotate($0) }
        case .finished(let label, let end):
            guard labels.contains(label), ends[label] == nil else { return [] }
            ends[label] = end
            ready.remove(label)
            guard isFinished else { return [] }
            return [.finish(code: exitCode, line: finalLine)]
        }
    }

    /// Rooms whose run takes signals and has not finished, in command-line order.
    private var running: [String] { labels.filter { ready.contains($0) && ends[$0] == nil } }

    /// The process's exit code once every room finished (see the type's comment).
    var exitCode: ExitCode { Self.exitCode(labels.compactMap { ends[$0]?.code }) }

    static func exitCode(_ codes: [ExitCode]) -> ExitCode {
        let failed = codes.filter { $0 != .success }
        guard let first = failed.first else { return .success }
        return failed.count == codes.count && failed.allSatisfy({ $0 == first }) ? first : .roomsFailed
    }

    /// `2 rooms recorded: a (duration of 5s reached), b (duration of 5s reached)` or
    /// `1 of 2 rooms failed: b (exit 5: Room not found); a: duration of 5s reached`.
    var finalLine: String {
        let failed = labels.filter { (ends[$0]?.code ?? .failure) != .success }
        let ok = labels.filter { !failed.contains($0) }
        let rooms = labels.count == 1 ? "room" : "rooms"
        if failed.isEmpty {
            return "\(labels.count) \(rooms) finished: " + ok.map { "\($0) (\(ends[$0]?.detail ?? ""))" }.joined(separator: ", ")
        }
        var line = "\(failed.count) of \(labels.count) \(rooms) failed: "
            + failed.map { "\($0) (exit \(ends[$0]?.code.rawValue ?? 1): \(ends[$0]?.detail ?? ""))" }.joined(separator: ", ")
        if !ok.isEmpty { line += "; finished: " + ok.map { "\($0) (\(ends[$0]?.detail ?? ""))" }.joined(separator: ", ") }
        return line
    }

    /// Labels for the rooms of a command line: each room's name, with `-2`, `-3` … when
    /// the same name comes again (the same room name on two servers).
    static func labels(_ names: [String]) -> [String] {
        var seen: [String: Int] = [:]
        var taken = Set<String>()
        return names.map { name in
            var n = seen[name, default: 0]
            var label = name
            while taken.contains(label) {
                n += 1
                label = "\(name)-\(n + 1)"
            }
            seen[name] = n
            taken.insert(label)
            return label
        }
    }
}
