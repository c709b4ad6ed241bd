internal import AtriumCrypto
internal import AtriumSync

/// SFrame (RFC 9605), cipher suite AES_128_GCM_SHA256_128, as Atrium's clients use it for
/// end-to-end encryption (docs/e2ee.md): the JavaScript SDK's worker and this native side encrypt
/// and decrypt the same bytes.
///
/// - Each sender's key for key index `i`: HKDF-SHA256 of the room secret (salt "Atrium E2EE 1",
///   info "<participant id>/<i>", 16 bytes); SFrame's key and salt from it (RFC 9605 4.4.2).
/// - The room secret: PBKDF2-SHA256 of a passphrase (salt "Atrium E2EE <room id>", 100,000
///   iterations, 32 bytes), or a key the app gives.
/// - A frame: `[clear prefix][SFrame header][ciphertext and tag]`; the prefix (VP8: a key frame's 10
///   bytes, a delta frame's 3; Opus: the TOC byte) is what the forwarding core reads, authenticated.
public enum SFrame {
    public static let suite: UInt16 = 0x0004
    public static let passphraseIterations = 100_000

    /// The largest key index a client takes (from a member or the app): a roll adds one, and JSON
    /// carries it exactly.
    public static let maxKeyIndex: UInt64 = 1 << 32

    /// HKDF-SHA256 of `ikm` with Atrium's salt ("Atrium E2EE 1") and `info`: each sender's base key,
    /// the key that proves members' public keys (`auth`), the key that wraps secrets between two members.
    public static func derive(_ ikm: [UInt8], info: String, length: Int) -> [UInt8]? {
        HKDFSHA256.derive(ikm: ikm, salt: Array("Atrium E2EE 1".utf8), info: Array(info.utf8), length: length)
    }

    /// The room secret of a passphrase.
    public static func secret(passphrase: String, roomID: String) -> [UInt8]? {
        PBKDF2SHA256.derive(
            password: Array(passphrase.utf8), salt: Array("Atrium E2EE \(roomID)".utf8),
            iterations: passphraseIterations, length: 32)
    }

    /// The SFrame header (RFC 9605 4.3): KID and CTR, each in the config byte when under 8.
    public static func header(kid: UInt64, ctr: UInt64) -> [UInt8] {
        func field(_ v: UInt64) -> (bits: UInt8, bytes: [UInt8], extended: UInt8) {
            if v < 8 { return (UInt8(v), [], 0) }
            var n = 1
            while n < 8 && v >= UInt64(1) << UInt64(8 * n) { n += 1 }
            let bytes = (0..<n).map { UInt8(truncatingIfNeeded: v >> UInt64(8 * (n - 1 - $0))) }
            return (UInt8(n - 1), bytes, 1)
        }
        let k = field(kid)
        let c = field(ctr)
        return [k.extended << 7 | k.bits << 4 | c.extended << 3 | c.bits] + k.bytes + c.bytes
    }

    /// A header at `offset`: its KID, CTR and length, or nil when the bytes end first.
    public static func parseHeader(_ data: [UInt8], at offset: Int) -> (kid: UInt64, ctr: UInt64, length: Int)? {
        guard offset >= 0, offset < data.count else { return nil }
        let config = data[offset]
        var p = offset + 1
        func read(_ extended: Bool, _ bits: UInt8) -> UInt64? {
            guard extended else { return UInt64(bits) }
            let n = Int(bits) + 1
            guard p + n <= data.count else { return nil }
            var v: UInt64 = 0
            for i in 0..<n { v = v << 8 | UInt64(data[p + i]) }
            p += n
            return v
        }
        guard let kid = read(config & 0x80 != 0, (config >> 4) & 7), let ctr = read(config & 0x08 != 0, config & 7)
        else { return nil }
        return (kid, ctr, p - offset)
    }

    static func bigEndian(_ v: UInt64, _ n: Int) -> [UInt8] {
        (0..<n).map { i in
            let shift = 8 * (n - 1 - i)
            return shift >= 64 ? 0 : UInt8(truncatingIfNeeded: v >> UInt64(shift))
        }
    }
}

/// What a frame is, for the bytes left clear.
public enum SFrameMedia: Sendable, Equatable {
    case vp8(keyFrame: Bool)
    case opus

    func clearBytes(_ count: Int) -> Int {
        switch self {
        case .vp8(let key): min(key ? 10 : 3, count)
        case .opus: min(1, count)
        }
    }
}

/// The keys of one client: room secrets by key index, the index it sends with, one frame counter
/// (a nonce never repeats under a key), and each sender's derived keys. Shared by the threads that
/// send and receive.
public final class SFrameKeyring: Sendable {
    struct State {
        var secrets: [UInt64: [UInt8]] = [:]
        var sendIndex: UInt64 = 0
        var counter: UInt64 = 0
        var keys: [String: (key: [UInt8], salt: [UInt8])] = [:]
    }

    private let state = Locked(State())

    /// A keyring holding `secret` under `index`, sending with it. The frame counter starts at a random
    /// 48-bit value (`counter` for tests): a nonce is not used twice under a key even by two sessions
    /// a server gave the same participant id.
    public init(secret: [UInt8], index: UInt64 = 0, counter: UInt64? = nil) {
        let start = counter ?? (SecureRandom.uint64() & 0xFFFF_FFFF_FFFF)
        state.withLock { s in
            s.secrets[index] = secret
            s.sendIndex = index
            s.counter = start
        }
    }

    /// The keyring of a passphrase (PBKDF2, salted with the room id); nil when it cannot derive.
    public convenience init?(passphrase: String, roomID: String) {
        guard let secret = SFrame.secret(passphrase: passphrase, roomID: roomID) else { return nil }
        self.init(secret: secret)
    }

    /// The key index frames are sent with.
    public var sendIndex: UInt64 { state.withLock { $0.sendIndex } }

    /// The highest key index held.
    public var maxIndex: UInt64 { state.withLock { $0.secrets.keys.max() ?? 0 } }

    /// The secret under a key index, if held (to hand it to a member, wrapped).
    public func secret(_ index: UInt64) -> [UInt8]? { state.withLock { $0.secrets[index] } }

    /// Senders move up to a key index held: true when they did (never back to an older one, which a
    /// member that left may hold).
    public func send(_ index: UInt64) -> Bool {
        state.withLock { s in
            guard s.secrets[index] != nil, index > s.sendIndex else { return false }
            s.sendIndex = index
            return true
        }
    }

    /// The key that proves a member's public key (key rotation, docs/e2ee.md): HKDF of index 0's secret.
    public var authKey: [UInt8]? { secret(0).flatMap { SFrame.derive($0, info: "auth", length: 32) } }

    /// Adds a secret under `index` (for receiving; for sending too with `send`).
    public func add(secret: [UInt8], index: UInt64, send: Bool) {
        state.withLock { s in
            s.secrets[index] = secret
            s.keys = s.keys.filter { !$0.key.hasSuffix("/\(index)") }
            if send { s.sendIndex = index }
        }
    }

    /// A sender's SFrame key and salt for a key index (RFC 9605 4.4.2), derived once.
    func senderKey(_ participant: String, _ index: UInt64) -> (key: [UInt8], salt: [UInt8])? {
        let id = "\(participant)/\(index)"
        let (cached, secret) = state.withLock { s in (s.keys[id], s.secrets[index]) }
        if let cached { return cached }
        guard let secret, let base = SFrame.derive(secret, info: id, length: 16) else { return nil }
        let context = SFrame.bigEndian(index, 8) + SFrame.bigEndian(UInt64(SFrame.suite), 2)
        guard
            let key = HKDFSHA256.derive(
                ikm: base, salt: [], info: Array("SFrame 1.0 Secret key ".utf8) + context, length: 16),
            let salt = HKDFSHA256.derive(
                ikm: base, salt: [], info: Array("SFrame 1.0 Secret salt ".utf8) + context, length: 12)
        else { return nil }
        state.withLock { $0.keys[id] = (key, salt) }
        return (key, salt)
    }

    static func nonce(_ salt: [UInt8], _ ctr: UInt64) -> [UInt8] {
        let c = SFrame.bigEndian(ctr, salt.count)
        return zip(salt, c).map { $0 ^ $1 }
    }

    /// The frame encrypted by `sender` (this client's participant id); nil when no key derives.
    public func encrypt(_ frame: [UInt8], _ media: SFrameMedia, sender: String) -> [UInt8]? {
        let (index, ctr) = state.withLock { s in
            defer { s.counter &+= 1 }
            return (s.sendIndex, s.counter)
        }
        guard let (key, salt) = senderKey(sender, index) else { return nil }
        let clear = media.clearBytes(frame.count)
        let h = SFrame.header(kid: index, ctr: ctr)
        let prefix = Array(frame[0..<clear])
        guard
            let sealed = AESGCM.seal(
                key: key, nonce: Self.nonce(salt, ctr), aad: prefix + h, plaintext: Array(frame[clear...]))
        else { return nil }
        return prefix + h + sealed
    }

    /// The frame `sender` encrypted, or nil when it does not decrypt (another key, tampered, not SFrame).
    public func decrypt(_ frame: [UInt8], _ media: SFrameMedia, sender: String) -> [UInt8]? {
        let clear = media.clearBytes(frame.count)
        guard let h = SFrame.parseHeader(frame, at: clear), let (key, salt) = senderKey(sender, h.kid) else {
            return nil
        }
        let body = clear + h.length
        guard
            let plain = AESGCM.open(
                key: key, nonce: Self.nonce(salt, h.ctr), aad: Array(frame[0..<body]), sealed: Array(frame[body...]))
        else { return nil }
        return Array(frame[0..<clear]) + plain
    }
}
