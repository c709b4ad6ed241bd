import AtriumRedis
import Testing

@testable import AtriumServer

/// What a node writes into stunnel's configuration for a `rediss://` URL: how Redis's certificate is
/// checked, and what is refused rather than written.
@Suite struct RedisTunnelTests {
    typealias Options = RedisTunnel.Options

    static func text(_ url: String, _ options: Options = Options(), socket: String = "/d/redis.sock") throws
        -> String?
    {
        let remote = try RedisURL(parsing: url)
        return try? RedisTunnel.configuration(remote: remote, socket: socket, options: options).get()
    }

    static func lines(_ url: String, _ options: Options = Options()) throws -> Set<String> {
        Set(try text(url, options)?.split(separator: "\n").map(String.init) ?? [])
    }

    @Test(arguments: [
        ("rediss://redis.internal:6380", "checkHost = redis.internal", "connect = redis.internal:6380", false),
        ("rediss://10.0.0.9", "checkIP = 10.0.0.9", "connect = 10.0.0.9:6379", true),
        ("rediss://[fd00::9]:6390", "checkIP = fd00::9", "connect = fd00::9:6390", true),
    ])
    func checksTheNameOrTheAddress(_ url: String, _ check: String, _ connect: String, _ address: Bool) throws {
        let l = try Self.lines(url)
        #expect(l.contains(check) && l.contains(connect))
        #expect(
            l.isSuperset(of: [
                "client = yes", "accept = /d/redis.sock", "verifyChain = yes", "foreground = yes", "delay = yes",
            ]))
        #expect(l.contains("CApath = /etc/ssl/certs") && !l.contains { $0.hasPrefix("cert =") })
        // No SNI for an address.
        #expect(l.contains("sni =") == address)
    }

    @Test func takesTheCAAndTheClientCertificate() throws {
        let l = try Self.lines("rediss://r:1", Options(ca: "/etc/ca.pem", cert: "/etc/n.crt", key: "/etc/n.key"))
        #expect(l.isSuperset(of: ["CAfile = /etc/ca.pem", "cert = /etc/n.crt", "key = /etc/n.key"]))
        #expect(!l.contains("CApath = /etc/ssl/certs"))
    }

    @Test(arguments: [
        ("rediss://r\nexec = sh:1", Options()),
        ("rediss://r\"x:1", Options()),
        ("rediss://r:1", Options(ca: "/etc/ca.pem\nexec = /bin/sh")),
        ("rediss://r:1", Options(cert: "/etc/n.crt")),
        ("rediss://r:1", Options(key: "/etc/n.key")),
        ("rediss://r:1", Options(ca: "")),
    ])
    func refusesWhatCannotBeOneValue(_ url: String, _ options: Options) throws {
        #expect(try Self.text(url, options) == nil)
    }

    /// stunnel reads an `accept` that does not start with `/` as a host and port.
    @Test func refusesARelativeSocket() throws {
        #expect(try Self.text("rediss://r:1", socket: "data/redis.sock") == nil)
    }

    /// In a directory of its own (nodes may share a data directory, each as PID 1 of its container),
    /// by an absolute path.
    @Test func theNodesConnectionsGoToItsOwnSocket() throws {
        let t = RedisTunnel(
            remote: try RedisURL(parsing: "rediss://:pw@r:6380/2"), dataDir: "/data", options: Options())
        let path = try #require(t.localURL.socketPath)
        #expect(path.hasPrefix("/data/redis-tls-") && path.hasSuffix("/redis.sock"))
        let other = RedisTunnel(remote: t.remote, dataDir: "/data", options: Options())
        #expect(other.socketPath != path)
        #expect(t.localURL.password == "pw" && t.localURL.database == 2 && !t.localURL.tls)
        let relative = RedisTunnel(remote: t.remote, dataDir: "atrium-data", options: Options())
        #expect(relative.socketPath.hasPrefix("/"))
        #expect(relative.socketPath.contains("/atrium-data/redis-tls-"))
    }
}
