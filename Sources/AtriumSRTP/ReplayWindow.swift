/// One SRTP stream's packet index and replay list (RFC 3711 sections 3.3.1, 3.3.2 and appendix A), as
/// libsrtp keeps it (`srtp_rdbx_t`), so both backends accept and refuse the same packets.
///
/// `highest` is the largest index seen (its top 32 bits the rollover counter, the low 16 the highest
/// sequence number, RFC 3711's ROC and s_l); the bitmap remembers which of the `size` indices up to
/// it were seen, index i at bit `i mod size`. A fresh window stands at index 0 with nothing seen.
/// Indices are at most 48 bits and deltas at most 2^16 apart, so none of the arithmetic can overflow.
struct RTPReplayWindow {
    /// What the window says about a packet's index.
    enum Verdict: Equatable {
        /// Ahead of the window, or inside it and not seen.
        case fresh
        /// Inside the window and already seen (libsrtp's `replay_fail`).
        case repeated
        /// Behind the window (libsrtp's `replay_old`).
        case tooOld
    }

    /// `highest` in word 0, the bitmap after it: one allocation per stream, made with it, so a packet
    /// only reads and writes through the pointer (no copy-on-write check, no reference count).
    private let storage: UnsafeMutablePointer<UInt64>
    /// Window length in packets, a multiple of 64.
    let size: Int64

    /// A window of at least `packets` (64 to 65536, rounded up to a multiple of 64). It must be
    /// released with `deallocate()`.
    init(packets: Int) {
        let words = (max(64, min(packets, 1 << 16)) + 63) / 64
        size = Int64(words * 64)
        storage = .allocate(capacity: words + 1)
        storage.initialize(repeating: 0, count: words + 1)
    }

    func deallocate() { storage.deallocate() }

    var highest: Int64 { Int64(bitPattern: storage[0]) }

    /// The index a sequence number most likely stands for, and its distance from `highest` (RFC 3711
    /// appendix A: the guess whose index is closest to s_l). Until the index passes 2^15 the rollover
    /// counter is taken to be 0, as libsrtp does, rather than guessing a wrap below zero.
    static func estimate(_ sequence: UInt16, highest: Int64) -> (index: Int64, delta: Int64) {
        let seq = Int64(sequence)
        guard highest > 0x8000 else { return (seq, seq - highest) }
        let roc = highest >> 16
        let local = highest & 0xFFFF
        var guess = roc
        if local < 0x8000 {
            if seq - local > 0x8000 { guess = roc - 1 }
        } else if local - 0x8000 > seq {
            guess = roc + 1
        }
        let index = guess << 16 | seq
        return (index, index - highest)
    }

    func estimate(_ sequence: UInt16) -> (index: Int64, delta: Int64) { Self.estimate(sequence, highest: highest) }

    /// Whether the packet `delta` away from `highest` may be accepted (RFC 3711 section 3.3.2).
    func check(_ delta: Int64) -> Verdict {
        if delta > 0 { return .fresh }
        let index = highest + delta
        guard delta > -size, index >= 0 else { return .tooOld }
        return bit(index) ? .repeated : .fresh
    }

    /// Records the packet `delta` away from `highest` (after it authenticated), moving the window ahead
    /// when it is the newest.
    func add(_ delta: Int64) {
        let top = highest
        if delta > 0 {
            if delta >= size {
                (storage + 1).update(repeating: 0, count: Int(size / 64))
            } else {
                var i = top + 1
                while i <= top + delta {
                    clear(i)
                    i += 1
                }
            }
            storage[0] = UInt64(bitPattern: top + delta)
            set(top + delta)
        } else if top + delta >= 0 {
            set(top + delta)
        }
    }

    private func position(_ index: Int64) -> (word: Int, mask: UInt64) {
        let p = Int(index % size)
        return (1 + p >> 6, 1 << UInt64(p & 63))
    }

    private func bit(_ index: Int64) -> Bool {
        let (w, m) = position(index)
        return storage[w] & m != 0
    }

    private func set(_ index: Int64) {
        let (w, m) = position(index)
        storage[w] |= m
    }

    private func clear(_ index: Int64) {
        let (w, m) = position(index)
        storage[w] &= ~m
    }
}

/// One SSRC's SRTCP replay list as libsrtp keeps it (`srtp_rdb_t`): 128 indices from `start`, index
/// `start + k` at bit k (RFC 3711 section 3.4: the receiver checks the explicit SRTCP index).
struct RTCPReplayWindow {
    static let size: UInt32 = 128
    private(set) var start: UInt32 = 0
    private var bits: UInt128 = 0

    func check(_ index: UInt32) -> RTPReplayWindow.Verdict {
        // Indices are 31 bits, so `start + size` cannot overflow.
        if index >= start + Self.size { return .fresh }
        if index < start { return .tooOld }
        return bits & (1 << UInt128(index - start)) != 0 ? .repeated : .fresh
    }

    mutating func add(_ index: UInt32) {
        guard index >= start else { return }
        let delta = index - start
        if delta < Self.size {
            bits |= 1 << UInt128(delta)
        } else {
            let shift = delta - (Self.size - 1)
            bits = bits >> UInt128(shift)
            bits |= 1 << UInt128(Self.size - 1)
            start += shift
        }
    }
}
