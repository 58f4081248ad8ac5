import COpenSSL

// SRTP/SRTCP with AEAD_AES_128_GCM (RFC 7714) on OpenSSL EVP: no allocation per packet,
// keys derived with the SRTP KDF (RFC 3711 §4.3.1), 64-bit indexes with the RFC 3711
// Appendix A estimate (libsrtp's rule for a fresh stream), replay windows per SSRC.
// libsrtp2 is its test oracle (both directions, RTP and RTCP).
//
// SRTP:  | RTP header (AAD) | ciphertext(payload) | tag(16) |
//        IV = (00 00 || SSRC || ROC || SEQ) XOR session salt
// SRTCP: | header+SSRC (AAD, 8) | ciphertext | tag(16) | E|index (4, AAD) |
//        IV = (00 00 || SSRC || 00 00 || index) XOR session salt

/// ``SRTPTransform`` for `SRTP_AEAD_AES_128_GCM` on OpenSSL EVP.
public final class EVPGCMTransform: SRTPTransform {
    public var profile: SRTPProfile { .aeadAES128GCM }

    private let rtpIn: OpaquePointer
    private let rtpOut: OpaquePointer
    private let rtcpIn: OpaquePointer
    private let rtcpOut: OpaquePointer
    private let rtpSaltIn: (UInt64, UInt32)
    private let rtpSaltOut: (UInt64, UInt32)
    private let rtcpSaltIn: (UInt64, UInt32)
    private let rtcpSaltOut: (UInt64, UInt32)
    private var rtpReplay: ReplayTable
    private var rtcpReplay: ReplayTable
    private var rtpSend: ReplayTable
    private var rtcpSendIndex: UInt32 = 0

    static let tagLength = 16
    /// Replay window of SRTP, as the libsrtp2 contexts use.
    public static let rtpWindow = 1024
    public static let rtcpWindow = 128
    /// Most SSRCs tracked per direction; packets of further SSRCs are refused (counted as failures).
    public static let maxStreams = 512

    /// - Parameters:
    ///   - localKey: master key (16) || master salt (12) we protect with.
    ///   - remoteKey: the peer's.
    public init(localKey: [UInt8], remoteKey: [UInt8]) throws(SRTPError) {
        guard localKey.count == 28, remoteKey.count == 28 else { throw SRTPError(.badKeyLength) }
        func derive(_ master: [UInt8], _ label: UInt8, _ n: Int) throws(SRTPError) -> [UInt8] {
            guard let v = Self.kdf(masterKey: Array(master[0..<16]), masterSalt: Array(master[16..<28]), label: label, length: n) else {
                throw SRTPError(.createFailed(0))
            }
            return v
        }
        func context(_ key: [UInt8], encrypt: Bool) throws(SRTPError) -> OpaquePointer {
            guard let ctx = EVP_CIPHER_CTX_new() else { throw SRTPError(.createFailed(0)) }
            let ok = key.withUnsafeBufferPointer { k in
                encrypt ? EVP_EncryptInit_ex(ctx, EVP_aes_128_gcm(), nil, k.baseAddress, nil) : EVP_DecryptInit_ex(ctx, EVP_aes_128_gcm(), nil, k.baseAddress, nil)
            }
            guard ok == 1 else {
                EVP_CIPHER_CTX_free(ctx)
                throw SRTPError(.createFailed(0))
            }
            return ctx
        }
        func salt(_ s: [UInt8]) -> (UInt64, UInt32) {
            var hi: UInt64 = 0
            for i in 0..<8 { hi = hi << 8 | UInt64(s[i]) }
            var lo: UInt32 = 0
            for i in 8..<12 { lo = lo << 8 | UInt32(s[i]) }
            return (hi, lo)
        }
        // Labels (RFC 3711 §4.3.2): 0 SRTP key, 2 SRTP salt, 3 SRTCP key, 5 SRTCP salt.
        rtpIn = try context(try derive(remoteKey, 0x00, 16), encrypt: false)
        rtpOut = try context(try derive(localKey, 0x00, 16), encrypt: true)
        rtcpIn = try context(try derive(remoteKey, 0x03, 16), encrypt: false)
        rtcpOut = try context(try derive(localKey, 0x03, 16), encrypt: true)
        rtpSaltIn = salt(try derive(remoteKey, 0x02, 12))
        rtpSaltOut = salt(try derive(localKey, 0x02, 12))
        rtcpSaltIn = salt(try derive(remoteKey, 0x05, 12))
        rtcpSaltOut = salt(try derive(localKey, 0x05, 12))
        rtpReplay = ReplayTable(capacity: Self.maxStreams, windowBits: Self.rtpWindow)
        rtcpReplay = ReplayTable(capacity: Self.maxStreams, windowBits: Self.rtcpWindow)
        rtpSend = ReplayTable(capacity: Self.maxStreams, windowBits: 64)
    }

    deinit {
        for c in [rtpIn, rtpOut, rtcpIn, rtcpOut] { EVP_CIPHER_CTX_free(c) }
        rtpReplay.deallocate()
        rtcpReplay.deallocate()
        rtpSend.deallocate()
    }

    /// The SRTP key derivation function, AES-CM PRF (RFC 3711 §4.3.1 and §4.3.3), with kdr 0.
    /// A 96-bit (GCM) master salt is used as the first 96 bits of the 112-bit x.
    static func kdf(masterKey: [UInt8], masterSalt: [UInt8], label: UInt8, length: Int) -> [UInt8]? {
        guard let ctx = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(ctx) }
        guard masterKey.withUnsafeBufferPointer({ EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), nil, $0.baseAddress, nil) }) == 1 else { return nil }
        EVP_CIPHER_CTX_set_padding(ctx, 0)
        var x = [UInt8](repeating: 0, count: 16)
        for i in 0..<min(14, masterSalt.count) { x[i] = masterSalt[i] }
        x[7] ^= label  // key_id = label || r (r = 0), aligned to the low 56 bits of the 112-bit salt
        var out: [UInt8] = []
        var counter: UInt16 = 0
        while out.count < length {
            var block = x
            block[14] = UInt8(counter >> 8)
            block[15] = UInt8(counter & 0xFF)
            var enc = [UInt8](repeating: 0, count: 32)
            var n: Int32 = 0
            guard EVP_EncryptUpdate(ctx, &enc, &n, block, 16) == 1, n == 16 else { return nil }
            out += enc[0..<16]
            counter &+= 1
        }
        for i in x.indices { x[i] = 0 }
        return Array(out[0..<length])
    }

    // MARK: - SRTP

    @inline(__always)
    private static func iv(_ salt: (UInt64, UInt32), ssrc: UInt32, roc: UInt32, seq: UInt16, into p: UnsafeMutablePointer<UInt8>) {
        // 00 00 | SSRC(4) | ROC(4) | SEQ(2), XOR salt(12).
        let hi = UInt64(ssrc) << 16 | UInt64(roc >> 16)
        let lo = (roc & 0xFFFF) << 16 | UInt32(seq)
        store(hi ^ salt.0, lo ^ salt.1, p)
    }

    @inline(__always)
    private static func store(_ hi: UInt64, _ lo: UInt32, _ p: UnsafeMutablePointer<UInt8>) {
        for i in 0..<8 { p[i] = UInt8(truncatingIfNeeded: hi >> (56 - 8 * i)) }
        for i in 0..<4 { p[8 + i] = UInt8(truncatingIfNeeded: lo >> (24 - 8 * i)) }
    }

    /// RTP header length (12 + CSRCs + extension), or nil if the header is not complete.
    @inline(__always)
    private static func headerLength(_ b: UnsafeMutableRawPointer, _ n: Int) -> Int? {
        guard n >= 12 else { return nil }
        let b0 = b.load(as: UInt8.self)
        guard b0 >> 6 == 2 else { return nil }
        var h = 12 + 4 * Int(b0 & 0x0F)
        if b0 & 0x10 != 0 {
            guard h + 4 <= n else { return nil }
            let words = Int(b.load(fromByteOffset: h + 2, as: UInt8.self)) << 8 | Int(b.load(fromByteOffset: h + 3, as: UInt8.self))
            h += 4 + 4 * words
        }
        return h <= n ? h : nil
    }

    @inline(__always)
    private static func be32(_ b: UnsafeMutableRawPointer, _ o: Int) -> UInt32 {
        UInt32(b.load(fromByteOffset: o, as: UInt8.self)) << 24 | UInt32(b.load(fromByteOffset: o + 1, as: UInt8.self)) << 16
            | UInt32(b.load(fromByteOffset: o + 2, as: UInt8.self)) << 8 | UInt32(b.load(fromByteOffset: o + 3, as: UInt8.self))
    }

    public func unprotectRTP(_ buffer: UnsafeMutableRawPointer, length: Int) -> SRTPStatus {
        guard length >= 12 + Self.tagLength, length <= Int(Int32.max), let h = Self.headerLength(buffer, length - Self.tagLength) else { return .malformed }
        let seq = UInt16(buffer.load(fromByteOffset: 2, as: UInt8.self)) << 8 | UInt16(buffer.load(fromByteOffset: 3, as: UInt8.self))
        let ssrc = Self.be32(buffer, 8)
        guard let slot = rtpReplay.slot(for: ssrc) else { return .failed(code: -1) }
        let index = rtpReplay.estimate(slot: slot, seq: seq)
        guard rtpReplay.check(slot: slot, index: index) else { return .replayed }
        var ivBytes: (UInt64, UInt32) = (0, 0)
        let ok = withUnsafeMutableBytes(of: &ivBytes) { ivp -> Bool in
            let iv = ivp.baseAddress!.assumingMemoryBound(to: UInt8.self)
            Self.iv(rtpSaltIn, ssrc: ssrc, roc: UInt32(truncatingIfNeeded: index >> 16), seq: seq, into: iv)
            return Self.open(rtpIn, iv: iv, aad: buffer, aadLength: h, data: buffer + h, dataLength: length - h - Self.tagLength, tag: buffer + (length - Self.tagLength))
        }
        guard ok else { return .authenticationFailed }
        rtpReplay.accept(slot: slot, index: index)
        return .ok(length: length - Self.tagLength)
    }

    public func protectRTP(_ buffer: UnsafeMutableRawPointer, length: Int, capacity: Int) -> SRTPStatus {
        guard capacity >= length + Self.tagLength, length <= Int(Int32.max), let h = Self.headerLength(buffer, length) else { return .malformed }
        let seq = UInt16(buffer.load(fromByteOffset: 2, as: UInt8.self)) << 8 | UInt16(buffer.load(fromByteOffset: 3, as: UInt8.self))
        let ssrc = Self.be32(buffer, 8)
        guard let slot = rtpSend.slot(for: ssrc) else { return .failed(code: -1) }
        let index = rtpSend.estimate(slot: slot, seq: seq)
        rtpSend.acceptUnchecked(slot: slot, index: index)
        var ivBytes: (UInt64, UInt32) = (0, 0)
        let ok = withUnsafeMutableBytes(of: &ivBytes) { ivp -> Bool in
            let iv = ivp.baseAddress!.assumingMemoryBound(to: UInt8.self)
            Self.iv(rtpSaltOut, ssrc: ssrc, roc: UInt32(truncatingIfNeeded: index >> 16), seq: seq, into: iv)
            return Self.seal(rtpOut, iv: iv, aad: buffer, aadLength: h, data: buffer + h, dataLength: length - h, tag: buffer + length)
        }
        return ok ? .ok(length: length + Self.tagLength) : .failed(code: -2)
    }

    // MARK: - SRTCP

    public func unprotectRTCP(_ buffer: UnsafeMutableRawPointer, length: Int) -> SRTPStatus {
        guard length >= 8 + Self.tagLength + 4, length <= Int(Int32.max) else { return .malformed }
        guard buffer.load(as: UInt8.self) >> 6 == 2 else { return .malformed }
        let ssrc = Self.be32(buffer, 4)
        let trailer = Self.be32(buffer, length - 4)
        let encrypted = trailer & 0x8000_0000 != 0
        let index = trailer & 0x7FFF_FFFF
        guard let slot = rtcpReplay.slot(for: ssrc) else { return .failed(code: -1) }
        guard rtcpReplay.check(slot: slot, index: UInt64(index)) else { return .replayed }
        var ivBytes: (UInt64, UInt32) = (0, 0)
        let bodyEnd = length - 4 - Self.tagLength
        let ok = withUnsafeMutableBytes(of: &ivBytes) { ivp -> Bool in
            let iv = ivp.baseAddress!.assumingMemoryBound(to: UInt8.self)
            Self.store(UInt64(ssrc) << 16 ^ rtcpSaltIn.0, index ^ rtcpSaltIn.1, iv)
            if encrypted {
                // AAD = header+SSRC || E|index; the trailer is contiguous only with the tag in between,
                // so the AAD goes in two pieces.
                return Self.open(rtcpIn, iv: iv, aad: buffer, aadLength: 8, aad2: buffer + (length - 4), aad2Length: 4,
                                 data: buffer + 8, dataLength: bodyEnd - 8, tag: buffer + bodyEnd)
            }
            // E = 0: everything is authenticated, nothing encrypted.
            return Self.open(rtcpIn, iv: iv, aad: buffer, aadLength: bodyEnd, aad2: buffer + (length - 4), aad2Length: 4,
                             data: buffer + bodyEnd, dataLength: 0, tag: buffer + bodyEnd)
        }
        guard ok else { return .authenticationFailed }
        rtcpReplay.accept(slot: slot, index: UInt64(index))
        return .ok(length: bodyEnd)
    }

    public func protectRTCP(_ buffer: UnsafeMutableRawPointer, length: Int, capacity: Int) -> SRTPStatus {
        guard length >= 8, capacity >= length + Self.tagLength + 4, length <= Int(Int32.max) else { return .malformed }
        rtcpSendIndex = (rtcpSendIndex &+ 1) & 0x7FFF_FFFF
        let index = rtcpSendIndex
        let ssrc = Self.be32(buffer, 4)
        let trailer = index | 0x8000_0000
        let t = buffer + (length + Self.tagLength)
        for i in 0..<4 { t.storeBytes(of: UInt8(truncatingIfNeeded: trailer >> (24 - 8 * i)), toByteOffset: i, as: UInt8.self) }
        var ivBytes: (UInt64, UInt32) = (0, 0)
        let ok = withUnsafeMutableBytes(of: &ivBytes) { ivp -> Bool in
            let iv = ivp.baseAddress!.assumingMemoryBound(to: UInt8.self)
            Self.store(UInt64(ssrc) << 16 ^ rtcpSaltOut.0, index ^ rtcpSaltOut.1, iv)
            return Self.seal(rtcpOut, iv: iv, aad: buffer, aadLength: 8, aad2: t, aad2Length: 4, data: buffer + 8, dataLength: length - 8, tag: buffer + length)
        }
        return ok ? .ok(length: length + Self.tagLength + 4) : .failed(code: -2)
    }

    // MARK: - EVP

    @inline(__always)
    private static func open(_ ctx: OpaquePointer, iv: UnsafeMutablePointer<UInt8>, aad: UnsafeMutableRawPointer, aadLength: Int,
                             aad2: UnsafeMutableRawPointer? = nil, aad2Length: Int = 0,
                             data: UnsafeMutableRawPointer, dataLength: Int, tag: UnsafeMutableRawPointer) -> Bool {
        var n: Int32 = 0
        guard EVP_DecryptInit_ex(ctx, nil, nil, nil, iv) == 1 else { return false }
        let a = aad.assumingMemoryBound(to: UInt8.self)
        guard aadLength == 0 || EVP_DecryptUpdate(ctx, nil, &n, a, Int32(aadLength)) == 1 else { return false }
        if let aad2, aad2Length > 0 {
            guard EVP_DecryptUpdate(ctx, nil, &n, aad2.assumingMemoryBound(to: UInt8.self), Int32(aad2Length)) == 1 else { return false }
        }
        let d = data.assumingMemoryBound(to: UInt8.self)
        guard dataLength == 0 || EVP_DecryptUpdate(ctx, d, &n, d, Int32(dataLength)) == 1 else { return false }
        guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, Int32(tagLength), tag) == 1 else { return false }
        return EVP_DecryptFinal_ex(ctx, d + Int(max(0, dataLength)), &n) == 1
    }

    @inline(__always)
    private static func seal(_ ctx: OpaquePointer, iv: UnsafeMutablePointer<UInt8>, aad: UnsafeMutableRawPointer, aadLength: Int,
                             aad2: UnsafeMutableRawPointer? = nil, aad2Length: Int = 0,
                             data: UnsafeMutableRawPointer, dataLength: Int, tag: UnsafeMutableRawPointer) -> Bool {
        var n: Int32 = 0
        guard EVP_EncryptInit_ex(ctx, nil, nil, nil, iv) == 1 else { return false }
        guard aadLength == 0 || EVP_EncryptUpdate(ctx, nil, &n, aad.assumingMemoryBound(to: UInt8.self), Int32(aadLength)) == 1 else { return false }
        if let aad2, aad2Length > 0 {
            guard EVP_EncryptUpdate(ctx, nil, &n, aad2.assumingMemoryBound(to: UInt8.self), Int32(aad2Length)) == 1 else { return false }
        }
        let d = data.assumingMemoryBound(to: UInt8.self)
        guard dataLength == 0 || EVP_EncryptUpdate(ctx, d, &n, d, Int32(dataLength)) == 1 else { return false }
        guard EVP_EncryptFinal_ex(ctx, d + dataLength, &n) == 1 else { return false }
        return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, Int32(tagLength), tag) == 1
    }
}

/// Per-SSRC highest index and replay bitmap, in memory allocated once (open addressing).
struct ReplayTable {
    private let capacity: Int
    private let words: Int
    private let ssrcs: UnsafeMutablePointer<UInt32>
    private let used: UnsafeMutablePointer<Bool>
    /// Highest accepted index (ROC << 16 | SEQ for SRTP; the SRTCP index for SRTCP).
    private let highest: UnsafeMutablePointer<UInt64>
    /// Bit i set: index `highest - i` was accepted.
    private let bits: UnsafeMutablePointer<UInt64>

    init(capacity: Int, windowBits: Int) {
        self.capacity = capacity
        words = max(1, windowBits / 64)
        ssrcs = .allocate(capacity: capacity)
        ssrcs.initialize(repeating: 0, count: capacity)
        used = .allocate(capacity: capacity)
        used.initialize(repeating: false, count: capacity)
        highest = .allocate(capacity: capacity)
        highest.initialize(repeating: 0, count: capacity)
        bits = .allocate(capacity: capacity * words)
        bits.initialize(repeating: 0, count: capacity * words)
    }

    func deallocate() {
        ssrcs.deallocate()
        used.deallocate()
        highest.deallocate()
        bits.deallocate()
    }

    /// The slot of `ssrc`, claimed on first use; nil when the table is full.
    @inline(__always)
    func slot(for ssrc: UInt32) -> Int? {
        var i = Int((ssrc &* 0x9E37_79B1) >> 7) % capacity
        for _ in 0..<capacity {
            if used[i] {
                if ssrcs[i] == ssrc { return i }
            } else {
                used[i] = true
                ssrcs[i] = ssrc
                highest[i] = 0
                for w in 0..<words { bits[i * words + w] = 0 }
                return i
            }
            i = (i + 1) % capacity
        }
        return nil
    }

    /// RFC 3711 Appendix A index estimate; while the stream is young (index ≤ 2^15) the
    /// sequence number is taken as is, as libsrtp does for a fresh stream.
    @inline(__always)
    func estimate(slot: Int, seq: UInt16) -> UInt64 {
        let local = highest[slot]
        if local <= 32768 { return UInt64(seq) }
        let roc = local >> 16, localSeq = local & 0xFFFF, s = UInt64(seq)
        var guess = roc
        if localSeq < 32768 {
            if s > localSeq + 32768 { guess = roc &- 1 }
        } else if localSeq - 32768 > s {
            guess = roc + 1
        }
        return guess << 16 | s
    }

    /// False if `index` was seen or is older than the window.
    @inline(__always)
    func check(slot: Int, index: UInt64) -> Bool {
        let h = highest[slot]
        guard used[slot] else { return true }
        if index > h { return true }
        let d = h - index
        if d >= UInt64(words * 64) { return false }
        if h == 0 && index == 0 { return bits[slot * words] & 1 == 0 }
        return bits[slot * words + Int(d / 64)] & (1 << (d % 64)) == 0
    }

    /// Records an authenticated index.
    @inline(__always)
    func accept(slot: Int, index: UInt64) {
        let h = highest[slot]
        let base = slot * words
        if index > h || (h == 0 && bits[base] == 0) {
            let shift = index &- h
            if index > h {
                shiftLeft(base: base, by: shift)
                highest[slot] = index
            }
            bits[base] |= 1
        } else {
            let d = h - index
            bits[base + Int(d / 64)] |= 1 << (d % 64)
        }
    }

    /// For the sending side: only the highest index matters.
    @inline(__always)
    func acceptUnchecked(slot: Int, index: UInt64) {
        if index > highest[slot] { highest[slot] = index }
    }

    private func shiftLeft(base: Int, by n: UInt64) {
        if n >= UInt64(words * 64) {
            for w in 0..<words { bits[base + w] = 0 }
            return
        }
        let wordShift = Int(n / 64), bitShift = n % 64
        var w = words - 1
        while w >= 0 {
            var v: UInt64 = 0
            let src = w - wordShift
            if src >= 0 {
                v = bits[base + src] << bitShift
                if bitShift > 0, src - 1 >= 0 { v |= bits[base + src - 1] >> (64 - bitShift) }
            }
            bits[base + w] = v
            w -= 1
        }
    }
}
