import AtriumCrypto
import AtriumSRTP

/// What nodes publish on each other's inboxes, sealed: AES-128-GCM (`MessageSeal`) under a key every
/// node derives from the cluster's secret, the target node's id authenticated with each message (a
/// message sealed for one node does not open at another). A relayed session's token and SDP, an
/// admin call and a hub command thus cross Redis encrypted; a message that does not open is dropped
/// and counted like one that does not parse.
///
/// The text published: `s1.` and the base64url of nonce, ciphertext and tag.
public final class RelaySeal: Sendable {
    let seal: MessageSeal
    static let prefix = Array("s1.".utf8)

    /// The secret: `--cluster-secret`, else derived from the API keys every node shares.
    public init(secret: [UInt8]) throws {
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
        guard let sealed = try? seal.seal(Array(text.utf8), aad: Array("inbox:\(node)".utf8)) else { return nil }
        return "s1." + Base64URL.encode(sealed)
    }

    /// A message received on `node`'s own inbox, opened; nil when it is not one sealed for it.
    public func open(_ payload: [UInt8], at node: String) -> [UInt8]? {
        guard payload.starts(with: Self.prefix), let sealed = Base64URL.decode(payload.dropFirst(Self.prefix.count))
        else { return nil }
        return seal.open(sealed, aad: Array("inbox:\(node)".utf8))
    }
}
