import Foundation
import Testing
import TestSupport
@testable import BedrudProtocol

/// Runs scripts/livekit_fixtures.py (the official `livekit-protocol` package) from the
/// repo's `.venv`, with a deadline, and returns its exit status and output.
enum LiveKitOracle {
    static var repoRoot: URL { Repo.root }

    static var python: URL { repoRoot.appendingPathComponent(".venv/bin/python") }
    static var script: URL { repoRoot.appendingPathComponent("scripts/livekit_fixtures.py") }

    struct Result {
        var status: Int32
        var output: String
    }

    /// Runs the script with `arguments`; a missing venv or a run past `deadline`
    /// seconds is reported as a failure (status -1) with the reason in `output`.
    static func run(_ arguments: [String], deadline: TimeInterval = 120) -> Result {
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            return Result(status: -1, output: "no Python environment at \(python.path); run scripts/bootstrap")
        }
        // Through ChildProcess like every other program a test starts: its own process
        // group, output read while it runs, stopped (TERM, then KILL) at the deadline.
        do {
            let r = try Subprocess.run(python, [script.path] + arguments, currentDirectory: repoRoot, timeout: deadline)
            if r.timedOut { return Result(status: -1, output: "python did not finish within \(Int(deadline)) s") }
            return Result(status: r.exitCode, output: r.stdout + r.stderr)
        } catch {
            return Result(status: -1, output: "cannot start Python: \(error)")
        }
    }

    /// A fresh temporary directory for files handed to the oracle.
    static func temporaryDirectory(_ label: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("bedrud-\(label)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// The committed fixtures and their manifest.
enum LiveKitFixtures {
    struct Entry {
        var name: String
        var type: String
        var expected: Any
        var reencodeIdentical: Bool
        var bytes: [UInt8]
    }

    static var directory: URL {
        get throws {
            guard let url = Bundle.module.url(forResource: "Fixtures", withExtension: nil) else {
                throw FixtureError("Fixtures resource missing from the test bundle")
            }
            return url.appendingPathComponent("livekit")
        }
    }

    static func load() throws -> [Entry] {
        let dir = try directory
        let data = try Data(contentsOf: dir.appendingPathComponent("manifest.json"))
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let list = root["fixtures"] as? [[String: Any]]
        else { throw FixtureError("manifest.json has no fixtures list") }
        return try list.map { item in
            guard let name = item["name"] as? String, let type = item["type"] as? String,
                  let expected = item["expected"] else { throw FixtureError("bad manifest entry \(item)") }
            let bytes = try Data(contentsOf: dir.appendingPathComponent("\(name).bin"))
            return Entry(name: name, type: type, expected: expected,
                         reencodeIdentical: item["reencode_identical"] as? Bool ?? false, bytes: Array(bytes))
        }
    }

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: try directory.appendingPathComponent("\(name).bin")))
    }
}

struct FixtureError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Decodes fixture bytes as the named Swift message type.
enum FixtureDecoder {
    typealias Decoded = (mirror: ProtoMirror, reencoded: [UInt8])

    private static func make<M: ProtoMessage>(_: M.Type) -> @Sendable ([UInt8]) throws -> Decoded {
        { bytes in
            let message = try M(protobufBytes: bytes)
            return (message.protoMirror, message.protobufBytes())
        }
    }

    static let byType: [String: @Sendable ([UInt8]) throws -> Decoded] = [
        "SignalRequest": make(LiveKit.SignalRequest.self),
        "SignalResponse": make(LiveKit.SignalResponse.self),
        "JoinRequest": make(LiveKit.JoinRequest.self),
        "WrappedJoinRequest": make(LiveKit.WrappedJoinRequest.self),
        "ConnectionSettings": make(LiveKit.ConnectionSettings.self),
        "JoinResponse": make(LiveKit.JoinResponse.self),
        "ReconnectResponse": make(LiveKit.ReconnectResponse.self),
        "SessionDescription": make(LiveKit.SessionDescription.self),
        "TrickleRequest": make(LiveKit.TrickleRequest.self),
        "LeaveRequest": make(LiveKit.LeaveRequest.self),
        "SyncState": make(LiveKit.SyncState.self),
        "SimulateScenario": make(LiveKit.SimulateScenario.self),
        "RequestResponse": make(LiveKit.RequestResponse.self),
        "RoomMovedResponse": make(LiveKit.RoomMovedResponse.self),
        "ParticipantInfo": make(LiveKit.ParticipantInfo.self),
        "TrackInfo": make(LiveKit.TrackInfo.self),
        "Room": make(LiveKit.Room.self),
        "ClientInfo": make(LiveKit.ClientInfo.self),
        "DataPacket": make(LiveKit.DataPacket.self),
        "UserPacket": make(LiveKit.UserPacket.self),
        "RpcResponse": make(LiveKit.RpcResponse.self),
        "DataStream.Header": make(LiveKit.DataStream.Header.self),
    ]
}

/// Field-by-field differences between a Swift mirror and the script's JSON description
/// (integers as decimal strings, bytes as hex, "__unknown__" as sorted numbers).
func mirrorDifferences(_ mirror: ProtoMirror, _ json: Any, path: String = "") -> [String] {
    switch mirror {
    case .message(let fields):
        guard let object = json as? [String: Any] else { return ["\(path): expected \(json), got a message"] }
        var out: [String] = []
        for key in Set(fields.keys).union(object.keys).sorted() {
            switch (fields[key], object[key]) {
            case (let m?, let j?): out += mirrorDifferences(m, j, path: "\(path).\(key)")
            case (nil, let j?): out.append("\(path).\(key): missing in Swift (expected \(j))")
            case (let m?, nil): out.append("\(path).\(key): Swift has \(m), the official package has nothing")
            case (nil, nil): break
            }
        }
        return out
    case .list(let items):
        guard let array = json as? [Any] else { return ["\(path): expected \(json), got a list"] }
        guard array.count == items.count else { return ["\(path): \(items.count) items, expected \(array.count)"] }
        return zip(items, array).enumerated().flatMap { i, pair in mirrorDifferences(pair.0, pair.1, path: "\(path)[\(i)]") }
    case .int(let v):
        return integerMatches(String(v), json) ? [] : ["\(path): \(v), expected \(json)"]
    case .uint(let v):
        return integerMatches(String(v), json) ? [] : ["\(path): \(v), expected \(json)"]
    case .bool(let v):
        return (json as? Bool) == v ? [] : ["\(path): \(v), expected \(json)"]
    case .double(let v):
        return (json as? NSNumber)?.doubleValue == v ? [] : ["\(path): \(v), expected \(json)"]
    case .string(let v):
        return (json as? String) == v ? [] : ["\(path): \"\(v)\", expected \(json)"]
    case .bytes(let v):
        let hex = v.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        return (json as? String) == hex ? [] : ["\(path): 0x\(hex), expected \(json)"]
    }
}

private func integerMatches(_ value: String, _ json: Any) -> Bool {
    if let s = json as? String { return s == value }
    if let n = json as? NSNumber { return n.stringValue == value }
    return false
}
