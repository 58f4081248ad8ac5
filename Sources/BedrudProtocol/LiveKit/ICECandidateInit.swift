import FoundationEssentials

/// The JSON text inside `TrickleRequest.candidateInit`: an RTCIceCandidateInit
/// (`candidate`, `sdpMid`, `sdpMLineIndex`, `usernameFragment`). livekit-protocol.md §3.2.
///
/// Server candidates come from pion and carry `"usernameFragment": null`; any of the
/// optional keys may be null or absent. An empty `candidate` means end-of-candidates.
public struct ICECandidateInit: Sendable, Equatable {
    /// The `a=candidate` value, with or without the `candidate:` prefix.
    public var candidate: String
    public var sdpMid: String?
    public var sdpMLineIndex: Int?
    public var usernameFragment: String?

    public init(candidate: String, sdpMid: String? = nil, sdpMLineIndex: Int? = nil, usernameFragment: String? = nil) {
        self.candidate = candidate
        self.sdpMid = sdpMid
        self.sdpMLineIndex = sdpMLineIndex
        self.usernameFragment = usernameFragment
    }

    /// Parses the JSON text; nil when it is not an object with a string `candidate`.
    /// Wrongly typed optional keys are ignored rather than failing the candidate.
    public init?(json text: String) {
        guard text.utf8.count <= 64 * 1024,
              let object = try? JSONDecoder().decode(Wire.self, from: Data(text.utf8)),
              let candidate = object.candidate
        else { return nil }
        self.candidate = candidate
        self.sdpMid = object.sdpMid
        self.sdpMLineIndex = object.sdpMLineIndex
        self.usernameFragment = object.usernameFragment
    }

    /// JSON text in the browser's `toJSON()` shape; absent optionals are written as null.
    public var json: String {
        var out = "{\"candidate\":" + JSONText.quoted(candidate)
        out += ",\"sdpMid\":" + (sdpMid.map(JSONText.quoted) ?? "null")
        out += ",\"sdpMLineIndex\":" + (sdpMLineIndex.map { String($0) } ?? "null")
        out += ",\"usernameFragment\":" + (usernameFragment.map(JSONText.quoted) ?? "null")
        return out + "}"
    }

    /// True for the end-of-candidates marker (empty `candidate`).
    public var isEndOfCandidates: Bool { candidate.allSatisfy { $0 == " " || $0 == "\t" } }

    private struct Wire: Decodable {
        var candidate: String?
        var sdpMid: String?
        var sdpMLineIndex: Int?
        var usernameFragment: String?

        enum CodingKeys: String, CodingKey { case candidate, sdpMid, sdpMLineIndex, usernameFragment }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            candidate = try? c.decodeIfPresent(String.self, forKey: .candidate)
            // Some stacks send the mid as a number; accept both.
            sdpMid = (try? c.decodeIfPresent(String.self, forKey: .sdpMid))
                ?? (try? c.decodeIfPresent(Int.self, forKey: .sdpMid)).flatMap { $0.map(String.init) }
            sdpMLineIndex = try? c.decodeIfPresent(Int.self, forKey: .sdpMLineIndex)
            usernameFragment = try? c.decodeIfPresent(String.self, forKey: .usernameFragment)
        }
    }
}

/// Minimal JSON text helpers for the few JSON documents this layer writes by hand.
enum JSONText {
    /// A JSON string literal (RFC 8259 §7), escaped as ``JSONWriter`` escapes strings
    /// (`/` left as it is).
    static func quoted(_ s: String) -> String {
        var out = ""
        JSONWriter.writeString(s, into: &out, escapingSlashes: false)
        return out
    }
}
