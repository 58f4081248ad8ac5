import COpenSSL
import Foundation
import Testing
@testable import BedrudRTC

/// Two DTLS transports wired back to back in memory, with a hand-driven clock for their
/// retransmission timers. Single-threaded: no loop needed.
final class DTLSPair {
    final class End: DTLSTransportDelegate {
        weak var pair: DTLSPair?
        var transport: DTLSTransport!
        var timer: UInt64?
        var keys: SRTPKeyingMaterial?
        var connected = false
        var failure: DTLSError?
        var closed = false
        var received: [[UInt8]] = []
        var sentDatagrams = 0

        func dtlsSend(_ datagram: UnsafeRawBufferPointer) {
            sentDatagrams += 1
            pair?.enqueue(from: self, Array(datagram))
        }
        func dtlsSetTimer(nanos: UInt64?) { timer = nanos }
        func dtlsConnected(keys: SRTPKeyingMaterial?) {
            connected = true
            self.keys = keys
        }
        func dtlsReceived(_ data: UnsafeRawBufferPointer) { received.append(Array(data)) }
        func dtlsFailed(_ error: DTLSError) { failure = error }
        func dtlsClosed() { closed = true }
    }

    let client = End()
    let server = End()
    private var queue: [(to: End, bytes: [UInt8])] = []
    /// Drops the n-th datagram each side sends (0-based), once.
    var dropClient: Set<Int> = []
    var dropServer: Set<Int> = []

    init(clientExpects: [DTLSFingerprint]? = nil, serverExpects: [DTLSFingerprint]? = nil) throws {
        let ci = try DTLSIdentity(), si = try DTLSIdentity()
        client.transport = try DTLSTransport(identity: ci, role: .client, remoteFingerprints: clientExpects ?? [si.fingerprint])
        server.transport = try DTLSTransport(identity: si, role: .server, remoteFingerprints: serverExpects ?? [ci.fingerprint])
        client.pair = self
        server.pair = self
        client.transport.delegate = client
        server.transport.delegate = server
    }

    func enqueue(from: End, _ bytes: [UInt8]) {
        let index = from.sentDatagrams - 1
        if from === client, dropClient.remove(index) != nil { return }
        if from === server, dropServer.remove(index) != nil { return }
        queue.append((from === client ? server : client, bytes))
    }

    /// Removes and returns the datagrams queued for `end`, undelivered.
    func takeQueued(to end: End) -> [[UInt8]] {
        let taken = queue.filter { $0.to === end }.map(\.bytes)
        queue.removeAll { $0.to === end }
        return taken
    }

    /// Delivers datagrams until none are left; fires the earliest timer when idle, up to `maxTimerFires` times.
    func run(maxTimerFires: Int = 10) {
        var fires = 0
        while true {
            while !queue.isEmpty {
                let (to, bytes) = queue.removeFirst()
                bytes.withUnsafeBytes { to.transport.handleDatagram($0) }
            }
            let done = (client.connected && server.connected) || client.failure != nil || server.failure != nil
            if done || fires >= maxTimerFires { return }
            let ends = [client, server].filter { $0.timer != nil }.sorted { $0.timer! < $1.timer! }
            guard let next = ends.first, let wait = next.timer else { return }
            next.timer = nil
            // OpenSSL checks its own clock before retransmitting: let the deadline pass.
            usleep(UInt32(min(2_000_000, wait / 1000 + 2000)))
            next.transport.handleTimeout()
            fires += 1
        }
    }
}

@Suite("DTLS 1.2 on OpenSSL")
struct DTLSTransportTests {
    @Test("Self-signed P-256 identity with a SHA-256 fingerprint")
    func identity() throws {
        let a = try DTLSIdentity(), b = try DTLSIdentity()
        #expect(a.fingerprint.algorithm == "sha-256" && a.fingerprint.bytes.count == 32)
        #expect(a.fingerprint != b.fingerprint)
        #expect(DTLSIdentity.digest(of: a.certificate, algorithm: "sha-256") == a.fingerprint)
        #expect(DTLSIdentity.digest(of: a.certificate, algorithm: "sha-512")?.bytes.count == 64)
        #expect(DTLSIdentity.digest(of: a.certificate, algorithm: "md5") == nil)
    }

    @Test("Handshake completes; both sides export the same SRTP keys (GCM preferred); app data flows both ways")
    func handshake() throws {
        let p = try DTLSPair()
        p.server.transport.start()
        p.client.transport.start()
        p.run()
        #expect(p.client.connected && p.server.connected)
        let ck = try #require(p.client.keys), sk = try #require(p.server.keys)
        #expect(ck.profile == .aeadAES128GCM && sk.profile == .aeadAES128GCM)
        #expect(ck.clientWriteKey == sk.clientWriteKey && ck.serverWriteKey == sk.serverWriteKey)
        #expect(ck.clientWriteKey != ck.serverWriteKey)
        #expect(p.client.transport.srtpProfile == .aeadAES128GCM)
        // Keys work with SRTP across the two roles.
        let c = try LibSRTPTransform(profile: ck.profile, localKey: ck.keys(isClient: true).local, remoteKey: ck.keys(isClient: true).remote)
        let s = try LibSRTPTransform(profile: sk.profile, localKey: sk.keys(isClient: false).local, remoteKey: sk.keys(isClient: false).remote)
        let rtp = makeRTP(seq: 1, ts: 1, ssrc: 1, payload: [1, 2, 3])
        #expect(unprotect(s, try #require(protect(c, rtp))).1 == rtp)
        #expect(unprotect(c, try #require(protect(s, rtp))).1 == rtp)
        // Application data (what SCTP uses).
        #expect(([9, 8, 7] as [UInt8]).withUnsafeBytes { p.client.transport.send($0) })
        #expect(([6] as [UInt8]).withUnsafeBytes { p.server.transport.send($0) })
        p.run()
        #expect(p.server.received == [[9, 8, 7]] && p.client.received == [[6]])
        // close_notify reaches the other side.
        p.client.transport.close()
        p.run()
        #expect(p.server.closed)
    }

    @Test("Lost flights are retransmitted by the 100 ms timer", arguments: [([0], []), ([], [0]), ([0, 1], [1])] as [(Set<Int>, Set<Int>)])
    func retransmission(dropClient: Set<Int>, dropServer: Set<Int>) throws {
        let p = try DTLSPair()
        p.dropClient = dropClient
        p.dropServer = dropServer
        p.server.transport.start()
        p.client.transport.start()
        let t = try #require(p.client.timer)
        #expect(t > 50_000_000 && t <= 100_000_000)
        p.run(maxTimerFires: 20)
        #expect(p.client.connected && p.server.connected)
    }

    @Test("A certificate that does not match the expected fingerprint is refused on either side", arguments: [true, false])
    func fingerprintMismatch(clientChecks: Bool) throws {
        let wrong = DTLSFingerprint(algorithm: "sha-256", bytes: Array(repeating: 0x42, count: 32))
        let p = clientChecks ? try DTLSPair(clientExpects: [wrong]) : try DTLSPair(serverExpects: [wrong])
        p.server.transport.start()
        p.client.transport.start()
        p.run()
        let failed = clientChecks ? p.client : p.server
        let error = try #require(failed.failure)
        #expect(error.isFingerprintMismatch)
        #expect(error.description.contains("does not match"))
        #expect(!failed.connected)
    }

    @Test("Every listed fingerprint with a known hash must match; unknown hashes are skipped")
    func multipleFingerprints() throws {
        let si = try DTLSIdentity()
        let sha512 = try #require(DTLSIdentity.digest(of: si.certificate, algorithm: "sha-512"))
        let unknown = DTLSFingerprint(algorithm: "md2", bytes: Array(repeating: 1, count: 16))
        #expect(DTLSTransport.matches(si.certificate, [si.fingerprint, sha512, unknown]) == si.fingerprint)
        var bad = sha512
        bad.bytes[0] ^= 1
        #expect(DTLSTransport.matches(si.certificate, [si.fingerprint, bad]) == nil)
        #expect(DTLSTransport.matches(si.certificate, [unknown]) == nil)
    }

    /// One DTLS 1.2 record header (RFC 6347 §4.1) and `body`.
    private func record(type: UInt8 = 23, epoch: UInt16, sequence: UInt64 = 0x1234, body: [UInt8]) -> [UInt8] {
        [type, 0xFE, 0xFD, UInt8(epoch >> 8), UInt8(epoch & 0xFF)]
            + (0..<6).map { UInt8(truncatingIfNeeded: sequence >> (8 * (5 - $0))) }
            + [UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
    }

    // OpenSSL 3.0 answers these with a fatal alert instead of discarding them; the
    // transport takes them out first (RFC 6347 §4.1.2.7).
    @Test("Protected records shorter than the AEAD's nonce + tag are dropped before OpenSSL; oversized ones OpenSSL discards; the session survives on both sides")
    func recordsOpenSSLWouldDieOn() throws {
        let p = try DTLSPair()
        p.server.transport.start()
        p.client.transport.start()
        p.run()
        #expect(p.client.connected && p.server.connected)
        // AES-128-GCM: a protected record needs 8 (nonce) + 16 (tag) bytes.
        #expect(DTLSTransport.minimumProtectedBody(cipherNID: NID_aes_128_gcm) == 24)
        #expect(DTLSTransport.minimumProtectedBody(cipherNID: NID_chacha20_poly1305) == 16)
        #expect(DTLSTransport.minimumProtectedBody(cipherNID: nil) == 24)

        let short = [0, 1, 15, 16, 23].map { record(epoch: 1, body: Array(repeating: 0xA5, count: $0)) }
        for d in short {
            d.withUnsafeBytes { p.server.transport.handleDatagram($0) }
        }
        #expect(p.server.failure == nil, "\(p.server.failure.map(String.init(describing:)) ?? "")")
        #expect(p.server.transport.droppedRecords == short.count)
        #expect(p.server.transport.droppedDatagrams == short.count)
        // Long enough to reach OpenSSL, whose tag check discards them: a minimal forged
        // record, an oversized one (RFC 5246 §6.2.3 allows 2^14 + 2048), and an epoch-0
        // record after the handshake.
        let reachOpenSSL = [record(epoch: 1, body: Array(repeating: 0xA5, count: 24)),
                            record(epoch: 1, body: Array(repeating: 2, count: 16_384 + 2048)),
                            record(type: 22, epoch: 0, body: Array(repeating: 3, count: 40))]
        for d in reachOpenSSL {
            d.withUnsafeBytes { p.server.transport.handleDatagram($0) }
        }
        #expect(p.server.failure == nil)
        #expect(p.server.transport.droppedRecords == short.count)

        // A short record in front of a real one: only the short one goes.
        #expect(([4, 5, 6] as [UInt8]).withUnsafeBytes { p.client.transport.send($0) })
        let real = try #require(p.takeQueued(to: p.server).first)
        (short[2] + real + short[0]).withUnsafeBytes { p.server.transport.handleDatagram($0) }
        #expect(p.server.received == [[4, 5, 6]])
        #expect(p.server.transport.droppedRecords == short.count + 2)

        // The client side, and both directions still work.
        short[4].withUnsafeBytes { p.client.transport.handleDatagram($0) }
        #expect(([7] as [UInt8]).withUnsafeBytes { p.server.transport.send($0) })
        #expect(([8] as [UInt8]).withUnsafeBytes { p.client.transport.send($0) })
        p.run()
        #expect(p.client.failure == nil && p.server.failure == nil)
        #expect(p.client.received == [[7]] && p.server.received == [[4, 5, 6], [8]])
    }

    @Test("Record scanner: valid flights pass, malformed records are refused")
    func scanner() throws {
        let p = try DTLSPair()
        var first: [UInt8] = []
        final class Capture: DTLSTransportDelegate {
            var d: [[UInt8]] = []
            func dtlsSend(_ datagram: UnsafeRawBufferPointer) { d.append(Array(datagram)) }
            func dtlsSetTimer(nanos: UInt64?) {}
            func dtlsConnected(keys: SRTPKeyingMaterial?) {}
            func dtlsReceived(_ data: UnsafeRawBufferPointer) {}
            func dtlsFailed(_ error: DTLSError) {}
            func dtlsClosed() {}
        }
        let cap = Capture()
        p.client.transport.delegate = cap
        p.client.transport.start()
        first = try #require(cap.d.first)
        #expect(try first.withUnsafeBytes { try DTLSRecordScanner.validate($0) } == 1)
        #expect(try (first + first).withUnsafeBytes { try DTLSRecordScanner.validate($0) } == 2)
        var badType = first
        badType[0] = 30
        var badVersion = first
        badVersion[1] = 0x03
        var overrun = first
        overrun[11] = 0x01
        let cases: [([UInt8], DTLSRecordError)] = [([], .empty), (Array(first[0..<10]), .truncatedHeader), (badType, .badContentType), (badVersion, .badVersion), (overrun, .lengthOverrun)]
        for (bytes, e) in cases {
            #expect(throws: e) { try bytes.withUnsafeBytes { try DTLSRecordScanner.validate($0) } }
        }
        // Refused datagrams never reach OpenSSL and are counted.
        badType.withUnsafeBytes { p.server.transport.handleDatagram($0) }
        #expect(p.server.transport.droppedDatagrams == 1 && p.server.failure == nil)
    }
}
