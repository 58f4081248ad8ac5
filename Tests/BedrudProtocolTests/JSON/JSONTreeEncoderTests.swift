import BedrudProtocol
import Foundation
import Testing

/// A Codable value through ``JSONTreeEncoder`` gives the text ``JSONWriter`` gives the same
/// document built by hand: the event log's bytes did not change when its lines became
/// Codable.
@Suite struct JSONTreeEncoderTests {
    struct Inner: Encodable {
        var level: Double
        var small: Float
        var count: UInt64
        var tiny: Int8
    }

    struct Doc: Encodable {
        var text: String
        var flag: Bool
        var absent: String?
        var present: String?
        var list: [Inner]
        var empty: [Int]
        var nested: [String: [String: Int64]]
        var null: Nullish
        var offsetMs: Int64
        enum CodingKeys: String, CodingKey { case text, flag, absent, present, list, empty, nested, null, offsetMs = "offset_ms" }
    }

    /// Written as `null` (as an explicit `encodeNil`).
    struct Nullish: Encodable {
        func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encodeNil()
        }
    }

    /// Two keyed containers on one encoder write into one object (a payload beside `type`).
    struct Flat: Encodable {
        enum A: String, CodingKey { case type }
        enum B: String, CodingKey { case b_key, a_key }
        func encode(to encoder: any Encoder) throws {
            var b = encoder.container(keyedBy: B.self)
            try b.encode("b", forKey: .b_key)
            try b.encode(["x": [1, 2]], forKey: .a_key)
            var a = encoder.container(keyedBy: A.self)
            try a.encode("flat", forKey: .type)
        }
    }

    @Test func theTextIsJSONWritersTextOfTheSameDocument() throws {
        let text = "a/b\"c\\d\n\u{1}\u{7f}\u{85}\u{202e}😀\u{2028}"
        let value = Doc(text: text, flag: true, absent: nil, present: "p", list: [Inner(level: 0.30000001192092896, small: 0.3, count: .max, tiny: -3),
                                                                                Inner(level: 4, small: 1e-7, count: 0, tiny: 0)],
                        empty: [], nested: ["k": ["z": Int64.min, "a": 1]], null: Nullish(), offsetMs: 5_000_000_000)
        let byHand: [String: Any] = [
            "text": text, "flag": true, "present": "p", "empty": [Int](), "nested": ["k": ["z": Int64.min, "a": Int64(1)]], "null": JSONNull(),
            "offset_ms": Int64(5_000_000_000),
            "list": [["level": 0.30000001192092896, "small": Float(0.3), "count": UInt64.max, "tiny": Int8(-3)] as [String: Any],
                     ["level": 4.0, "small": Float(1e-7), "count": UInt64(0), "tiny": Int8(0)] as [String: Any]],
        ]
        for slashes in [false, true] {
            let expected = try #require(JSONWriter.serialize(byHand, escapingSlashes: slashes))
            #expect(try JSONTreeEncoder.string(value, escapingSlashes: slashes) == expected)
        }
        #expect(try JSONTreeEncoder.string(value).contains(#""small":0.3,"#), "a Float keeps its own shortest text")
        #expect(try !JSONTreeEncoder.string(value).contains("absent"), "a nil optional is left out, as synthesized Codable does")
        #expect(try JSONTreeEncoder.string(Flat()) == #"{"a_key":{"x":[1,2]},"b_key":"b","type":"flat"}"#)
    }

    @Test func aValueJSONCannotExpressIsAnError() {
        #expect(throws: EncodingError.self) { try JSONTreeEncoder.string(["x": Double.nan]) }
    }
}
