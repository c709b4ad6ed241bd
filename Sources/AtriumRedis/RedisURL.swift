/// Where Redis listens: `redis://[:password@]host[:port][/db]` (the port defaults to 6379, the
/// database to 0), `rediss://` for TLS (reached through a `RedisTunnel`: Debian's hiredis 0.14 has no
/// TLS). IPv6 hosts go in brackets. `socketPath`, set by the tunnel, is where a connection goes instead
/// of host and port.
public struct RedisURL: Equatable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var password: String?
    public var database: Int
    public var tls: Bool
    public var socketPath: String?

    public init(
        host: String, port: Int = 6379, password: String? = nil, database: Int = 0, tls: Bool = false,
        socketPath: String? = nil
    ) {
        self.host = host
        self.port = port
        self.password = password
        self.database = database
        self.tls = tls
        self.socketPath = socketPath
    }

    /// Parses the URL text; the error says which part is wrong.
    public init(parsing text: String) throws(RedisError) {
        let tls = text.hasPrefix("rediss://")
        guard tls || text.hasPrefix("redis://") else {
            throw .invalidURL("expected redis://host:port or rediss://host:port")
        }
        var rest = Substring(text.dropFirst(tls ? "rediss://".count : "redis://".count))
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let db = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
            if !db.isEmpty {
                guard let n = Int(db), (0...15).contains(n) else { throw .invalidURL("the database must be 0 to 15") }
                database = n
            }
        }
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let secret = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).last ?? ""
            password = secret.isEmpty ? nil : String(secret)
        }
        var host = rest
        var port = 6379
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw .invalidURL("an IPv6 host needs a closing ]") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let n = Int(after.dropFirst()), (1...65535).contains(n) else {
                    throw .invalidURL("the port must be 1 to 65535")
                }
                port = n
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            guard let n = Int(rest[rest.index(after: colon)...]), (1...65535).contains(n) else {
                throw .invalidURL("the port must be 1 to 65535")
            }
            port = n
        }
        guard !host.isEmpty else { throw .invalidURL("the host is missing") }
        self.init(host: String(host), port: port, password: password, database: database, tls: tls)
    }

    /// The URL without its password, for logs.
    public var description: String {
        let h = host.contains(":") ? "[\(host)]" : host
        return (tls ? "rediss://" : "redis://") + "\(h):\(port)" + (database == 0 ? "" : "/\(database)")
    }
}
