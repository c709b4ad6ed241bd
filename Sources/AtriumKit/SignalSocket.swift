/// The WebSocket under an `AtriumRoom`: text frames out, text frames and the close in. Foundation's
/// `URLSessionWebSocketTask` serves on Apple platforms (an adapter of a few lines: docs/swift-sdk.md);
/// on Linux Debian's libcurl has no WebSocket, so `LWSWebSocket` (libwebsockets' client) does.
public protocol SignalSocket: AnyObject, Sendable {
    /// Connects to `url` (`ws://` or `wss://`); what arrives goes to `events`, in order, ending
    /// with `.closed`.
    func open(url: String, events: @escaping @Sendable (SocketEvent) -> Void) throws(AtriumError)
    /// Queues a text frame (dropped once the socket closed).
    func send(_ text: String)
    /// Closes with 1000 (normal); `.closed` follows.
    func close()
}

/// What a `SignalSocket` reports.
public enum SocketEvent: Equatable, Sendable {
    case opened
    case text(String)
    /// The connection ended: the peer's close code (1006 when it simply went away) and reason.
    case closed(code: UInt16, reason: String)
}

/// The parts of a `ws://host:port/path?query` URL.
struct WebSocketURL: Equatable {
    var secure: Bool
    var host: String
    var port: Int
    /// The path with its query.
    var path: String

    init(secure: Bool, host: String, port: Int, path: String) {
        self.secure = secure
        self.host = host
        self.port = port
        self.path = path
    }

    init?(_ text: String) {
        let rest: Substring
        if text.hasPrefix("ws://") {
            secure = false
            rest = text.dropFirst(5)
        } else if text.hasPrefix("wss://") {
            secure = true
            rest = text.dropFirst(6)
        } else {
            return nil
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        path = slash == rest.endIndex ? "/" : String(rest[slash...])
        if authority.hasPrefix("[") {
            // An IPv6 literal: [::1]:8800
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if after.isEmpty {
                port = secure ? 443 : 80
            } else {
                guard after.hasPrefix(":"), let p = Int(after.dropFirst()), (1...65535).contains(p) else { return nil }
                port = p
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            guard let p = Int(authority[authority.index(after: colon)...]), (1...65535).contains(p) else { return nil }
            port = p
        } else {
            host = String(authority)
            port = secure ? 443 : 80
        }
        guard !host.isEmpty else { return nil }
    }
}
