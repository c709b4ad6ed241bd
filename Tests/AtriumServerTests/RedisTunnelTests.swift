import AtriumRedis
import Testing

@testable import AtriumServer

/// What a node writes into stunnel's configuration for a `rediss://` URL: how Redis's certificate is
/// checked, and what is refused rather than written.
@Suite struct RedisTunnelTests {
    typealias Options = RedisTunnel.Options

    static func text(_ url: String, _ options: Options = Options()) throws -> String? {
        try? RedisTunnel.configuration(remote: RedisURL(parsing: url), socket: "/d/redis.sock", options: options).get()
    }

    static func lines(_ url: String, _ options: Options = Options()) throws -> Set<String> {
        Set(try text(url, options)?.split(separator: "\n").map(String.init) ?? [])
    }

    @Test(arguments: [
        ("rediss://redis.internal:6380", "checkHost = redis.internal", "connect = redis.internal:6380"),
        ("rediss://10.0.0.9", "checkIP = 10.0.0.9", "connect = 10.0.0.9:6379"),
        ("rediss://[fd00::9]:6390", "checkIP = fd00::9", "connect = fd00::9:6390"),
    ])
    func checksTheNameOrTheAddress(_ url: String, _ check: String, _ connect: String) throws {
        let l = try Self.lines(url)
        #expect(l.contains(check) && l.contains(connect))
        #expect(l.isSuperset(of: ["client = yes", "accept = /d/redis.sock", "verifyChain = yes", "foreground = yes"]))
        #expect(l.contains("CApath = /etc/ssl/certs") && !l.contains { $0.hasPrefix("cert =") })
    }

    @Test func takesTheCAAndTheClientCertificate() throws {
        let l = try Self.lines("rediss://r:1", Options(ca: "/etc/ca.pem", cert: "/etc/n.crt", key: "/etc/n.key"))
        #expect(l.isSuperset(of: ["CAfile = /etc/ca.pem", "cert = /etc/n.crt", "key = /etc/n.key"]))
        #expect(!l.contains("CApath = /etc/ssl/certs"))
    }

    @Test(arguments: [
        ("rediss://r\nexec = /bin/sh:1", Options()),
        ("rediss://r\"x:1", Options()),
        ("rediss://r:1", Options(ca: "/etc/ca.pem\nexec = /bin/sh")),
        ("rediss://r:1", Options(cert: "/etc/n.crt")),
        ("rediss://r:1", Options(key: "/etc/n.key")),
        ("rediss://r:1", Options(ca: "")),
    ])
    func refusesWhatCannotBeOneValue(_ url: String, _ options: Options) throws {
        #expect(try Self.text(url, options) == nil)
    }

    @Test func theNodesConnectionsGoToTheSocket() throws {
        let t = RedisTunnel(
            remote: try RedisURL(parsing: "rediss://:pw@r:6380/2"), dataDir: "/data", options: Options())
        #expect(t.localURL.socketPath == "/data/redis-tls/redis.sock")
        #expect(t.localURL.password == "pw" && t.localURL.database == 2 && !t.localURL.tls)
    }
}
