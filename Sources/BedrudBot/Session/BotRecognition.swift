#if canImport(Glibc)
import Glibc
#endif
import BedrudCore
import BedrudProtocol

/// Tells bots from people, so that two recorders in one room do not keep each other
/// there: the alone timeout counts people only.
///
/// A participant is a bot when
/// - it carries the participant attribute ``attributeKey`` (every bedrud-bot sets it on
///   itself after joining, where the token allows `canUpdateOwnMetadata`, as Bedrud's
///   `/room/join` tokens do);
/// - LiveKit says it is an egress or an agent;
/// - or its identity or display name matches one of ``namePatterns`` (shell globs,
///   `record.bot_names`), for bots that cannot set attributes.
///
/// Bedrud's web and mobile clients read no participant attributes, so people in the
/// meeting see a bot as an ordinary participant with its account's (or guest) name and
/// no camera or microphone. Pure.
public struct BotRecognition: Sendable, Equatable {
    /// The attribute a bedrud-bot sets on itself; its value is the bot's version.
    public static let attributeKey = "bedrud-bot"
    public var namePatterns: [String] = []

    public init(namePatterns: [String] = []) { self.namePatterns = namePatterns }

    /// The metadata update that marks this process as a bot (attributes only: Bedrud's
    /// `accesses` in the metadata stay as the server set them).
    public static var markerRequest: LiveKit.SignalRequest {
        var m = LiveKit.UpdateParticipantMetadata()
        m.attributes = [attributeKey: BedrudBotVersion.string]
        return LiveKit.SignalRequest(.updateMetadata(m))
    }

    public func isBot(_ p: MeetingParticipant) -> Bool {
        if p.attributes[Self.attributeKey] != nil { return true }
        if p.kind == .egress || p.kind == .agent { return true }
        return namePatterns.contains { pattern in
            fnmatch(pattern, p.identity, 0) == 0 || (!p.name.isEmpty && fnmatch(pattern, p.name, 0) == 0)
        }
    }
}
