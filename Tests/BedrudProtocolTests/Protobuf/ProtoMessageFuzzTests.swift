import Foundation
import Testing
import TestSupport
@testable import BedrudProtocol

/// SplitMix64: a tiny seeded generator, so every random input can be replayed.

/// Seeds: `BEDRUD_FUZZ_SEED` replays one; otherwise fixed seeds plus one fresh seed,
/// printed up front so a crash (which ends the process) can still be replayed.
enum FuzzSeeds {
    static let all: [UInt64] = {
        if let text = ProcessInfo.processInfo.environment["BEDRUD_FUZZ_SEED"], let seed = UInt64(text) {
            return [seed]
        }
        let fresh = UInt64.random(in: 1...UInt64.max)
        print("[fuzz] seeds 1, 2, 3, \(fresh) (replay one with BEDRUD_FUZZ_SEED=<seed>)")
        return [1, 2, 3, fresh]
    }()
}

/// Decodes `bytes` as `M`; when that succeeds, encoding must be stable: the bytes of the
/// decoded value decode again to exactly the same bytes. A failure names its context
/// (seed, fixture, round) and carries the input, so it can be replayed and kept as a
/// regression fixture (scripts/livekit_fixtures.py, REGRESSIONS) from the log alone.
private func decodeStably<M: ProtoMessage>(_: M.Type, _ bytes: [UInt8], _ context: @autoclosure () -> String) {
    guard let message = try? M(protobufBytes: bytes) else { return }
    let once = message.protobufBytes()
    guard let again = try? M(protobufBytes: once) else {
        Issue.record("\(context()): our own encoding of a decoded \(M.self) does not decode\n  input: \(hex(bytes))")
        return
    }
    let twice = again.protobufBytes()
    if twice != once {
        let at = zip(once, twice).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(once.count, twice.count)
        Issue.record("\(context()): encoding of \(M.self) is not stable (first re-encoding \(once.count) bytes, second \(twice.count), they differ at offset \(at))\n  input: \(hex(bytes))")
    }
}

private func hex(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

private func decodeAllTypes(_ bytes: [UInt8], _ context: @autoclosure () -> String) {
    decodeStably(LiveKit.SignalResponse.self, bytes, context())
    decodeStably(LiveKit.SignalRequest.self, bytes, context())
    decodeStably(LiveKit.DataPacket.self, bytes, context())
    decodeStably(LiveKit.JoinResponse.self, bytes, context())
    decodeStably(LiveKit.ParticipantInfo.self, bytes, context())
}

@Suite struct ProtoFuzzTests {
    @Test(arguments: FuzzSeeds.all)
    func randomBytesNeverCrash(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        for i in 0..<3000 {
            let count = Int.random(in: 0...200, using: &rng)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
            // Half the inputs start with a plausible tag so the decoder gets past byte 0.
            if i % 2 == 0, !bytes.isEmpty { bytes[0] = UInt8(truncatingIfNeeded: (Int.random(in: 1...31, using: &rng) << 3) | 2) }
            decodeAllTypes(bytes, "seed \(seed) (replay: BEDRUD_FUZZ_SEED=\(seed)) input \(i) [\(bytes.count) bytes]")
        }
    }

    @Test(arguments: FuzzSeeds.all)
    func mutatedFixturesNeverCrash(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        let fixtures = try LiveKitFixtures.load()
        for fixture in fixtures {
            for round in 0..<15 {
                var bytes = fixture.bytes
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    mutate(&bytes, &rng)
                }
                decodeAllTypes(bytes, "seed \(seed) (replay: BEDRUD_FUZZ_SEED=\(seed)) fixture \(fixture.name) round \(round)")
            }
        }
    }

    /// Inputs fresh seeds once found, kept so they run every time.
    @Test func regressionInputsReencodeStably() throws {
        let regressions = try LiveKitFixtures.load().filter { $0.name.hasPrefix("regression.") }
        #expect(Set(regressions.map(\.name)).isSuperset(of: [
            "regression.seed_757264840", "regression.seed_669094484",
            "regression.seed_186967074", "regression.seed_898248838",
        ]))
        for fixture in regressions {
            decodeAllTypes(fixture.bytes, "\(fixture.name)")
            decodeAsFixtureType(fixture.type, fixture.bytes, "\(fixture.name) as \(fixture.type)")
        }
    }

    @Test func everyTruncationOfEveryFixtureIsSafe() throws {
        for fixture in try LiveKitFixtures.load() {
            let bytes = fixture.bytes
            for cut in 0..<bytes.count {
                // As the fixture's own type: that is where a cut lands inside nested fields.
                decodeAsFixtureType(fixture.type, Array(bytes[..<cut]), "\(fixture.name) cut at \(cut)")
            }
        }
    }

    private func decodeAsFixtureType(_ type: String, _ bytes: [UInt8], _ context: String) {
        switch type {
        case "SignalRequest": decodeStably(LiveKit.SignalRequest.self, bytes, context)
        case "DataPacket": decodeStably(LiveKit.DataPacket.self, bytes, context)
        case "JoinRequest": decodeStably(LiveKit.JoinRequest.self, bytes, context)
        case "ParticipantInfo": decodeStably(LiveKit.ParticipantInfo.self, bytes, context)
        case "TrackInfo": decodeStably(LiveKit.TrackInfo.self, bytes, context)
        case "SignalResponse": decodeStably(LiveKit.SignalResponse.self, bytes, context)
        default:
            // Every type the manifest names is decoded somewhere; a misspelt or new one
            // must not quietly become another type.
            guard let decode = FixtureDecoder.byType[type] else {
                Issue.record("\(context): the manifest names type \(type), which no Swift decoder handles")
                return
            }
            if let decoded = try? decode(bytes), let again = try? decode(decoded.reencoded), again.reencoded != decoded.reencoded {
                Issue.record("\(context): encoding of \(type) is not stable\n  input: \(hex(bytes))")
            }
        }
    }

    @Test func hostileLengthsAllocateNothingLarge() {
        // A 2 GiB length prefix on a 6-byte input, nested inside a sub-message.
        let bytes: [UInt8] = [0x0a, 0x06, 0x12, 0xff, 0xff, 0xff, 0xff, 0x07]
        #expect(throws: ProtoDecodingError.self) { try LiveKit.SignalResponse(protobufBytes: bytes) }
        // A packed run claiming millions of elements in a few bytes.
        let packed: [UInt8] = [0xaa, 0x01, 0x05, 0x80, 0x80, 0x80, 0x80, 0x80]
        #expect(throws: ProtoDecodingError.self) { try LiveKit.TrackInfo(protobufBytes: packed) }
    }

    private func mutate(_ bytes: inout [UInt8], _ rng: inout SeededGenerator) {
        switch Int.random(in: 0..<6, using: &rng) {
        case 0 where !bytes.isEmpty:
            bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8(1 << Int.random(in: 0..<8, using: &rng))
        case 1 where !bytes.isEmpty:
            bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
        case 2:
            bytes.insert(UInt8.random(in: 0...255, using: &rng), at: Int.random(in: 0...bytes.count, using: &rng))
        case 3 where !bytes.isEmpty:
            bytes.remove(at: Int.random(in: 0..<bytes.count, using: &rng))
        case 4 where bytes.count > 4:
            let start = Int.random(in: 0..<(bytes.count - 2), using: &rng)
            let end = min(bytes.count, start + Int.random(in: 1...16, using: &rng))
            bytes.insert(contentsOf: bytes[start..<end], at: Int.random(in: 0...bytes.count, using: &rng))
        default:
            // A huge varint where a length might be.
            bytes.insert(contentsOf: [0xff, 0xff, 0xff, 0xff, 0x0f], at: Int.random(in: 0...bytes.count, using: &rng))
        }
    }
}
