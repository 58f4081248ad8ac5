import BedrudProtocol
import FoundationEssentials

/// Reading `summary.json` back (``SessionFolder/Contents``: the report, `recordings`,
/// `status`). Tolerant as a reader of files from other versions must be: a key that is
/// missing, `null` or of another type reads as absent (`null` for a ``Nullable``, empty
/// or zero otherwise), keys this version does not know are ignored, and a participant or
/// track that cannot be read at all (no identity) is left out. Only a file that is not a
/// JSON object fails.
extension SessionSummary: Decodable {
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        room = c.nullable(.room)
        server = c.nullable(.server)
        started = c.nullable(.started)
        ended = c.nullable(.ended)
        durationMs = c.lenient(.durationMs) ?? 0
        endReason = c.lenient(.endReason) ?? ""
        exitCode = c.nullable(.exitCode)
        message = c.lenient(.message) ?? ""
        participants = c.each(.participants)
        files = c.lenient(.files) ?? []
        roomFile = c.nullable(.roomFile)
        reconnects = c.lenient(.reconnects) ?? 0
        reconnectAttempts = c.lenient(.reconnectAttempts) ?? 0
        chatMessages = c.lenient(.chatMessages) ?? 0
        chat = c.nullable(.chat)
        network = c.nullable(.network)
        onFinish = c.nullable(.onFinish)
        storage = c.nullable(.storage)
        repaired = c.lenient(.repaired)
    }
}

extension SessionSummary.Participant: Decodable {
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        identity = try c.decode(String.self, forKey: .identity)
        name = c.lenient(.name) ?? ""
        file = c.nullable(.file)
        startOffsetMs = c.nullable(.startOffsetMs)
        durationMs = c.nullable(.durationMs)
        speakingMs = c.lenient(.speakingMs) ?? 0
        packets = c.nullable(.packets)
        lost = c.nullable(.lost)
        late = c.nullable(.late)
        duplicates = c.nullable(.duplicates)
        fecRecovered = c.nullable(.fecRecovered)
        concealedMs = c.nullable(.concealedMs)
        gapsMs = c.lenientValues(.gapsMs)
        mixLate = c.nullable(.mixLate)
        mixConcealedMs = c.nullable(.mixConcealedMs)
        dropped = c.nullable(.dropped)
    }
}

extension SessionSummary.Chat: Decodable {
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        chats = c.lenient(.chats) ?? 0
        reassembled = c.lenient(.reassembled) ?? 0
        duplicateChats = c.lenient(.duplicateChats) ?? 0
        orphanChunks = c.lenient(.orphanChunks) ?? 0
        ignoredChunks = c.lenient(.ignoredChunks) ?? 0
        dropped = c.lenient(.dropped) ?? 0
    }
}

extension SessionSummary.Repair: Decodable {
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        eventLines = c.lenient(.eventLines) ?? 0
        eventLinesUnreadable = c.lenient(.eventLinesUnreadable) ?? 0
        filesRepaired = c.lenient(.filesRepaired) ?? []
    }
}

extension SessionSummary.Network: Decodable {
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        srtpProfile = c.nullable(.srtpProfile)
        selectedPair = c.nullable(.selectedPair)
        tracks = c.each(.tracks)
        flappingReconnects = c.lenient(.flappingReconnects) ?? 0
    }
}

extension SessionSummary.Network.Track: Decodable {
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        ssrc = c.lenient(.ssrc) ?? 0
        trackSid = c.nullable(.trackSid)
        participant = c.nullable(.participant)
        packets = c.lenient(.packets) ?? 0
        lost = c.lenient(.lost) ?? 0
        jitterMs = c.lenient(.jitterMs) ?? 0
        nacked = c.lenient(.nacked) ?? 0
        recovered = c.lenient(.recovered) ?? 0
    }
}

extension SessionSummary.OnFinish: Decodable {
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        command = c.lenient(.command) ?? ""
        exitCode = c.nullable(.exitCode)
        signal = c.nullable(.signal)
        timedOut = c.lenient(.timedOut) ?? false
        durationMs = c.lenient(.durationMs) ?? 0
    }
}

extension SessionSummary.Storage: Decodable {
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        diskFull = c.lenient(.diskFull) ?? false
        error = c.nullable(.error)
        pagesDropped = c.lenient(.pagesDropped) ?? 0
        unfinishedFiles = c.lenient(.unfinishedFiles) ?? 0
        eventsLost = c.lenient(.eventsLost) ?? 0
    }
}

/// One element of a list read tolerantly: nil when it is not of the element's shape.
private struct LenientElement<T: Decodable>: Decodable {
    var value: T?
    init(from decoder: any Decoder) throws { value = try? T(from: decoder) }
}

private extension KeyedDecodingContainer {
    /// The value, or nil when the key is missing, `null` or of another type.
    func lenient<T: Decodable>(_ key: Key) -> T? { (try? decodeIfPresent(T.self, forKey: key)) ?? nil }

    /// ``lenient(_:)`` as a ``Nullable`` (written as `null` again when absent).
    func nullable<T: Codable & Equatable>(_ key: Key) -> Nullable<T> { Nullable(lenient(key)) }

    /// The elements of a list that can be read; [] when the key is not a list.
    func each<T: Decodable>(_ key: Key) -> [T] { (lenient(key) as [LenientElement<T>]?)?.compactMap(\.value) ?? [] }

    /// The entries of an object whose values can be read; [:] when the key is not an object.
    func lenientValues<T: Decodable>(_ key: Key) -> [String: T] {
        ((lenient(key) as [String: LenientElement<T>]?) ?? [:]).compactMapValues(\.value)
    }
}
