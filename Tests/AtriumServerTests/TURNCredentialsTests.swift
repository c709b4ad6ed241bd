import AtriumAuth
import AtriumConfig
import AtriumCrypto
import Testing

/// TURN REST API credentials (coturn's `use-auth-secret`) and their settings.
@Suite struct TURNCredentialsTests {
    static let settings = TURNSettings(urls: ["turn:127.0.0.1:3478"], secret: Array("secret".utf8), ttl: 3600)

    /// A value computed independently: `printf '%s' '1700003600:alice' | openssl dgst -sha1 -hmac secret -binary | base64`.
    @Test func usernameAndCredentialAsCoturnComputesThem() throws {
        let c = try #require(Self.settings.credential(identity: "alice", fallback: "PA_x", now: 1_700_000_000))
        #expect(c.username == "1700003600:alice")
        #expect(c.expiresAt == 1_700_003_600)
        #expect(c.credential == Base64.encode(HMACSHA1.authenticate(Array(c.username.utf8), key: Array("secret".utf8))))
        #expect(c.credential == "LLPLO4qjdVL2qZhwr3eImhn7J20=")
        #expect(c.urls == ["turn:127.0.0.1:3478"])
    }

    @Test(arguments: [Int64.min, -1])
    func noCredentialBeforeTheEpoch(now: Int64) {
        #expect(Self.settings.credential(identity: "a", fallback: "b", now: now) == nil)
    }

    @Test(arguments: [Int64.max, Int64.max - 3599])
    func noCredentialWhenTheExpiryWouldOverflow(now: Int64) {
        #expect(Self.settings.credential(identity: "a", fallback: "b", now: now) == nil)
    }

    @Test func theExpiryIsNeverPastTheTTL() throws {
        for now: Int64 in [0, 1, 1_700_000_000, Int64.max - 3600] {
            let c = try #require(Self.settings.credential(identity: "a", fallback: "b", now: now))
            #expect(c.expiresAt - now == 3600)
        }
    }

    @Test func unusableIdentitiesAreReplacedByTheParticipantID() throws {
        for identity in ["", String(repeating: "x", count: 129), "a\u{0}b", "line\nbreak"] {
            let c = try #require(Self.settings.credential(identity: identity, fallback: "PA_1", now: 10))
            #expect(c.username == "3610:PA_1")
        }
        let colon = try #require(Self.settings.credential(identity: "team:alice", fallback: "PA_1", now: 10))
        #expect(colon.username == "3610:team:alice")  // coturn reads the expiry up to the first colon
    }

    @Test func base64MatchesRFC4648Vectors() {
        let vectors = [
            "": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=",
            "foobar": "Zm9vYmFy",
        ]
        for (input, output) in vectors { #expect(Base64.encode(Array(input.utf8)) == output) }
    }

    @Test(arguments: [
        ("turn:turn.example.com", true), ("turn:127.0.0.1:3478?transport=udp", true),
        ("turns:turn.example.com:443?transport=tcp", true), ("turn:[::1]:3478", true),
        ("stun:turn.example.com", false), ("turn:", false), ("turn:a b", false), ("turn:x?transport=sctp", false),
        ("turn:x\"", false), ("https://x", false),
    ])
    func turnURLs(url: String, valid: Bool) {
        #expect(ServerConfig.isTURNURL(url) == valid)
    }

    @Test func configNeedsURLsAndSecretTogether() {
        let secret = String(repeating: "s", count: 32)
        let (c, ok) = ConfigLoader.resolve(
            file: nil, environment: [:],
            flags: [
                "--turn-urls": "turn:127.0.0.1:3478,turns:t.example.com:443?transport=tcp", "--turn-secret": secret,
                "--media-tcp-port": "8802",
            ])
        #expect(ok.isEmpty)
        #expect(c.turnURLs.count == 2 && c.turnSecret == secret && c.turnTTL == 86_400 && c.mediaTCPPort == 8802)
        // The secret belongs in the environment (`config check` sees only the file): `serve` checks it.
        let (_, noSecret) = ConfigLoader.resolve(file: nil, environment: [:], flags: ["--turn-urls": "turn:x"])
        #expect(noSecret.isEmpty)
        let (_, short) = ConfigLoader.resolve(
            file: nil, environment: [:], flags: ["--turn-urls": "turn:x", "--turn-secret": "short"])
        #expect(short.map(\.field) == ["turn.secret"])
        let (_, badURL) = ConfigLoader.resolve(file: nil, environment: [:], flags: ["--turn-urls": "stun:x"])
        #expect(badURL.map(\.field).contains("turn.urls"))
        let (_, badTTL) = ConfigLoader.resolve(file: nil, environment: [:], flags: ["--turn-ttl": "10"])
        #expect(badTTL.map(\.field) == ["turn.ttlSeconds"])
    }
}
