import AtriumCrypto
import AtriumSRTP

/// What nodes publish on each other's inboxes, sealed: AES-128-GCM (`MessageSeal`) under a key every
/// node derives from the cluster's secret, the target node's id authenticated with each message (a
/// message sealed for one node does not open at another). A relayed session's token and SDP, an
/// admin call and a hub command thus cross Redis encrypted; a message that does not open is dropped
/// and counted like one that does not parse.
///
/// The text published: `s1.` and the base64url of nonce, ciphertext and tag. The sealed text starts
/// with the sender's clock (milliseconds): a message more than `window` from the receiver's clock is
/// refused, so a captured message cannot be replayed later (within the window it can: the nodes'
/// clocks must agree to well within it, as NTP keeps them).
public final class RelaySeal: Sendable {
    let seal: MessageSeal
    let now: @Sendable () -> Int64
    static let prefix = Array("s1.".utf8)
    public static let windowMillis: Int64 = 60_000

    /// The secret: `--cluster-secret`, else derived from the API keys every node shares; `now`: the
    /// wall clock in milliseconds.
    public init(secret: [UInt8], now: @escaping @Sendable () -> Int64) throws {
        self.now = now
        seal = try MessageSeal(
            key: Array(HMACSHA256.authenticate(Array("atrium cluster relay v1".utf8), key: secret).prefix(16)))
    }

    /// A secret from the API keys (`id:secret` lines, sorted): nodes with the same keys agree on it.
    public static func secret(apiKeys: [String: String]) -> [UInt8] {
        let lines = apiKeys.map { "\($0.key):\($0.value)\n" }.sorted().joined()
        return HMACSHA256.authenticate(Array(lines.utf8), key: Array("atrium cluster secret from api keys".utf8))
    }

    /// The text to publish on `node`'s inbox.
    public func seal(_ text: String, for node: String) -> String? {
        let stamp = UInt64(bitPattern: now())
        let clock = (0..<8).map { UInt8(truncatingIfNeeded: stamp >> (56 - 8 * UInt64($0))) }
        guard let sealed = try? seal.seal(clock + Array(text.utf8), aad: Array("inbox:\(node)".utf8)) else {
            return nil
        }
        return "s1." + Base64URL.encode(sealed)
    }

    /// A message received on `node`'s own inbox, opened; nil when it is not one sealed for it.
    public func open(_ payload: [UInt8], at node: String) -> [UInt8]? {
        guard payload.starts(with: Self.prefix), let sealed = Base64URL.decode(payload.dropFirst(Self.prefix.count))
        else { return nil }
        guard let opened = seal.open(sealed, aad: Array("inbox:\(node)".utf8)), opened.count >= 8 else { return nil }
        let sent = Int64(bitPattern: opened[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        let (age, overflow) = now().subtractingReportingOverflow(sent)
        guard !overflow, age.magnitude <= UInt64(Self.windowMillis) else { return nil }
        return Array(opened[8...])
    }
}
