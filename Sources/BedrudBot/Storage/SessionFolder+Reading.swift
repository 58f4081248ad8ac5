#if canImport(Glibc)
import Glibc
#endif
import BedrudMedia
import FoundationEssentials

extension SessionFolder {
    /// A session folder as read back: `events.jsonl` as ``TranscriptLine``s, `summary.json`
    /// as a ``SessionSummary``, and the files beside them, each `.opus` verified (as
    /// `verify` does, without decoding). The one reader of a session's files, for the
    /// report, `recordings`, `status` and `repair`. Reads only; takes no lock.
    struct Contents {
        struct File: Equatable {
            var name: String
            var bytes: Int64
        }

        /// One `.opus` file and what verifying it found (nil: it could not be read at all).
        struct Audio {
            var name: String
            var bytes: Int64
            var verified: OggOpusReport?

            /// The value of an Opus tag (`PARTICIPANT_IDENTITY`, `START_OFFSET_MS`), if the file has it.
            func tag(_ key: String) -> String? { verified?.tags?.comments.first { $0.key == key }?.value }
        }

        var path: String
        /// Whether `events.jsonl` could be read as text (a folder without it is not a session).
        var hasEvents: Bool
        /// `events.jsonl`'s lines that decode, in file order.
        var lines: [TranscriptLine]
        /// Lines that did not decode (the half line a crash leaves).
        var unreadableLines: Int
        /// nil when `summary.json` is missing or is not a JSON object (a session not finished).
        var summary: SessionSummary?
        /// Every entry of the folder, sorted by name, with its size (`stat`).
        var files: [File]
        /// The files in `attachments/`, as `attachments/NAME`, sorted.
        var attachments: [File]
        /// The `.opus` files, sorted by name.
        var audio: [Audio]

        init(reading path: String) {
            let fm = FileManager.default
            self.path = path
            let text = try? String(contentsOfFile: path + "/events.jsonl", encoding: .utf8)
            hasEvents = text != nil
            (lines, unreadableLines) = TranscriptLine.read(text ?? "")
            summary = fm.contents(atPath: path + "/summary.json").flatMap { try? JSONDecoder().decode(SessionSummary.self, from: $0) }
            let names = ((try? fm.contentsOfDirectory(atPath: path)) ?? []).sorted()
            files = names.map { File(name: $0, bytes: Self.size(path + "/" + $0)) }
            attachments = names.contains("attachments")
                ? ((try? fm.contentsOfDirectory(atPath: path + "/attachments")) ?? []).sorted().map { File(name: "attachments/" + $0, bytes: Self.size(path + "/attachments/" + $0)) }
                : []
            audio = files.filter { $0.name.hasSuffix(".opus") }.map {
                Audio(name: $0.name, bytes: $0.bytes, verified: try? OggOpusVerifier.verify(path: path + "/" + $0.name))
            }
        }

        static func size(_ path: String) -> Int64 {
            var st = stat()
            return stat(path, &st) == 0 ? Int64(st.st_size) : 0
        }
    }
}
