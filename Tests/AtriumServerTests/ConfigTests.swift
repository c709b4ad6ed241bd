import AtriumJSON
import AtriumLog
import Testing

@testable import AtriumConfig

@Suite struct ConfigTests {
    static let secret = String(repeating: "s", count: 32)

    @Test func defaults() {
        let (c, issues) = ConfigLoader.resolve(file: nil, environment: [:], flags: [:])
        #expect(issues.isEmpty)
        #expect(c.bind == "127.0.0.1")
        #expect(c.port == 8800)
        #expect(c.store == .sqlite)
    }

    /// flag > environment > file > default, field by field.
    @Test func precedence() throws {
        let file = try JSONParser.parse(
            #"{"port": 9000, "bind": "0.0.0.0", "store": "memory", "log": {"level": "debug"}}"#)
        let env = ["ATRIUM_PORT": "9100", "ATRIUM_BIND": "127.0.0.2", "ATRIUM_KEYS": "a:\(Self.secret)"]
        let flags = ["--port": "9200"]
        let (c, issues) = ConfigLoader.resolve(file: file, environment: env, flags: flags)
        #expect(issues.isEmpty)
        #expect(c.port == 9200)  // flag
        #expect(c.bind == "127.0.0.2")  // env over file
        #expect(c.store == .memory)  // file over default
        #expect(c.logLevel == .debug)  // nested file field
        #expect(c.dataDir == "atrium-data")  // default
        #expect(c.keys == ["a": Self.secret])
    }

    @Test func keysFromFileObjectAndFlagPairs() throws {
        let file = try JSONParser.parse(#"{"keys": {"k1": "\#(Self.secret)"}}"#)
        let (c1, i1) = ConfigLoader.resolve(file: file, environment: [:], flags: [:])
        #expect(i1.isEmpty)
        #expect(c1.keys == ["k1": Self.secret])
        let (c2, i2) = ConfigLoader.resolve(
            file: file, environment: [:], flags: ["--keys": "x:\(Self.secret),y:\(Self.secret)"])
        #expect(i2.isEmpty)
        #expect(c2.keys.count == 2)
    }

    /// Every problem is reported with its field, not only the first.
    @Test func webhooksFromTheFileOrAJSONFlag() throws {
        let file = try JSONParser.parse(
            #"{"webhooks": [{"url": "https://app.example/hooks", "secret": "s1"}], "webhookTimeoutSeconds": 9}"#)
        let (c1, i1) = ConfigLoader.resolve(file: file, environment: [:], flags: [:])
        #expect(i1.isEmpty)
        #expect(c1.webhooks == [WebhookSetting(url: "https://app.example/hooks", secret: "s1")])
        #expect(c1.webhookTimeout == 9)
        let (c2, i2) = ConfigLoader.resolve(
            file: nil, environment: [:], flags: ["--webhooks": #"[{"url":"http://127.0.0.1:9/h","secret":"s"}]"#])
        #expect(i2.isEmpty && c2.webhooks.count == 1)
        for bad in [#"[{"url":"ftp://x","secret":"s"}]"#, #"[{"url":"http://x"}]"#, "not json", #"{"url":1}"#] {
            let (_, issues) = ConfigLoader.resolve(file: nil, environment: [:], flags: ["--webhooks": bad])
            #expect(issues.map(\.field) == ["webhooks"], "\(bad)")
        }
    }

    @Test func issuesNameTheirFields() throws {
        let file = try JSONParser.parse(
            #"{"port": "http", "store": "postgres", "colour": "blue", "tls": {"cert": "/c.pem"}, "keys": {"k": "short"}}"#
        )
        let (_, issues) = ConfigLoader.resolve(file: file, environment: ["ATRIUM_LOG_LEVEL": "loud"], flags: [:])
        let fields = Set(issues.map(\.field))
        #expect(fields.isSuperset(of: ["port", "store", "colour", "tls.key", "keys", "log.level"]))
        #expect(issues.first { $0.field == "log.level" }?.source == "ATRIUM_LOG_LEVEL")
    }

    @Test func devAllowsShortSecrets() throws {
        let (_, issues) = ConfigLoader.resolve(
            file: nil, environment: [:], flags: ["--dev": "true", "--keys": "k:short"])
        #expect(issues.isEmpty)
    }

    @Test func clusterSettings() throws {
        let file = try JSONParser.parse(#"{"cluster": {"redis": "redis://10.0.0.9:6379/1", "nodeId": "n-1"}}"#)
        let (c, issues) = ConfigLoader.resolve(
            file: file, environment: ["ATRIUM_PUBLIC_URL": "http://10.0.0.5:8800"], flags: ["--node-id": "n.2"])
        #expect(issues.isEmpty)
        #expect(c.redis == "redis://10.0.0.9:6379/1" && c.nodeID == "n.2" && c.publicURL == "http://10.0.0.5:8800")
        let (single, _) = ConfigLoader.resolve(file: nil, environment: [:], flags: [:])
        #expect(single.redis == nil && single.nodeID == nil && single.publicURL == nil)
    }

    @Test(arguments: [
        "--port=-1", "--port=65536", "--port=abc", "--keys=nocolon", "--keys=:x", "--max-body-bytes=1",
        "--redis=http://x", "--redis=redis://", "--node-id=a/b", "--node-id=", "--public-url=10.0.0.1:8800",
    ])
    func badFlagValues(_ arg: String) {
        let parts = arg.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let (_, issues) = ConfigLoader.resolve(file: nil, environment: [:], flags: [parts[0]: parts[1]])
        #expect(!issues.isEmpty)
    }

    @Test(arguments: [
        ("127.0.0.1", true), ("0.0.0.0", true), ("::1", true), ("::", true), ("2001:db8::5", true),
        ("1:2:3:4:5:6:7:8", true), ("1.2.3", false), ("1.2.3.4.5", false), ("01.2.3.4", false),
        ("256.1.1.1", false), ("media.example", false), ("1::2::3", false), ("1:2:3:4:5:6:7:8:9", false),
    ])
    func mediaAddressesAreLiteralIPs(_ text: String, _ valid: Bool) {
        #expect(IPAddressText.isValid(text) == valid, "\(text)")
    }

    @Test func aWildcardMediaBindNeedsAnAnnouncedAddress() {
        let (_, issues) = ConfigLoader.resolve(
            file: nil, environment: [:], flags: ["--media-bind": "0.0.0.0", "--dev": ""])
        #expect(issues.contains { $0.field == "media.announce" })
        let (c, ok) = ConfigLoader.resolve(
            file: nil, environment: [:],
            flags: ["--media-bind": "0.0.0.0", "--media-announce": "203.0.113.7, 198.51.100.2", "--dev": ""])
        #expect(ok.isEmpty, "\(ok)")
        #expect(c.mediaAnnounce == ["203.0.113.7", "198.51.100.2"])
    }
}

/// `atrium serve --help` prints each setting's default from a fresh `ServerConfig`: every setting
/// without a value of its own (keys, TLS files, CORS, TURN servers, webhooks, the cluster) says "none", the
/// others theirs.
@Test func everySettingHasItsDefaultInTheHelp() {
    let optional: Set<String> = [
        "keys", "tls.cert", "tls.key", "cors.origins", "turn.urls", "turn.secret", "webhooks", "cluster.redis",
        "cluster.nodeId", "cluster.publicUrl", "cluster.secret", "cluster.redisCA", "cluster.redisCert",
        "cluster.redisKey",
    ]
    for f in ConfigLoader.settingFlags {
        #expect((f.defaultText == "none") == optional.contains(f.path), "\(f.path): \(f.defaultText)")
    }
    #expect(ConfigLoader.settingFlags.first { $0.path == "port" }?.defaultText == String(ServerConfig().port))
}
