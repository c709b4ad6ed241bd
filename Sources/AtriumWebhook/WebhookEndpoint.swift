/// Where webhooks go: one URL and the secret its signatures are made with (`webhooks` in the config).
public struct WebhookEndpoint: Equatable, Sendable {
    public var url: WebhookURL
    public var secret: String
    /// Whether it gets `chat_message` events (off by default).
    public var chat: Bool

    public init(url: WebhookURL, secret: String, chat: Bool = false) {
        self.url = url
        self.secret = secret
        self.chat = chat
    }
}

/// An `http://` or `https://` URL split into what a request needs. Pure: nothing is resolved.
public struct WebhookURL: Equatable, Sendable, CustomStringConvertible {
    public var tls: Bool
    public var host: String
    public var port: Int
    /// The path and query, starting with `/`.
    public var target: String

    /// Parses `http[s]://host[:port][/path][?query]`; an IPv6 host is written in brackets. Nil for
    /// anything else (user info, fragments, other schemes, a bad port).
    public init?(_ text: String) {
        let rest: Substring
        if text.hasPrefix("http://") {
            tls = false
            rest = text.dropFirst(7)
        } else if text.hasPrefix("https://") {
            tls = true
            rest = text.dropFirst(8)
        } else {
            return nil
        }
        let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<slash]
        var path = String(rest[slash...])
        if path.isEmpty { path = "/" } else if path.hasPrefix("?") { path = "/" + path }
        guard !authority.isEmpty, !authority.contains("@"), !path.contains("#"),
            !path.contains(where: { $0 == " " || $0 == "\r" || $0 == "\n" })
        else { return nil }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isLetter || $0.isNumber || "-.:_".contains($0) }) else {
            return nil
        }
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isASCII),
                let p = Int(portText), (1...65535).contains(p)
            else { return nil }
            port = p
        } else {
            port = tls ? 443 : 80
        }
        self.host = String(host)
        self.target = path
    }

    /// The `Host` header's value.
    public var hostHeader: String {
        let h = host.contains(":") ? "[\(host)]" : host
        return port == (tls ? 443 : 80) ? h : "\(h):\(port)"
    }

    public var description: String { "\(tls ? "https" : "http")://\(hostHeader)\(target)" }
}
