import BedrudNet
import Testing
import TestSupport

@Suite struct WebSocketFrameTests {
    /// Server frames (unmasked) for a message split in fragments with a ping in between.
    static let wire: [UInt8] = {
        var b: [UInt8] = []
        b += WebSocketFrame(fin: false, opcode: .text, payload: Array("Hel".utf8)).encode(maskKey: nil)
        b += WebSocketFrame(opcode: .ping, payload: [1, 2]).encode(maskKey: nil)
        b += WebSocketFrame(fin: true, opcode: .continuation, payload: Array("lo".utf8)).encode(maskKey: nil)
        b += WebSocketFrame(opcode: .binary, payload: [UInt8](repeating: 7, count: 300)).encode(maskKey: nil)
        b += WebSocketFrame(opcode: .binary, payload: [UInt8](repeating: 9, count: 70_000)).encode(maskKey: nil)
        b += WebSocketFrame(opcode: .close, payload: [0x03, 0xE8] + Array("done".utf8)).encode(maskKey: nil)
        return b
    }()

    func decodeAll(_ bytes: [UInt8], chunk: Int) throws -> [WebSocketMessage] {
        var d = WebSocketFrameDecoder(maxFramePayload: 1 << 20)
        var a = WebSocketMessageAssembler(maxMessageSize: 1 << 20)
        var out: [WebSocketMessage] = []
        var i = 0
        while i < bytes.count {
            d.append(Array(bytes[i..<min(bytes.count, i + chunk)]))
            i += chunk
            while let f = try d.next() { if let m = try a.push(f) { out.append(m) } }
        }
        return out
    }

    @Test(arguments: [1, 3, 125, 4096, 1 << 20])
    func sameMessagesWhateverTheSplit(chunk: Int) throws {
        let m = try decodeAll(Self.wire, chunk: chunk)
        #expect(m.count == 5)
        #expect(m[0] == .ping([1, 2]))
        #expect(m[1] == .text("Hello"))
        #expect(m[2] == .data([UInt8](repeating: 7, count: 300)))
        #expect(m[3] == .data([UInt8](repeating: 9, count: 70_000)))
        #expect(m[4] == .close(code: 1000, reason: "done"))
    }

    @Test func clientFramesAreMaskedPerRFC() {
        // RFC 6455 §5.7: a masked "Hello" with key 37 fa 21 3d.
        let f = WebSocketFrame(opcode: .text, payload: Array("Hello".utf8)).encode(maskKey: (0x37, 0xFA, 0x21, 0x3D))
        #expect(f == [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
        // Unmasked "Hello" from the same section.
        #expect(WebSocketFrame(opcode: .text, payload: Array("Hello".utf8)).encode(maskKey: nil) == [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
        // 256-byte binary uses the 16-bit length form.
        #expect(Array(WebSocketFrame(opcode: .binary, payload: [UInt8](repeating: 0, count: 256)).encode(maskKey: nil).prefix(4)) == [0x82, 0x7E, 0x01, 0x00])
    }

    static let violations: [([UInt8], UInt16)] = [
        ([0x81, 0x82, 0, 0, 0, 0, 0x41, 0x42], 1002),           // masked frame from a server
        ([0xC1, 0x01, 0x41], 1002),                             // RSV1 without an extension
        ([0x83, 0x00], 1002),                                   // reserved opcode
        ([0x09, 0x00], 1002),                                   // fragmented ping
        ([0x89, 0x7E, 0x00, 0x80] + [UInt8](repeating: 0, count: 128), 1002), // control frame > 125
        ([0x80, 0x01, 0x41], 1002),                             // continuation with nothing to continue
        ([0x81, 0x02, 0xC3, 0x28], 1007),                       // invalid UTF-8 text
        ([0x88, 0x02, 0x03, 0xED], 1002),                       // close code 1005 may not be sent
        ([0x88, 0x01, 0x03], 1002),                             // 1-byte close payload
        ([0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0], 1002),        // 64-bit length with the top bit set
        ([0x82, 0x7F, 0, 0, 0, 0, 0x7F, 0xFF, 0xFF, 0xFF], 1009), // 2 GiB frame: over the limit
        ([0x01, 0x01, 0x41, 0x81, 0x01, 0x42], 1002),            // new message inside a fragmented one
    ]

    @Test(arguments: violations)
    func protocolViolations(bytes: [UInt8], code: UInt16) {
        do {
            _ = try decodeAll(bytes, chunk: 1)
            Issue.record("accepted \(bytes)")
        } catch let e as WebSocketProtocolError {
            #expect(e.closeCode == code, "\(e.message)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func truncatedFramesWaitForMore() throws {
        let bytes = WebSocketFrame(opcode: .binary, payload: [UInt8](repeating: 1, count: 1000)).encode(maskKey: nil)
        for cut in 0..<bytes.count {
            var d = WebSocketFrameDecoder(maxFramePayload: 1 << 20)
            d.append(Array(bytes[..<cut]))
            #expect(try d.next() == nil)
        }
    }

    @Test func messageSizeLimitSpansFragments() {
        var a = WebSocketMessageAssembler(maxMessageSize: 10)
        #expect(throws: WebSocketProtocolError.self) {
            _ = try a.push(WebSocketFrame(fin: false, opcode: .binary, payload: [UInt8](repeating: 0, count: 6)))
            _ = try a.push(WebSocketFrame(fin: true, opcode: .continuation, payload: [UInt8](repeating: 0, count: 6)))
        }
    }

    @Test func randomBytesNeverCrash() {
        var rng = SeededGenerator(seed: 6455)
        for _ in 0..<3000 {
            var d = WebSocketFrameDecoder(maxFramePayload: 4096)
            var a = WebSocketMessageAssembler(maxMessageSize: 4096)
            d.append((0..<Int.random(in: 0..<64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
            while let f = try? d.next() { _ = try? a.push(f) }
        }
    }
}
