/// Splits a chat into the packets Bedrud's web client would send (chatDataChannel.ts
/// `buildChatWirePackets`, v0.12): one `chat` packet when its JSON is at most
/// `safeBytes`, else a `chat_chunk_meta` and then `chat_chunk`s of the message text, the
/// attachments' JSON and the poll's JSON, each packet at most `safeBytes`.
///
/// Each section is cut where the web client cuts it: the longest prefix, counted in UTF-16
/// code units, found by the same binary search over the packet's encoded size (sized with
/// `index` 0, as there). A cut may fall inside a surrogate pair; the half is written as a
/// `\uXXXX` escape, as `JSON.stringify` writes it.
public enum ChatChunker {
    /// The web client's `CHAT_DATA_SAFE_BYTES`.
    public static let safeBytes = 60_000

    public enum Failure: Error, Equatable {
        /// A packet cannot be made small enough (an enormous id or sender name).
        case overheadTooLarge
    }

    /// The payloads to publish on topic `chat`, in order.
    public static func packets(for chat: BedrudChatPayload, safeBytes: Int = Self.safeBytes) throws -> [[UInt8]] {
        let single = chat.payload(listingEmptyAttachments: true)
        if single.count <= safeBytes { return [single] }
        let attachments: [UInt16] = chat.attachments.isEmpty ? [] : Array(chat.attachmentsJSON.utf16)
        let poll: [UInt16] = chat.poll.map { Array($0.json.utf16) } ?? []
        let id = JSONText.quoted(chat.id)
        var chunks: [[UInt8]] = []
        var counts: [Int] = []
        for (kind, text) in [(BedrudChatChunk.Kind.message, Array(chat.message.utf16)), (.attachments, attachments), (.poll, poll)] {
            let parts = try split(text, overhead: chunkJSON(id: id, kind: kind, index: 0, part: []).count, safeBytes: safeBytes)
            counts.append(parts.count)
            for (i, part) in parts.enumerated() { chunks.append(chunkJSON(id: id, kind: kind, index: i, part: part)) }
        }
        let meta = Array(("{\"type\":\"chat_chunk_meta\",\"id\":\(id),\"timestamp\":\(chat.timestampMs),"
            + "\"senderName\":\(JSONText.quoted(chat.senderName)),\"senderIdentity\":\(JSONText.quoted(chat.senderIdentity)),"
            + "\"messageChunks\":\(counts[0]),\"attachmentChunks\":\(counts[1]),\"pollChunks\":\(counts[2])}").utf8)
        guard meta.count <= safeBytes, !chunks.isEmpty else { throw Failure.overheadTooLarge }
        return [meta] + chunks
    }

    static func chunkJSON(id: String, kind: BedrudChatChunk.Kind, index: Int, part: ArraySlice<UInt16>) -> [UInt8] {
        var out = Array("{\"type\":\"chat_chunk\",\"id\":\(id),\"kind\":\"\(kind.rawValue)\",\"index\":\(index),\"part\":".utf8)
        appendQuoted(part, to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The web client's `splitUtf8ByMaxBytes`: `overhead` is the packet's size with an empty part.
    static func split(_ text: [UInt16], overhead: Int, safeBytes: Int) throws -> [ArraySlice<UInt16>] {
        var parts: [ArraySlice<UInt16>] = []
        var start = 0
        while start < text.count {
            let remaining = text[start...]
            // cost[k]: encoded bytes of the first k units of `remaining` inside a JSON string.
            var cost = [Int](repeating: 0, count: remaining.count + 1)
            var previousHigh = false
            for (k, u) in remaining.enumerated() {
                let c: Int
                if previousHigh && (0xDC00...0xDFFF).contains(u) {
                    c = 4 - 6  // completes a pair: 4 UTF-8 bytes instead of the lone escape counted before
                    previousHigh = false
                } else {
                    c = unitCost(u)
                    previousHigh = (0xD800...0xDBFF).contains(u)
                }
                cost[k + 1] = cost[k] + c
            }
            var low = 1, high = remaining.count, best = 0
            while low <= high {
                let mid = (low + high) / 2
                if overhead + cost[mid] <= safeBytes {
                    best = mid
                    low = mid + 1
                } else {
                    high = mid - 1
                }
            }
            guard best > 0 else { throw Failure.overheadTooLarge }
            parts.append(text[start..<(start + best)])
            start += best
        }
        return parts
    }

    /// Bytes `JSON.stringify` + `TextEncoder` spend on one UTF-16 unit (a surrogate counts as
    /// a lone `\uXXXX` escape; the caller corrects a completed pair).
    static func unitCost(_ u: UInt16) -> Int {
        switch u {
        case 0x22, 0x5C, 0x08, 0x0C, 0x0A, 0x0D, 0x09: 2
        case 0..<0x20: 6
        case 0x20..<0x80: 1
        case 0x80..<0x800: 2
        case 0xD800...0xDFFF: 6
        default: 3
        }
    }

    /// A JSON string of UTF-16 units as `JSON.stringify` writes it: lone surrogates and
    /// control characters as lowercase `\uXXXX`, everything else as UTF-8.
    static func appendQuoted(_ units: ArraySlice<UInt16>, to out: inout [UInt8]) {
        out.append(0x22)
        let hex = Array("0123456789abcdef".utf8)
        func escape(_ u: UInt16) {
            out += [0x5C, UInt8(ascii: "u"), hex[Int(u >> 12)], hex[Int(u >> 8 & 0xF)], hex[Int(u >> 4 & 0xF)], hex[Int(u & 0xF)]]
        }
        var i = units.startIndex
        while i < units.endIndex {
            let u = units[i]
            switch u {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x08: out += [0x5C, UInt8(ascii: "b")]
            case 0x0C: out += [0x5C, UInt8(ascii: "f")]
            case 0x0A: out += [0x5C, UInt8(ascii: "n")]
            case 0x0D: out += [0x5C, UInt8(ascii: "r")]
            case 0x09: out += [0x5C, UInt8(ascii: "t")]
            case 0..<0x20: escape(u)
            case 0xD800...0xDBFF:
                let next = units.index(after: i)
                if next < units.endIndex, (0xDC00...0xDFFF).contains(units[next]) {
                    let scalar = 0x10000 + (UInt32(u - 0xD800) << 10) + UInt32(units[next] - 0xDC00)
                    out += [UInt8(0xF0 | scalar >> 18), UInt8(0x80 | (scalar >> 12) & 0x3F), UInt8(0x80 | (scalar >> 6) & 0x3F), UInt8(0x80 | scalar & 0x3F)]
                    i = next
                } else {
                    escape(u)
                }
            case 0xDC00...0xDFFF: escape(u)
            case 0x20..<0x80: out.append(UInt8(u))
            case 0x80..<0x800: out += [UInt8(0xC0 | u >> 6), UInt8(0x80 | u & 0x3F)]
            default: out += [UInt8(0xE0 | u >> 12), UInt8(0x80 | (u >> 6) & 0x3F), UInt8(0x80 | u & 0x3F)]
            }
            i = units.index(after: i)
        }
        out.append(0x22)
    }
}
