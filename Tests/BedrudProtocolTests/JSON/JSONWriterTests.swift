import BedrudProtocol
import Foundation
import Testing
import TestSupport

/// ``JSONWriter`` writes what the Foundation writers it replaced wrote, byte for byte:
/// `JSONSerialization` with `.sortedKeys` for `events.jsonl` (``JSONWriter/KeyOrder/collated``)
/// and `JSONEncoder` with `.sortedKeys` for `summary.json`, `--json` and stored sessions
/// (``JSONWriter/KeyOrder/codePoints``), compact and pretty, with and without `\/`.
@Suite struct JSONWriterTests {
    struct Inner: Codable {
        var level: Double
        var small: Float
        var count: UInt64
        var tiny: Int8
        var wide: Int32
        var half: UInt16
    }

    struct Doc: Codable {
        var text: String
        var flag: Bool
        var absent: String?
        var present: String?
        var list: [Inner]
        var empty: [Int]
        var emptyObject: [String: Int]
        var nested: [String: [String: Int64]]
        var null: Nullish
        var offsetMs: Int64
        var keys: [String: Int]
        var doubles: [Double]
        var floats: [Float]
        var lists: [[Int]]
        enum CodingKeys: String, CodingKey {
            case text, flag, absent, present, list, empty, nested, null, keys, doubles, floats, lists
            case offsetMs = "offset_ms", emptyObject = "empty_object"
        }
    }

    /// Written as `null` (an explicit `encodeNil`).
    struct Nullish: Codable {
        init() {}
        init(from decoder: any Decoder) throws {}
        func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encodeNil()
        }
    }

    /// Two keyed containers on one encoder write into one object (a payload beside `type`),
    /// and a key written twice keeps its last value.
    struct Flat: Encodable {
        enum A: String, CodingKey { case type }
        enum B: String, CodingKey { case b_key, a_key, type }
        func encode(to encoder: any Encoder) throws {
            var b = encoder.container(keyedBy: B.self)
            try b.encode("b", forKey: .b_key)
            try b.encode(["x": [1, 2]], forKey: .a_key)
            try b.encode("first", forKey: .type)
            var a = encoder.container(keyedBy: A.self)
            try a.encode("flat", forKey: .type)
        }
    }

    static let text = "a/b\"c\\d\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f}\u{80}\u{85}\u{9f}é\u{202e}😀 \u{2028}"

    static let doc = Doc(
        text: text, flag: true, absent: nil, present: "p",
        list: [Inner(level: 0.30000001192092896, small: 0.3, count: .max, tiny: -3, wide: .min, half: .max),
               Inner(level: 4, small: 1e-7, count: 0, tiny: 0, wide: 7, half: 0)],
        empty: [], emptyObject: [:], nested: ["k": ["z": Int64.min, "a": 1], "": [:]], null: Nullish(), offsetMs: 5_000_000_000,
        keys: Dictionary(uniqueKeysWithValues: ["a1", "a_1", "A", "b", "B2", "b10", "b9", "a-b", "a.b", "Ab", "aB", "a", "_x", "é",
                                                "z", "Z1", "z01", "z1", "a b", "ab", "a~", "a{", "x/y", "\u{FF5E}", "\u{1F600}"].enumerated().map { ($1, $0) }),
        doubles: [0, -0.0, 1, 3, 0.1, 1.5, 2.25, 1e-7, 1e21, 1e15, 1e16, 123_456_789.123, -4.5, 1.0 / 3, 12.7, 1e300, 99.95, 1_234_567, 0.000123, 1e-5],
        floats: [0.1, 12.7, 3, -0.5, 16_777_216, 1e-7],
        lists: [[], [1, 2], []])

    private func foundation<T: Encodable>(_ value: T, _ formatting: JSONEncoder.OutputFormatting) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = formatting.union(.sortedKeys)
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test(arguments: [false, true], [false, true])
    func writesWhatJSONEncoderWrites(pretty: Bool, escapingSlashes: Bool) throws {
        var formatting: JSONEncoder.OutputFormatting = []
        if pretty { formatting.insert(.prettyPrinted) }
        if !escapingSlashes { formatting.insert(.withoutEscapingSlashes) }
        let style = JSONWriter.Style(pretty: pretty, escapingSlashes: escapingSlashes)
        #expect(try JSONWriter.string(Self.doc, style: style) == foundation(Self.doc, formatting))
        #expect(try JSONWriter.string(Flat(), style: style) == foundation(Flat(), formatting))
        // Top-level arrays, scalars, an empty document, JSONValue (what --json passes on from the server).
        #expect(try JSONWriter.string([[String: Int]()], style: style) == foundation([[String: Int]()], formatting))
        #expect(try JSONWriter.string("x/y", style: style) == foundation("x/y", formatting))
        #expect(try JSONWriter.string([Int?.none, 3], style: style) == foundation([Int?.none, 3], formatting))
        let server: JSONValue = .object(["name": .string(Self.text), "n": .number(4), "half": .number(0.5), "big": .number(1e17),
                                         "on": .bool(false), "none": .null, "list": .array([.object([:]), .array([])])])
        #expect(try JSONWriter.string(server, style: style) == foundation(server, formatting))
    }

    /// What a line of `events.jsonl` holds, as a Codable value and as the `[String: Any]`
    /// document `JSONSerialization` took.
    struct Line: Encodable {
        var doubles: [Double]
        var floats: [Float]
        var ints: [Int64]
        var widths: Widths
        var text: String
        var nested: [String: [String: String]]
        var none: Nullish
        var flag: Bool
        var empty: [String: Int]
        var list: [Int]
        struct Widths: Encodable {
            var u32: UInt32, u64: UInt64, i32: Int32, u8: UInt8, i16: Int16
        }
    }

    @Test(arguments: [false, true])
    func collatedIsWhatJSONSerializationWrites(escapingSlashes: Bool) throws {
        let doubles: [Double] = [0, -0.0, 1, 3, 0.1, 1.5, 2.25, 1e-7, 1e21, 1e15, 1e16, 123_456_789.123, -4.5,
                                 1.0 / 3, 12.7, 1e300, 99.95, 1_234_567, 0.000123, 20.5, 1e-5]
        let floats: [Float] = [0.1, 12.7, 3, -0.5]
        let ints: [Int64] = [.max, .min, 0, -1]
        let line = Line(doubles: doubles, floats: floats, ints: ints, widths: .init(u32: .max, u64: .max, i32: .min, u8: 3, i16: -3),
                        text: Self.text, nested: ["a": ["b": Self.text]], none: Nullish(), flag: false, empty: [:], list: [])
        let byHand: [String: Any] = [
            "doubles": doubles, "floats": floats, "ints": ints,
            "widths": ["u32": UInt32.max, "u64": UInt64.max, "i32": Int32.min, "u8": UInt8(3), "i16": Int16(-3)] as [String: Any],
            "text": Self.text, "nested": ["a": ["b": Self.text]], "none": NSNull(), "flag": false, "empty": [String: Any](), "list": [Any](),
        ]
        let options: JSONSerialization.WritingOptions = escapingSlashes ? [.sortedKeys] : [.sortedKeys, .withoutEscapingSlashes]
        let expected = String(decoding: try JSONSerialization.data(withJSONObject: byHand, options: options), as: UTF8.self)
        #expect(try JSONWriter.string(line, style: .init(escapingSlashes: escapingSlashes, keyOrder: .collated)) == expected)
        #expect(try JSONWriter.string(Flat(), style: .eventLine) == #"{"a_key":{"x":[1,2]},"b_key":"b","type":"flat"}"#)
    }

    /// `.sortedKeys` of `JSONSerialization` orders keys by ICU collation; ``JSONWriter/KeyOrder/collated``
    /// copies that for ASCII keys.
    @Test func collatedKeyOrderIsJSONSerializations() throws {
        var keys = (32 ... 126).map { String(UnicodeScalar(UInt8($0))) }
        keys += ["a1b", "a01b", "a1", "a01", "a001", "a10", "ab1", "a_1", "a 1", "A1", "a1B", "a1b2", "a1b10", "x", "X_",
                 "x_", "xA", "xa", "aA", "Aa", "AA", "aa", "a1a", "a01a", "", "a_b", "ab", "aB", "a-b", "a.b", "a_", "a0", "a09",
                 "latencyMs", "latencyMaxMs", "latenciesMs", "exit_code", "exitCode", "room_sid", "room", "roomFile",
                 "track_sid", "trackSid", "t9", "t10", "start_ms", "start_offset_ms", "startMs", "0", "00", "007", "7"]
        let seed = UInt64(12)
        var rng = SeededGenerator(seed: seed)
        let alphabet = Array("aAbB_-.0 19zZ")
        for _ in 0 ..< 300 {
            keys.append(String((0 ..< Int.random(in: 1 ... 5, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }))
        }
        var doc: [String: Int] = [:]
        for k in keys { doc[k] = 1 }
        let mine = try JSONWriter.string(doc, style: .init(escapingSlashes: true, keyOrder: .collated)).split(separator: ":1,")
        let theirs = String(decoding: try JSONSerialization.data(withJSONObject: doc, options: [.sortedKeys]), as: UTF8.self).split(separator: ":1,")
        let first = zip(mine, theirs).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(first == nil && mine.count == theirs.count,
                "seed \(seed); first difference: \(first.map { "\(mine[max(0, $0 - 1) ... $0]) vs \(theirs[max(0, $0 - 1) ... $0])" } ?? "count")")
    }

    /// Keys of lowercase letters and `_` only (all of `events.jsonl`'s) take a shortcut;
    /// their order is still `JSONSerialization`'s.
    @Test func plainKeysAreInJSONSerializationsOrderToo() throws {
        let seed = UInt64(7)
        var rng = SeededGenerator(seed: seed)
        let alphabet = Array("ab_z")
        var doc: [String: Int] = ["exit_code": 1, "exit": 1, "exitcode": 1, "room_sid": 1, "room": 1, "_": 1, "a_": 1, "a__b": 1, "offset_ms": 1]
        for _ in 0 ..< 300 {
            doc[String((0 ..< Int.random(in: 1 ... 6, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })] = 1
        }
        let theirs = String(decoding: try JSONSerialization.data(withJSONObject: doc, options: [.sortedKeys]), as: UTF8.self)
        #expect(try JSONWriter.string(doc, style: .init(escapingSlashes: true, keyOrder: .collated)) == theirs, "seed \(seed)")
    }

    @Test func aNilOptionalIsLeftOutAndAFloatKeepsItsShortestText() throws {
        let text = try JSONWriter.string(Self.doc)
        #expect(!text.contains("absent"), "a nil optional is left out, as synthesized Codable does")
        #expect(text.contains(#""small":0.3,"#))
        #expect(text.contains(#""null":null"#))
    }

    @Test func aValueJSONCannotExpressIsAnError() {
        #expect(throws: EncodingError.self) { try JSONWriter.string(["x": Double.nan]) }
        #expect(throws: EncodingError.self) { try JSONWriter.string([Float.infinity]) }
    }
}
