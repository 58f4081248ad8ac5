import Foundation
import Testing
@testable import BedrudBot
@testable import BedrudCore

/// `say --image`'s decisions, without a server: what a file is, the web client's checks
/// before uploading, the attachment sent for the server's answer, and the exit class of a
/// refused upload.
@Suite struct SayCommandTests {
    static func image(bytes: Int = 700_000, fileSize: Int? = nil, width: Int = 0, height: Int = 0) -> SayCommand.ImageFile {
        SayCommand.ImageFile(path: "/tmp/chart.png", bytes: [UInt8](repeating: 0, count: bytes), fileSize: fileSize ?? bytes,
                             mime: "image/png", width: width, height: height)
    }

    @Test func sniffReadsTheTypesBedrudAcceptsAndTheirPixelSize() {
        let ihdr: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8) + [0, 0, 0x02, 0x80, 0, 0, 0x01, 0xE0]
        #expect(SayCommand.sniff(ihdr)! == ("image/png", 640, 480))
        #expect(SayCommand.sniff(Array("GIF89a".utf8) + [0x10, 0x00, 0x20, 0x00])! == ("image/gif", 16, 32))
        #expect(SayCommand.sniff([0xFF, 0xD8, 0xFF, 0xE0])! == ("image/jpeg", 0, 0))
        #expect(SayCommand.sniff(Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBP".utf8))! == ("image/webp", 0, 0))
        #expect(SayCommand.sniff(Array("%PDF-1.4".utf8)) == nil)
        #expect(SayCommand.sniff([]) == nil)
    }

    @Test func theWebClientsChecksComeBeforeTheUpload() throws {
        let limits = ChatUploadLimits()
        try SayCommand.check(Self.image(bytes: 10 * 1024 * 1024, width: 8192, height: 8192), against: limits)
        let big = #expect(throws: CommandFailure.self) { try SayCommand.check(Self.image(bytes: 1000, fileSize: 10 * 1024 * 1024 + 1), against: limits) }
        #expect(big?.code == .rejected && big?.description == "--image /tmp/chart.png is 10485761 bytes; the server takes chat images of at most 10485760 bytes")
        let wide = #expect(throws: CommandFailure.self) { try SayCommand.check(Self.image(width: 10, height: 8193), against: limits) }
        #expect(wide?.code == .rejected && wide?.description == "--image /tmp/chart.png is 10×8193 pixels; the server takes chat images of at most 8192×8192")
        let lowered = ChatUploadLimits(maxBytes: 100_000, maxDimension: 100)
        #expect(throws: CommandFailure.self) { try SayCommand.check(Self.image(bytes: 100_001), against: lowered) }
    }

    @Test func theServersLimitsDefaultAsTheWebClientsDo() throws {
        func limits(_ json: String) throws -> ChatUploadLimits {
            ChatUploadLimits(try JSONDecoder().decode(ChatUploadLimits.Answer.self, from: Data(json.utf8)))
        }
        #expect(try limits(#"{"chatUploadMaxBytes":2000000,"chatUploadMaxDimension":4096}"#) == ChatUploadLimits(maxBytes: 2_000_000, maxDimension: 4096))
        #expect(try limits(#"{"registrationEnabled":true}"#) == ChatUploadLimits(maxBytes: 10_485_760, maxDimension: 8192))
        #expect(try limits(#"{"chatUploadMaxBytes":0,"chatUploadMaxDimension":"big"}"#) == ChatUploadLimits())
        // A server saying "any size" cannot make say read a file without bound (or overflow).
        #expect(try limits(#"{"chatUploadMaxBytes":9223372036854775807}"#).maxBytes == 1 << 30)
    }

    @Test func theAttachmentIsTheServersAnswerFieldForField() throws {
        let stored = try JSONDecoder().decode(ChatUpload.self, from: Data(#"{"kind":"image","url":"/uploads/chat/r/u/ab.png","mime":"image/png","size":700000,"w":640,"h":480}"#.utf8))
        #expect(SayCommand.attachment(stored) == .init(kind: "image", url: "/uploads/chat/r/u/ab.png", mime: "image/png", width: 640, height: 480, size: 700_000))
        // An answer without kind (normalizeChatAttachment takes it for an image).
        let bare = try JSONDecoder().decode(ChatUpload.self, from: Data(#"{"url":"data:image/gif;base64,R0lG","mime":"image/gif","size":4,"w":0,"h":0}"#.utf8))
        #expect(SayCommand.attachment(bare).kind == "image" && SayCommand.attachment(bare).url == "data:image/gif;base64,R0lG")
    }

    @Test(arguments: [
        (401, "Invalid token", ExitCode.auth),
        (403, "Chat is disabled for this room", .forbidden),
        (404, "Room not found", .notFound),
        (400, "Image dimensions too large (max 8192x8192)", .rejected),
        (413, "Request Entity Too Large", .rejected),
        (429, "Too many requests", .rejected),
        (507, "Upload quota exceeded (max 1000 bytes per user)", .rejected),
        (500, "Failed to read upload", .server),
    ])
    func aRefusedUploadKeepsItsExitClass(status: Int, message: String, code: ExitCode) {
        let e = APIError(APIError.code(for: status), status: status, message: message, call: "POST /api/room/…/chat/upload on http://x")
        let f = SayCommand.uploadFailure(e, image: Self.image(), limits: ChatUploadLimits())
        #expect(f.code == code)
        #expect(f.description.contains("HTTP \(status): \(message)"), "\(f.description)")
        if status == 413 { #expect(f.description.contains("at most 10485760 bytes")) }
    }
}
