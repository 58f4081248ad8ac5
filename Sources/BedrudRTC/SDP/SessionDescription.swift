// SDP (RFC 8866) as WebRTC uses it (RFC 8829 JSEP): a session part and media sections,
// each a list of typed lines. Parsing keeps every line in order, so what we do not
// understand survives a round trip; typed accessors live in SessionDescription+Media.swift.

/// One `a=` line: `a=name` (a flag) or `a=name:value`.
public struct SDPAttribute: Sendable, Equatable {
    public var name: String
    public var value: String?

    public init(_ name: String, _ value: String? = nil) {
        self.name = name
        self.value = value
    }

    var line: String { value.map { "a=\(name):\($0)" } ?? "a=\(name)" }
}

/// A non-attribute line other than `v=`, `o=`, `s=`, `t=` and `m=` (for example `c=`, `b=`, `i=`),
/// kept verbatim so that it is written back where it came from.
public struct SDPLine: Sendable, Equatable {
    public var type: Character
    public var value: String

    public init(_ type: Character, _ value: String) {
        self.type = type
        self.value = value
    }
}

/// One `m=` section and its lines.
public struct MediaDescription: Sendable, Equatable {
    /// `audio`, `video`, `application`, …
    public var kind: String
    /// Port from the `m=` line; 0 marks a rejected (or bundle-only) section.
    public var port: Int
    /// Transport protocol, e.g. `UDP/TLS/RTP/SAVPF` or `UDP/DTLS/SCTP`.
    public var proto: String
    /// Formats: RTP payload types as text, or `webrtc-datachannel` for data.
    public var formats: [String]
    /// `c=`, `b=`, `i=` and other non-attribute lines, in order.
    public var lines: [SDPLine]
    public var attributes: [SDPAttribute]

    public init(kind: String, port: Int, proto: String, formats: [String], lines: [SDPLine] = [], attributes: [SDPAttribute] = []) {
        self.kind = kind
        self.port = port
        self.proto = proto
        self.formats = formats
        self.lines = lines
        self.attributes = attributes
    }
}

/// A parsed SDP document.
public struct SessionDescription: Sendable, Equatable {
    /// `o=` fields: username, session id, session version, net type, address type, address.
    public var origin: Origin
    /// `s=` value.
    public var sessionName: String
    /// `t=` value.
    public var timing: String
    /// Session-level lines other than v/o/s/t and attributes, in order.
    public var lines: [SDPLine]
    /// Session-level `a=` lines.
    public var attributes: [SDPAttribute]
    public var media: [MediaDescription]

    public struct Origin: Sendable, Equatable {
        public var username: String
        public var sessionID: String
        public var sessionVersion: String
        public var netType: String
        public var addressType: String
        public var address: String

        public init(username: String = "-", sessionID: String, sessionVersion: String, netType: String = "IN", addressType: String = "IP4", address: String = "127.0.0.1") {
            self.username = username
            self.sessionID = sessionID
            self.sessionVersion = sessionVersion
            self.netType = netType
            self.addressType = addressType
            self.address = address
        }
    }

    public init(origin: Origin, sessionName: String = "-", timing: String = "0 0", lines: [SDPLine] = [], attributes: [SDPAttribute] = [], media: [MediaDescription] = []) {
        self.origin = origin
        self.sessionName = sessionName
        self.timing = timing
        self.lines = lines
        self.attributes = attributes
        self.media = media
    }

    /// Longest SDP accepted; a LiveKit offer with hundreds of tracks stays far below it.
    public static let maxLength = 4 << 20
    /// Most media sections accepted.
    public static let maxMediaSections = 4096

    // MARK: - Parsing

    /// Parses SDP text. Lines may end in CRLF or LF; blank lines are ignored.
    /// - Throws: ``SDPError`` naming the line that is wrong.
    public init(parsing text: String) throws(SDPError) {
        guard text.utf8.count <= Self.maxLength else { throw SDPError(.tooLong, line: 0) }
        var origin: Origin?
        var sessionName: String?
        var timing: String?
        var sawVersion = false
        var sessionLines: [SDPLine] = []
        var sessionAttributes: [SDPAttribute] = []
        var media: [MediaDescription] = []
        var lineNumber = 0

        for raw in text.split(whereSeparator: { $0.isNewline }) {
            lineNumber += 1
            let line = raw
            guard line.count >= 2, let type = line.first, line[line.index(after: line.startIndex)] == "=" else {
                throw SDPError(.malformedLine, line: lineNumber)
            }
            guard type.isASCII, type.isLetter, type.isLowercase else { throw SDPError(.malformedLine, line: lineNumber) }
            let value = String(line.dropFirst(2))

            if !sawVersion {
                guard type == "v" else { throw SDPError(.missingVersion, line: lineNumber) }
                guard value == "0" else { throw SDPError(.unsupportedVersion, line: lineNumber) }
                sawVersion = true
                continue
            }
            switch type {
            case "m":
                guard media.count < Self.maxMediaSections else { throw SDPError(.tooManyMediaSections, line: lineNumber) }
                media.append(try Self.parseMediaLine(value, line: lineNumber))
            case "a":
                let attribute = Self.parseAttribute(value)
                guard !attribute.name.isEmpty else { throw SDPError(.malformedAttribute, line: lineNumber) }
                if media.isEmpty {
                    sessionAttributes.append(attribute)
                } else {
                    media[media.count - 1].attributes.append(attribute)
                }
            case "v":
                throw SDPError(.malformedLine, line: lineNumber)
            case "o" where media.isEmpty:
                let f = value.split(separator: " ", omittingEmptySubsequences: true)
                guard f.count == 6 else { throw SDPError(.malformedOrigin, line: lineNumber) }
                origin = Origin(
                    username: String(f[0]), sessionID: String(f[1]), sessionVersion: String(f[2]),
                    netType: String(f[3]), addressType: String(f[4]), address: String(f[5]))
            case "s" where media.isEmpty:
                sessionName = value
            case "t" where media.isEmpty:
                timing = value
            default:
                if media.isEmpty {
                    sessionLines.append(SDPLine(type, value))
                } else {
                    media[media.count - 1].lines.append(SDPLine(type, value))
                }
            }
        }
        guard sawVersion else { throw SDPError(.missingVersion, line: 0) }
        guard let origin else { throw SDPError(.malformedOrigin, line: 0) }
        self.origin = origin
        self.sessionName = sessionName ?? "-"
        self.timing = timing ?? "0 0"
        self.lines = sessionLines
        self.attributes = sessionAttributes
        self.media = media
    }

    static func parseAttribute(_ value: String) -> SDPAttribute {
        guard let colon = value.firstIndex(of: ":") else { return SDPAttribute(value) }
        return SDPAttribute(String(value[..<colon]), String(value[value.index(after: colon)...]))
    }

    static func parseMediaLine(_ value: String, line: Int) throws(SDPError) -> MediaDescription {
        let f = value.split(separator: " ", omittingEmptySubsequences: true)
        guard f.count >= 3 else { throw SDPError(.malformedMediaLine, line: line) }
        // "port" or "port/count" (RFC 8866 §5.14).
        let portText = f[1].split(separator: "/", maxSplits: 1).first ?? ""
        guard let port = Int(portText), (0...65535).contains(port) else { throw SDPError(.malformedMediaLine, line: line) }
        return MediaDescription(kind: String(f[0]), port: port, proto: String(f[2]), formats: f.dropFirst(3).map(String.init))
    }

    // MARK: - Writing

    /// The SDP text, CRLF line endings, ending with CRLF.
    public var text: String {
        var out = "v=0\r\n"
        out += "o=\(origin.username) \(origin.sessionID) \(origin.sessionVersion) \(origin.netType) \(origin.addressType) \(origin.address)\r\n"
        out += "s=\(sessionName)\r\n"
        for l in lines where l.type != "t" { out += "\(l.type)=\(l.value)\r\n" }
        out += "t=\(timing)\r\n"
        for a in attributes { out += a.line + "\r\n" }
        for m in media {
            out += "m=\(m.kind) \(m.port) \(m.proto)"
            for f in m.formats { out += " \(f)" }
            out += "\r\n"
            for l in m.lines { out += "\(l.type)=\(l.value)\r\n" }
            for a in m.attributes { out += a.line + "\r\n" }
        }
        return out
    }
}

/// Why an SDP document was refused.
public struct SDPError: Error, Sendable, Equatable, CustomStringConvertible {
    enum Code: Sendable, Equatable {
        case tooLong, malformedLine, missingVersion, unsupportedVersion, malformedOrigin
        case malformedMediaLine, malformedAttribute, tooManyMediaSections
        case noUsableSection, missingICECredentials, missingFingerprint, unsupportedSetup, bundleMismatch
    }
    let code: Code
    /// 1-based line number, or 0 when the problem is not tied to one line.
    public let line: Int
    /// The media section (index of its `m=` line) the problem belongs to, if any.
    public let mediaIndex: Int?

    init(_ code: Code, line: Int = 0, mediaIndex: Int? = nil) {
        self.code = code
        self.line = line
        self.mediaIndex = mediaIndex
    }

    public var description: String {
        let at = line > 0 ? " at line \(line)" : (mediaIndex.map { " in media section \($0)" } ?? "")
        switch code {
        case .tooLong: return "SDP is longer than \(SessionDescription.maxLength) bytes; refusing it."
        case .malformedLine: return "SDP line is not of the form x=value\(at)."
        case .missingVersion: return "SDP does not start with v=0\(at)."
        case .unsupportedVersion: return "SDP version is not 0\(at)."
        case .malformedOrigin: return "SDP has no valid o= line\(at)."
        case .malformedMediaLine: return "SDP m= line is malformed\(at)."
        case .malformedAttribute: return "SDP attribute line is malformed\(at)."
        case .tooManyMediaSections: return "SDP has more than \(SessionDescription.maxMediaSections) media sections\(at)."
        case .noUsableSection: return "SDP offer has no section this client can accept."
        case .missingICECredentials: return "SDP has no a=ice-ufrag/a=ice-pwd\(at)."
        case .missingFingerprint: return "SDP has no usable a=fingerprint\(at); DTLS cannot be authenticated."
        case .unsupportedSetup: return "SDP a=setup role is not usable\(at)."
        case .bundleMismatch: return "SDP sections use different ICE credentials or fingerprints; only one bundled transport is supported\(at)."
        }
    }
}
