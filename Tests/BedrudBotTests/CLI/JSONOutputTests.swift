@testable import BedrudBot
import BedrudCore
import BedrudProtocol
import Foundation
import Testing

/// `--json` answers are written by ``JSONWriter`` with the text `JSONEncoder` gave them
/// (sorted keys by code point, `/` as it is), pretty and one per line.
@Suite struct JSONOutputTests {
    struct Answer: Encodable {
        var instance: String
        var user: User?
        var room: JSONValue
        var tokenExpiresAt: String?
        var loss: Double
        var counts: [String: Int]
        var rows: [[String: String]]
        enum CodingKeys: String, CodingKey { case instance, user, room, loss, counts, rows, tokenExpiresAt = "token_expires_at" }
    }

    static let hostile = "a/b\u{2028}c\u{0}d\u{1B}[31me\u{85}f\u{202E}g\"h\\i\tj\nk👍\u{7F}"

    @Test(arguments: [true, false])
    func theTextIsWhatJSONEncoderWrote(pretty: Bool) throws {
        let room: JSONValue = .object(["name": .string(Self.hostile), "maxParticipants": .number(20), "ratio": .number(0.25),
                                       "settings": .object([:]), "tags": .array([]), "owner": .null, "isPublic": .bool(true)])
        let answers = [
            Answer(instance: "default", user: User(id: "u/1", email: "a@b", name: Self.hostile, provider: nil, accesses: ["user", "admin"]),
                   room: room, tokenExpiresAt: nil, loss: 1.0 / 3, counts: ["Z": 1, "_a": 2, "a": 3, "b10": 4, "b9": 5], rows: [[:], ["k": "v"]]),
            Answer(instance: "", user: nil, room: .null, tokenExpiresAt: "2026-11-29T14:05:45.482Z", loss: 0, counts: [:], rows: []),
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        #expect(try JSONOutput.string(answers, pretty: pretty) == String(decoding: try encoder.encode(answers), as: UTF8.self))
        #expect(try JSONOutput.string(answers[0], pretty: pretty) == String(decoding: try encoder.encode(answers[0]), as: UTF8.self))
    }

    @Test func aValueJSONCannotExpressIsAnError() {
        #expect(throws: EncodingError.self) { try JSONOutput.string(["loss": Double.nan]) }
    }
}
