/// A WAV file's samples as interleaved floats at its own rate: 16-, 24- or 32-bit PCM,
/// or 32-/64-bit IEEE float (also as WAVE_FORMAT_EXTENSIBLE), mono or stereo; and the
/// writer of 16-bit PCM files (``pcm16(_:sampleRate:channels:)``). Reader and writer share
/// the chunk tags and the `fmt ` chunk's layout (``Format``).
public struct WAVAudio: Sendable {
    public var sampleRate: Int
    public var channels: Int
    /// Interleaved, −1…1.
    public var samples: [Float]
    public var frames: Int { samples.count / max(1, channels) }

    public enum ReadError: Error, Equatable, CustomStringConvertible {
        case notWAV
        case unsupportedFormat(tag: Int, bits: Int)
        case channels(Int)
        case rate(Int)
        case truncated

        public var description: String {
            switch self {
            case .notWAV: return "not a WAV file (no RIFF/WAVE header)"
            case .unsupportedFormat(let tag, let bits):
                return "unsupported WAV encoding (format tag \(tag), \(bits) bits): use 16/24/32-bit PCM or 32/64-bit float"
            case .channels(let n): return "the WAV file has \(n) channels; play sends mono or stereo"
            case .rate(let r): return "unsupported sample rate \(r) Hz (8000–192000 Hz are resampled to 48 kHz)"
            case .truncated: return "the WAV file is cut short (no fmt or data chunk)"
            }
        }
    }

    /// The chunk tags both sides use.
    static let riff: [UInt8] = Array("RIFF".utf8), wave: [UInt8] = Array("WAVE".utf8)
    static let fmtTag: [UInt8] = Array("fmt ".utf8), dataTag: [UInt8] = Array("data".utf8)

    /// The 16 bytes of a `fmt ` chunk that both sides use (WAVEFORMATEX without cbSize).
    struct Format: Equatable {
        /// 1 PCM, 3 IEEE float (for WAVE_FORMAT_EXTENSIBLE, the subformat's tag).
        var tag: Int
        var channels: Int
        var rate: Int
        var bits: Int
        /// Bytes per frame, as the file states it.
        var align: Int

        init(tag: Int, channels: Int, rate: Int, bits: Int) {
            (self.tag, self.channels, self.rate, self.bits) = (tag, channels, rate, bits)
            align = bits / 8 * channels
        }

        /// Reads the chunk body at `body` of `b`, `size` bytes long (at least 16 are there).
        init(_ b: [UInt8], body: Int, size: Int) {
            var t = b.le16(body)
            if t == 0xFFFE, size >= 40, body + 26 <= b.count { t = b.le16(body + 24) }  // extensible: the subformat's tag
            (tag, channels, rate, bits, align) = (t, b.le16(body + 2), b.le32(body + 4), b.le16(body + 14), b.le16(body + 12))
        }

        /// The chunk body: tag, channels, rate, bytes per second, bytes per frame, bits.
        var bytes: [UInt8] {
            var out: [UInt8] = []
            out.appendLE16(tag); out.appendLE16(channels); out.appendLE32(rate); out.appendLE32(rate * align)
            out.appendLE16(align); out.appendLE16(bits)
            return out
        }
    }

    /// A 16-bit PCM WAV file: the 44-byte header (RIFF, `fmt `, `data`) and `samples`
    /// (interleaved when `channels` > 1) little-endian.
    public static func pcm16(_ samples: some Collection<Int16>, sampleRate: Int = 48_000, channels: Int = 1) -> [UInt8] {
        let format = Format(tag: 1, channels: channels, rate: sampleRate, bits: 16).bytes
        var out: [UInt8] = []
        out.reserveCapacity(44 + samples.count * 2)
        out += riff; out.appendLE32(4 + (8 + format.count) + 8 + samples.count * 2); out += wave
        out += fmtTag; out.appendLE32(format.count); out += format
        out += dataTag; out.appendLE32(samples.count * 2)
        for s in samples { out.appendLE16(Int(UInt16(bitPattern: s))) }
        return out
    }

    public static func read(_ b: [UInt8]) throws(ReadError) -> WAVAudio {
        func u32(_ i: Int) -> Int { b.le32(i) }
        guard b.count >= 12, b[0...3].elementsEqual(riff), b[8...11].elementsEqual(wave) else { throw .notWAV }
        var i = 12
        var fmt: Format?
        var data: Range<Int>?
        while i + 8 <= b.count {
            let size = u32(i + 4)
            let body = i + 8
            let tag = b[i..<i + 4]
            if tag.elementsEqual(fmtTag) {
                guard size >= 16, body + 16 <= b.count else { throw .truncated }
                fmt = Format(b, body: body, size: size)
            } else if tag.elementsEqual(dataTag) {
                // Streamed WAVs write 0 or 0xFFFFFFFF: take what the file holds.
                let n = size == 0 || size == 0xFFFF_FFFF ? b.count - body : min(size, b.count - body)
                data = body..<body + n
                break
            }
            guard size >= 0, body + size <= b.count || tag.elementsEqual(dataTag) else { break }
            i = body + size + (size & 1)
        }
        guard let fmt, let data else { throw .truncated }
        guard fmt.channels == 1 || fmt.channels == 2 else { throw .channels(fmt.channels) }
        guard (8000...192_000).contains(fmt.rate) else { throw .rate(fmt.rate) }
        let width = fmt.bits / 8
        guard (fmt.tag == 1 && [16, 24, 32].contains(fmt.bits)) || (fmt.tag == 3 && [32, 64].contains(fmt.bits)), fmt.align == width * fmt.channels else {
            throw .unsupportedFormat(tag: fmt.tag, bits: fmt.bits)
        }
        let count = data.count / width / fmt.channels * fmt.channels
        var out = [Float](repeating: 0, count: count)
        b.withUnsafeBytes { raw in
            let base = raw.baseAddress! + data.lowerBound
            for k in 0..<count {
                let p = base + k * width
                switch (fmt.tag, fmt.bits) {
                case (1, 16): out[k] = Float(Int16(littleEndian: p.loadUnaligned(as: Int16.self))) / 32768
                case (1, 24):
                    let v = Int32(p.load(fromByteOffset: 0, as: UInt8.self)) | Int32(p.load(fromByteOffset: 1, as: UInt8.self)) << 8
                        | Int32(Int8(bitPattern: p.load(fromByteOffset: 2, as: UInt8.self))) << 16
                    out[k] = Float(v) / 8_388_608
                case (1, 32): out[k] = Float(Int32(littleEndian: p.loadUnaligned(as: Int32.self))) / 2_147_483_648
                case (3, 32): out[k] = Float(bitPattern: UInt32(littleEndian: p.loadUnaligned(as: UInt32.self)))
                default: out[k] = Float(Double(bitPattern: UInt64(littleEndian: p.loadUnaligned(as: UInt64.self))))
                }
                if !out[k].isFinite { out[k] = 0 }
            }
        }
        return WAVAudio(sampleRate: fmt.rate, channels: fmt.channels, samples: out)
    }

    /// The same audio at 48 kHz: a windowed-sinc resampler (Blackman window, 32 taps per
    /// side at the lower of the two rates), done once before publishing.
    public func resampled48k() -> WAVAudio {
        guard sampleRate != 48_000 else { return self }
        let ratio = Double(sampleRate) / 48_000  // input samples per output sample
        let outFrames = Int((Double(frames) / ratio).rounded(.down))
        let cutoff = min(1, 1 / ratio) * 0.97  // of the input's Nyquist
        let half = 32.0 / min(1, cutoff)
        let taps = Int(half.rounded(.up))
        var out = [Float](repeating: 0, count: outFrames * channels)
        samples.withUnsafeBufferPointer { src in
            for o in 0..<outFrames {
                let x = Double(o) * ratio
                let c = Int(x.rounded(.down))
                var acc0 = 0.0, acc1 = 0.0, norm = 0.0
                for k in max(0, c - taps + 1)...min(frames - 1, c + taps) {
                    let d = Double(k) - x
                    let t = d * cutoff
                    let sinc = t == 0 ? 1 : sin(Double.pi * t) / (Double.pi * t)
                    let w = abs(d) >= half ? 0 : 0.42 + 0.5 * cos(Double.pi * d / half) + 0.08 * cos(2 * Double.pi * d / half)
                    let h = sinc * w
                    norm += h
                    acc0 += h * Double(src[k * channels])
                    if channels == 2 { acc1 += h * Double(src[k * channels + 1]) }
                }
                let g = norm != 0 ? 1 / norm : 0
                out[o * channels] = Float(acc0 * g)
                if channels == 2 { out[o * channels + 1] = Float(acc1 * g) }
            }
        }
        return WAVAudio(sampleRate: 48_000, channels: channels, samples: out)
    }
}

extension [UInt8] {
    fileprivate func le16(_ i: Int) -> Int { Int(self[i]) | Int(self[i + 1]) << 8 }
    fileprivate func le32(_ i: Int) -> Int { le16(i) | le16(i + 2) << 16 }
    fileprivate mutating func appendLE16(_ v: Int) { append(UInt8(truncatingIfNeeded: v)); append(UInt8(truncatingIfNeeded: v >> 8)) }
    fileprivate mutating func appendLE32(_ v: Int) { appendLE16(v & 0xFFFF); appendLE16(v >> 16) }
}

#if canImport(Glibc)
import Glibc
#endif
