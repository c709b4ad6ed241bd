import Synchronization

/// AES-128-GCM over whole messages (RFC 5116): a fresh random 96-bit nonce for each, written before
/// the ciphertext, and the 16-byte tag after it; `aad` is authenticated, not sent. For the messages
/// nodes send each other, not the packet path (it allocates, and locks its two OpenSSL contexts so
/// that any thread may call it).
public final class MessageSeal: Sendable {
    public static let nonceSize = 12
    public static let tagSize = 16
    let contexts: Mutex<(seal: PacketCrypto, open: PacketCrypto)>

    /// `key`: 16 bytes.
    public init(key: [UInt8]) throws(SRTPError) {
        guard key.count == 16 else { throw .invalidKeyLength(expected: 16, actual: key.count) }
        contexts = Mutex((try PacketCrypto(gcmKey: key, sealing: true), try PacketCrypto(gcmKey: key, sealing: false)))
    }

    /// Nonce, ciphertext, tag.
    public func seal(_ plaintext: [UInt8], aad: [UInt8] = []) throws(SRTPError) -> [UInt8] {
        var rng = SystemRandomNumberGenerator()
        let nonce = (0..<Self.nonceSize).map { _ in UInt8.random(in: 0...255, using: &rng) }
        var data = plaintext
        var tag = [UInt8](repeating: 0, count: Self.tagSize)
        let sealed: Bool = contexts.withLock { c in
            withSpans(nonce, aad, &data, &tag) { iv, a, aLength, d, dLength, t in
                (try? c.seal.seal(iv: iv, aad: a, aLength, a, 0, d, length: dLength, tag: t)) != nil
            }
        }
        guard sealed else { throw .cipherFailed }
        return nonce + data + tag
    }

    /// The plaintext, or nil when `sealed` is too short or does not authenticate (with this key and `aad`).
    public func open(_ sealed: [UInt8], aad: [UInt8] = []) -> [UInt8]? {
        guard sealed.count >= Self.nonceSize + Self.tagSize else { return nil }
        let nonce = Array(sealed[0..<Self.nonceSize])
        var data = Array(sealed[Self.nonceSize..<(sealed.count - Self.tagSize)])
        var tag = Array(sealed[(sealed.count - Self.tagSize)...])
        let opened: Bool = contexts.withLock { c in
            withSpans(nonce, aad, &data, &tag) { iv, a, aLength, d, dLength, t in
                (try? c.open.open(iv: iv, aad: a, aLength, a, 0, d, length: dLength, tag: t)) != nil
            }
        }
        return opened ? data : nil
    }

    /// Pointers to the nonce, the associated data, the data and the tag (never nil: an empty array
    /// gets a one-byte stand-in).
    private func withSpans(
        _ nonce: [UInt8], _ aad: [UInt8], _ data: inout [UInt8], _ tag: inout [UInt8],
        _ body: (
            UnsafePointer<UInt8>, UnsafePointer<UInt8>, Int, UnsafeMutablePointer<UInt8>, Int,
            UnsafeMutablePointer<UInt8>
        ) -> Bool
    ) -> Bool {
        let a = aad.isEmpty ? [0] : aad
        let count = data.count
        if data.isEmpty { data = [0] }
        defer { if count == 0 { data = [] } }
        return nonce.withUnsafeBufferPointer { n in
            a.withUnsafeBufferPointer { ab in
                data.withUnsafeMutableBufferPointer { d in
                    tag.withUnsafeMutableBufferPointer { t in
                        // Every buffer is non-empty here, so each has a base address.
                        guard let nb = n.baseAddress, let abb = ab.baseAddress, let db = d.baseAddress,
                            let tb = t.baseAddress
                        else { return false }
                        return body(nb, abb, aad.count, db, count, tb)
                    }
                }
            }
        }
    }
}
