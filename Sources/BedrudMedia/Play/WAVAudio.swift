/// A WAV file's samples as interleaved floats at its own rate: 16-, 24- or 32-bit PCM,
/// or 32-/64-bit IEEE float (also as WAVE_FORMAT_EXTENSIBLE), mono or stereo.
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

    public static func read(_ b: [UInt8]) throws(ReadError) -> WAVAudio {
        func u32(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 | Int(b[i + 2]) << 16 | Int(b[i + 3]) << 24 }
        func u16(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
        guard b.count >= 12, b[0...3] == [0x52, 0x49, 0x46, 0x46], b[8...11] == [0x57, 0x41, 0x56, 0x45] else { throw .notWAV }
        var i = 12
        var fmt: (tag: Int, channels: Int, rate: Int, bits: Int, align: Int)?
        var data: Range<Int>?
        while i + 8 <= b.count {
            let size = u32(i + 4)
            let body = i + 8
            let tag = b[i..<i + 4]
            if tag == [0x66, 0x6D, 0x74, 0x20] {  // "fmt "
                guard size >= 16, body + 16 <= b.count else { throw .truncated }
                var t = u16(body)
                if t == 0xFFFE, size >= 40, body + 26 <= b.count { t = u16(body + 24) }  // extensible: the subformat's tag
                fmt = (t, u16(body + 2), u32(body + 4), u16(body + 14), u16(body + 12))
            } else if tag == [0x64, 0x61, 0x74, 0x61] {  // "data"
                // Streamed WAVs write 0 or 0xFFFFFFFF: take what the file holds.
                let n = size == 0 || size == 0xFFFF_FFFF ? b.count - body : min(size, b.count - body)
                data = body..<body + n
                break
            }
            guard size >= 0, body + size <= b.count || tag == [0x64, 0x61, 0x74, 0x61] else { break }
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

#if canImport(Glibc)
import Glibc
#endif
