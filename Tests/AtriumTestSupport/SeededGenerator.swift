/// SplitMix64: a small, fast, seeded generator, so the random malformed-input corpora are the same on
/// every run and a failure can be replayed.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` random byte strings of length 0..<maxLength; `prefix` is written over the start of each so
    /// the inputs get past the first checks of the parser under test.
    public mutating func byteStrings(count: Int, maxLength: Int, prefix: [UInt8] = []) -> [[UInt8]] {
        (0..<count).map { _ in
            var b = (0..<Int.random(in: 0..<maxLength, using: &self)).map { _ in UInt8.random(in: 0...255, using: &self)
            }
            for (i, p) in prefix.enumerated() where i < b.count { b[i] = p }
            return b
        }
    }
}
