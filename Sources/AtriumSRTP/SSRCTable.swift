/// Per-SSRC state of one session without reference counting: an open-addressing hash table (linear
/// probing, at most half full) in memory the owner allocates and frees, holding plain values. A lookup
/// touches no Swift reference and no exclusivity check; only inserting a new SSRC may allocate (when
/// the table doubles). Owned by one `OpenSSLSRTP`, which calls `deallocate()` in its deinit.
struct SSRCTable<Value: BitwiseCopyable> {
    private struct Storage {
        var count: Int
        var capacity: Int
        var keys: UnsafeMutablePointer<UInt32>
        var used: UnsafeMutablePointer<Bool>
        var values: UnsafeMutablePointer<Value>
    }

    private let storage: UnsafeMutablePointer<Storage>

    init(capacity: Int = 16) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: Self.make(capacity))
    }

    private static func make(_ capacity: Int) -> Storage {
        let used = UnsafeMutablePointer<Bool>.allocate(capacity: capacity)
        used.initialize(repeating: false, count: capacity)
        return Storage(
            count: 0, capacity: capacity, keys: .allocate(capacity: capacity), used: used,
            values: .allocate(capacity: capacity))
    }

    func deallocate() {
        storage.pointee.keys.deallocate()
        storage.pointee.used.deallocate()
        storage.pointee.values.deallocate()
        storage.deallocate()
    }

    var count: Int { storage.pointee.count }

    /// Fibonacci hashing of the SSRC into the table (capacity is a power of two).
    @inline(__always)
    private static func slot(_ key: UInt32, _ capacity: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(key) &* 0x9E37_79B9_7F4A_7C15) >> 32) & (capacity - 1)
    }

    @inline(__always)
    private func find(_ key: UInt32) -> Int? {
        let s = storage.pointee
        var i = Self.slot(key, s.capacity)
        while s.used[i] {
            if s.keys[i] == key { return i }
            i = (i + 1) & (s.capacity - 1)
        }
        return nil
    }

    @inline(__always)
    subscript(key: UInt32) -> Value? {
        guard let i = find(key) else { return nil }
        return storage.pointee.values[i]
    }

    /// Sets the value of an SSRC already in the table, or adds it.
    func set(_ key: UInt32, _ value: Value) {
        if let i = find(key) {
            storage.pointee.values[i] = value
            return
        }
        if (storage.pointee.count + 1) * 2 > storage.pointee.capacity { grow() }
        let s = storage.pointee
        var i = Self.slot(key, s.capacity)
        while s.used[i] { i = (i + 1) & (s.capacity - 1) }
        s.used[i] = true
        s.keys[i] = key
        s.values[i] = value
        storage.pointee.count += 1
    }

    /// Every value, for the owner's cleanup.
    func forEach(_ body: (Value) -> Void) {
        let s = storage.pointee
        for i in 0..<s.capacity where s.used[i] { body(s.values[i]) }
    }

    private func grow() {
        let old = storage.pointee
        storage.pointee = Self.make(old.capacity * 2)
        for i in 0..<old.capacity where old.used[i] { set(old.keys[i], old.values[i]) }
        old.keys.deallocate()
        old.used.deallocate()
        old.values.deallocate()
    }
}
