import BedrudCore
import BedrudProtocol
import FoundationEssentials

/// One chat message from the bot, as Bedrud's web client sends one: a `BedrudChatPayload`
/// in reliable data packets on topic `chat` (split into chunks when long).
enum ChatPost {
    /// Sends `text` as `who` and waits (at most 10 s) until the data channel has passed it
    /// on; false when it could not be sent or was not acknowledged.
    static func send(_ text: String, as who: (identity: String, name: String), over session: RoomSession) async -> Bool {
        let chat = BedrudChatPayload(
            id: UUID().uuidString.lowercased(), timestampMs: Int64(Date().timeIntervalSince1970 * 1000),
            senderName: who.name.isEmpty ? who.identity : who.name, senderIdentity: who.identity, message: text, attachments: [])
        guard let payloads = try? ChatChunker.packets(for: chat) else { return false }
        for (i, payload) in payloads.enumerated() {
            let bytes = SayCommand.packet(payload, from: who.identity, sequence: UInt32(i + 1)).protobufBytes()
            guard await session.sendData(bytes, reliable: true) else { return false }
        }
        return await session.transport.waitUntilDataSent(timeoutSeconds: 10)
    }
}
