#if canImport(Glibc)
import Glibc
#endif
import BedrudProtocol
import FoundationEssentials
import Synchronization

/// Chat attachments sent inline as `data:` URLs (Bedrud puts images under 512,000 bytes in
/// the message itself: server/internal/storage/chat_upload.go), decoded and saved in the
/// session folder as `attachments/<id>-<index>.<ext>` (a `file` attachment:
/// `attachments/<id>-<index>-<name>`), so the event can carry a path instead of the base64.
///
/// The decisions (parse the URL, pick the name) are pure; ``save(_:chatID:index:)`` is the
/// thin part that writes. Everything in a name comes from a remote sender: ids and file
/// names are cut down to `[A-Za-z0-9._-]`, never start with a dot, are bounded in length,
/// and files are created with `O_EXCL | O_NOFOLLOW` in the one `attachments` folder, so
/// nothing can be written outside it or over another file.
public final class AttachmentStore: Sendable {
    /// Decoded bytes one attachment may have.
    public static let maxBytes = 8 << 20
    /// Characters kept of a chat id / of a file name.
    static let maxIDLength = 64
    static let maxNameLength = 100

    /// Bytes saved in one session at most: a sender flooding images cannot fill the disk.
    public static let defaultSessionLimit = 256 << 20

    /// The session folder (`attachments/` is made in it on first use).
    public let directory: String
    let mode: mode_t
    let sessionLimit: Int
    private let saved = Mutex(0)

    public init(directory: String, mode: mode_t = 0o640, sessionLimit: Int = AttachmentStore.defaultSessionLimit) {
        self.directory = directory
        self.mode = mode
        self.sessionLimit = sessionLimit
    }

    /// A `data:` URL taken apart (RFC 2397).
    struct DataURL: Equatable {
        var mime: String
        var bytes: [UInt8]
    }

    enum Problem: String, Error, Equatable {
        case notBase64 = "not a base64 data: URL"
        case badBase64 = "the base64 text is not valid"
        case tooLarge = "larger than the attachment limit"
    }

    /// Decodes `data:[mime][;params];base64,<text>`; nil when `url` is not a data: URL.
    static func parseDataURL(_ url: String) -> Result<DataURL, Problem>? {
        let utf8 = Array(url.utf8)
        guard utf8.count >= 5, String(decoding: utf8[0..<5], as: UTF8.self).lowercased() == "data:" else { return nil }
        guard let comma = utf8.firstIndex(of: UInt8(ascii: ",")) else { return .failure(.notBase64) }
        let header = String(decoding: utf8[5..<comma], as: UTF8.self).lowercased()
        let params = header.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        guard params.count >= 2, params.last == "base64" else { return .failure(.notBase64) }
        let base64Count = utf8.count - comma - 1
        guard base64Count / 4 * 3 <= maxBytes + 3 else { return .failure(.tooLarge) }
        guard let data = Data(base64Encoded: Data(utf8[(comma + 1)...])) else { return .failure(.badBase64) }
        guard data.count <= maxBytes else { return .failure(.tooLarge) }
        return .success(DataURL(mime: params[0], bytes: Array(data)))
    }

    /// `[A-Za-z0-9._-]` only (others become `_`), at most `limit` characters, no leading dot.
    static func safeComponent(_ text: String, limit: Int) -> String {
        var out = ""
        for s in text.unicodeScalars {
            guard out.unicodeScalars.count < limit else { break }
            switch s {
            case "a"..."z", "A"..."Z", "0"..."9", ".", "-", "_": out.unicodeScalars.append(s)
            default: out.unicodeScalars.append("_")
            }
        }
        while out.hasPrefix(".") { out.removeFirst() }
        return out
    }

    /// The file extension for a MIME type (`bin` when unknown).
    static func fileExtension(_ mime: String) -> String {
        switch mime.lowercased() {
        case "image/png": "png"
        case "image/jpeg", "image/jpg": "jpg"
        case "image/gif": "gif"
        case "image/webp": "webp"
        case "image/svg+xml": "svg"
        case "image/avif": "avif"
        case "application/pdf": "pdf"
        case "text/plain": "txt"
        case "application/json": "json"
        case "application/zip": "zip"
        default: "bin"
        }
    }

    /// The path inside the session folder for attachment `index` of chat `chatID`.
    static func relativePath(chatID: String, index: Int, mime: String, kind: String, name: String) -> String {
        let id = safeComponent(chatID, limit: maxIDLength)
        let stem = "\(id.isEmpty ? "chat" : id)-\(index)"
        if kind == "file" {
            let safe = safeComponent(name, limit: maxNameLength)
            if !safe.isEmpty { return "attachments/\(stem)-\(safe)" }
        }
        return "attachments/\(stem).\(fileExtension(mime))"
    }

    /// Writes `bytes` under the session folder at `relative` (or with `-2`, `-3`… before the
    /// extension when taken); returns the path written, relative to the folder.
    func write(_ bytes: [UInt8], relative: String) throws -> String {
        let allowed = saved.withLock { total in
            guard total + bytes.count <= sessionLimit else { return false }
            total += bytes.count
            return true
        }
        guard allowed else { throw CommandFailure(.failure, "the session's attachments reached \(sessionLimit) bytes; not saved") }
        let folder = directory + "/attachments"
        if mkdir(folder, 0o750) != 0 && errno != EEXIST {
            throw CommandFailure(.failure, "cannot create \(folder): \(String(cString: strerror(errno)))")
        }
        var candidate = relative
        for attempt in 1...50 {
            if attempt > 1 {  // "attachments/x-0.png" → "attachments/x-0-2.png"
                let name = relative.split(separator: "/").last.map(String.init) ?? relative
                let dot = name.lastIndex(of: ".") ?? name.endIndex
                candidate = "attachments/" + name[..<dot] + "-\(attempt)" + name[dot...]
            }
            let fd = open(directory + "/" + candidate, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
            if fd < 0 {
                if errno == EEXIST { continue }
                throw CommandFailure(.failure, "cannot write \(candidate): \(String(cString: strerror(errno)))")
            }
            defer { close(fd) }
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, bytes.count - offset) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 {
                    let e = errno
                    unlink(directory + "/" + candidate)
                    throw CommandFailure(.failure, "cannot write \(candidate): \(String(cString: strerror(e)))")
                }
                offset += n
            }
            return candidate
        }
        throw CommandFailure(.failure, "cannot write \(relative): too many attachments with this name")
    }

    /// One attachment as the `chat` event shows it: an `http(s)` (or other) URL stays a
    /// URL; a `data:` URL is decoded and, with a store (recording), saved, the event then
    /// carrying `path` and `bytes` in place of the base64. Without a store it carries
    /// `bytes` and `saved: false`.
    static func eventFields(_ a: BedrudChatPayload.Attachment, chatID: String, index: Int, store: AttachmentStore?) -> TranscriptEvent.Attachment {
        var fields = TranscriptEvent.Attachment(kind: BoundedText(a.kind), mime: BoundedText(a.mime))
        if !a.name.isEmpty { fields.name = BoundedText(a.name) }
        guard let parsed = parseDataURL(a.url) else {
            fields.url = BoundedText(a.url)
            fields.size = a.size
            return fields
        }
        switch parsed {
        case .failure(let problem):
            fields.error = BoundedText(problem.rawValue)
        case .success(let data):
            if a.mime.isEmpty { fields.mime = BoundedText(data.mime) }
            fields.bytes = data.bytes.count
            guard let store else {
                fields.saved = false
                return fields
            }
            do {
                let mime = a.mime.isEmpty ? data.mime : a.mime
                fields.path = BoundedText(try store.write(data.bytes, relative: relativePath(chatID: chatID, index: index, mime: mime, kind: a.kind, name: a.name)))
                fields.saved = true
            } catch {
                fields.saved = false
                fields.error = BoundedText("\(error)")
            }
        }
        return fields
    }
}
