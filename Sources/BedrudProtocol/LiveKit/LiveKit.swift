// Typed LiveKit signalling and data messages (package `livekit`, proto3), hand-written
// on the protobuf codec in ../Protobuf. Field numbers and meanings: the fact sheet
// docs/reference/livekit-protocol.md §2 (read from livekit/protocol), cross-checked
// against the official `livekit-protocol` Python package by the conformance fixtures
// (scripts/livekit_fixtures.py, Tests/BedrudProtocolTests/Fixtures).
//
// Conventions:
// - Swift property names are the .proto names in lowerCamelCase; `traverse` names the
//   .proto field so the mirror can be compared with the official package.
// - Singular sub-messages are Optionals (proto3 message presence); `optional` scalars
//   are Optionals; other scalars use their zero value for "absent".
// - A oneof is a Swift enum property. A field number the schema does not know in a
//   oneof-only envelope (SignalRequest/SignalResponse) becomes `.unknown(number)`;
//   elsewhere unknown fields only land in `unknownFields`.
// - Enums tolerate unknown numbers (`.unrecognized(n)`), see LiveKit+Enums.swift.

/// Namespace for the LiveKit protocol's messages and enums.
public enum LiveKit {
    /// The signalling protocol version this client announces (`protocol=16`): speaker
    /// deltas, identity-keyed rejoin, `LeaveRequest.action`, `room_moved`. See
    /// livekit-protocol.md §1.8.
    public static let clientProtocol: Int32 = 16
}
