import TestSupport
/// SplitMix64: a small, fast generator, reproducible from its seed, so every random
/// input a test makes can be replayed (tests print their seeds).
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public mutating func bytes(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8.random(in: 0...255, using: &self) } }

    /// Random edits of `input`: flips, inserts, deletes, truncation, duplication of a slice.
    public mutating func mutate(_ input: [UInt8], edits: Int = 4) -> [UInt8] {
        var b = input
        for _ in 0..<Int.random(in: 1...max(1, edits), using: &self) {
            switch Int.random(in: 0..<6, using: &self) {
            case 0 where !b.isEmpty: b[Int.random(in: 0..<b.count, using: &self)] ^= UInt8(1 << Int.random(in: 0..<8, using: &self))
            case 1 where !b.isEmpty: b[Int.random(in: 0..<b.count, using: &self)] = UInt8.random(in: 0...255, using: &self)
            case 2: b.insert(UInt8.random(in: 0...255, using: &self), at: Int.random(in: 0...b.count, using: &self))
            case 3 where !b.isEmpty: b.remove(at: Int.random(in: 0..<b.count, using: &self))
            case 4 where !b.isEmpty: b = Array(b[0..<Int.random(in: 0...b.count, using: &self)])
            case 5 where b.count > 1:
                let s = Int.random(in: 0..<b.count, using: &self), e = Int.random(in: s...b.count, using: &self)
                b.insert(contentsOf: b[s..<e], at: Int.random(in: 0...b.count, using: &self))
            default: break
            }
        }
        return b
    }
}
