// The v1 join request (`/rtc/v1?join_request=…`): livekit-protocol.md §1.3 and §2.8.
// The bot joins over v0 today; this is here so the single-PC path can be added
// without touching the codec, and so its query value is pinned by the §2.10 vector.

extension LiveKit {
    /// Options of a v1 join. `autoSubscribe` has no v0-style default: unset = false.
    public struct ConnectionSettings: ProtoMessage {
        public var autoSubscribe = false
        public var adaptiveStream = false
        public var subscriberAllowPause: Bool?
        public var disableICELite = false
        public var autoSubscribeDataTrack: Bool?
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &autoSubscribe)
            case 2: try r.decode(tag, into: &adaptiveStream)
            case 3: try r.decode(tag, into: &subscriberAllowPause)
            case 4: try r.decode(tag, into: &disableICELite)
            case 5: try r.decode(tag, into: &autoSubscribeDataTrack)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "auto_subscribe", autoSubscribe)
            v.field(2, "adaptive_stream", adaptiveStream)
            v.field(3, "subscriber_allow_pause", subscriberAllowPause)
            v.field(4, "disable_ice_lite", disableICELite)
            v.field(5, "auto_subscribe_data_track", autoSubscribeDataTrack)
            v.unknown(unknownFields)
        }
    }

    /// Everything a v1 join or resume says about the client.
    public struct JoinRequest: ProtoMessage {
        public var clientInfo: ClientInfo?
        public var connectionSettings: ConnectionSettings?
        /// Overrides the token's metadata if non-empty.
        public var metadata = ""
        public var participantAttributes: [String: String] = [:]
        public var addTrackRequests: [AddTrackRequest] = []
        public var publisherOffer: SessionDescription?
        /// True = resume.
        public var reconnect = false
        public var reconnectReason: ReconnectReason = .unknown
        /// Our SID when resuming.
        public var participantSid = ""
        public var syncState: SyncState?
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &clientInfo)
            case 2: try r.decode(tag, into: &connectionSettings)
            case 3: try r.decode(tag, into: &metadata)
            case 4: try r.decode(tag, into: &participantAttributes)
            case 5: try r.decode(tag, into: &addTrackRequests)
            case 6: try r.decode(tag, into: &publisherOffer)
            case 7: try r.decode(tag, into: &reconnect)
            case 8: try r.decode(tag, into: &reconnectReason)
            case 9: try r.decode(tag, into: &participantSid)
            case 10: try r.decode(tag, into: &syncState)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "client_info", clientInfo)
            v.field(2, "connection_settings", connectionSettings)
            v.field(3, "metadata", metadata)
            v.field(4, "participant_attributes", participantAttributes)
            v.field(5, "add_track_requests", addTrackRequests)
            v.field(6, "publisher_offer", publisherOffer)
            v.field(7, "reconnect", reconnect)
            v.field(8, "reconnect_reason", reconnectReason)
            v.field(9, "participant_sid", participantSid)
            v.field(10, "sync_state", syncState)
            v.unknown(unknownFields)
        }
    }

    /// The envelope the `join_request` query parameter carries.
    public struct WrappedJoinRequest: ProtoMessage {
        public var compression: Compression = .uncompressed
        /// A serialized ``JoinRequest`` (gzip'd when `compression == .gzip`).
        public var joinRequest: [UInt8] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        /// Wraps an uncompressed join request.
        public init(_ request: JoinRequest) {
            joinRequest = request.protobufBytes()
        }

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &compression)
            case 2: try r.decode(tag, into: &joinRequest)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "compression", compression)
            v.field(2, "join_request", joinRequest)
            v.unknown(unknownFields)
        }

        /// The value of the `join_request` query parameter: URL-safe base64 *with* `=`
        /// padding (the server decodes with Go's `base64.URLEncoding`). The caller still
        /// percent-encodes `=` when it builds the query.
        public var queryValue: String { Base64URL.encodePadded(protobufBytes()) }
    }
}

/// RFC 4648 §5 base64 ("base64url") with padding, the form `/rtc/v1` expects.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func encodePadded(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            for shift in [18, 12, 6, 0] { out.append(alphabet[Int(n >> UInt32(shift) & 63)]) }
            i += 3
        }
        let rest = bytes.count - i
        if rest > 0 {
            let n = UInt32(bytes[i]) << 16 | (rest == 2 ? UInt32(bytes[i + 1]) << 8 : 0)
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(rest == 2 ? alphabet[Int(n >> 6 & 63)] : UInt8(ascii: "="))
            out.append(UInt8(ascii: "="))
        }
        return String(decoding: out, as: UTF8.self)
    }
}
