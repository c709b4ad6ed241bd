import AtriumAuth
import AtriumConfig
import AtriumJSON
import AtriumLog
import AtriumModel
import AtriumServer

#if canImport(Glibc)
    import Glibc
#endif

/// `atrium serve | token create | config check | version | help`.
let usage = """
    Usage:
      atrium serve [--config FILE] [--bind ADDR] [--port N] [--store sqlite|memory] [--data-dir DIR]
                   [--keys KEY:SECRET[,KEY:SECRET]] [--dev] [other settings below]
      atrium token create --key K --secret S [--room R] --identity I [--name N]
                   [--role host|cohost|participant|viewer]
                   [--sources camera,microphone,screen_share,screen_share_audio] [--admin] [--ttl SECONDS]
      atrium config check FILE
      atrium version

    Settings (flag, environment variable, config file field); precedence flag > environment > file > default:
    """

func settingsHelp() -> String {
    ConfigLoader.settingFlags.map { f in
        "  \(f.flag.padding(24))\(f.env.padding(28))\(f.path.padding(26))\(f.help)"
    }.joined(separator: "\n")
}

extension String {
    func padding(_ n: Int) -> String { count >= n ? self + " " : self + String(repeating: " ", count: n - count) }
}

func fail(_ message: String, code: Int32 = 2) -> Never {
    let bytes = Array(("atrium: " + message + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(code)
}

func environment() -> [String: String] {
    var env: [String: String] = [:]
    var p = environ
    while let entry = p.pointee {
        let s = String(cString: entry)
        if let eq = s.firstIndex(of: "="), s.hasPrefix("ATRIUM_") {
            env[String(s[..<eq])] = String(s[s.index(after: eq)...])
        }
        p += 1
    }
    return env
}

func loadConfigFile(_ path: String) -> JSONValue {
    guard let bytes = readWholeFile(path) else { fail("cannot read config file \(path)") }
    do {
        return try JSONParser.parse(bytes)
    } catch {
        fail("\(path): not valid JSON: \(error)")
    }
}

func serve(_ args: ArraySlice<String>) -> Int32 {
    let valueFlags = Set(ConfigLoader.settingFlags.map(\.flag)).union(["--config"]).subtracting(
        ConfigLoader.booleanFlags)
    let parsed: Arguments
    do { parsed = try Arguments(args, valueFlags: valueFlags, switches: ConfigLoader.booleanFlags) } catch {
        fail("\(error.message)\n\(usage)\n\(settingsHelp())")
    }
    let env = environment()
    let configPath = parsed.flags["--config"] ?? env["ATRIUM_CONFIG"]
    let file = configPath.map(loadConfigFile)
    let (config, issues) = ConfigLoader.resolve(file: file, environment: env, flags: parsed.flags)
    if !issues.isEmpty {
        fail("invalid configuration:\n" + issues.map { "  " + $0.description }.joined(separator: "\n"))
    }
    let logger = Logger(level: config.logLevel, format: config.logFormat)
    return AtriumServer(config: config, logger: logger).run()
}

func tokenCreate(_ args: ArraySlice<String>) -> Int32 {
    let parsed: Arguments
    do {
        parsed = try Arguments(
            args,
            valueFlags: [
                "--key", "--secret", "--room", "--identity", "--name", "--role",
                "--sources", "--ttl",
            ], switches: ["--admin"])
    } catch {
        fail("\(error.message)\n\(usage)")
    }
    let f = parsed.flags
    guard let key = f["--key"], let secret = f["--secret"] else { fail("token create needs --key and --secret") }
    guard let identity = f["--identity"], ParticipantIdentity.isValid(identity) else {
        fail("token create needs --identity: 1 to 256 characters, no control characters or '/', not '.' or '..'")
    }
    let admin = f["--admin"] == "true"
    let room = f["--room"]
    guard room != nil || admin else { fail("token create needs --room (or --admin for a token valid in every room)") }
    var grants = Grants()
    grants.room = room
    grants.roomJoin = room != nil
    if let r = f["--role"] {
        guard let role = ParticipantRole(rawValue: r) else {
            fail("--role must be host, cohost, participant or viewer")
        }
        grants.role = role
    }
    grants.canPublish = grants.role != .viewer
    grants.canSubscribe = true
    if let s = f["--sources"] {
        var set = Set<TrackSource>()
        for name in s.split(separator: ",") {
            guard let src = TrackSource(rawValue: String(name)) else {
                fail("unknown source \(name); use camera, microphone, screen_share, screen_share_audio")
            }
            set.insert(src)
        }
        grants.canPublishSources = set
    }
    if admin {
        grants.roomCreate = true
        grants.roomList = true
        grants.roomAdmin = true
    }
    var ttl: Int64 = 6 * 3600
    if let t = f["--ttl"] {
        guard let n = Int64(t), n > 0, n <= 366 * 24 * 3600 else { fail("--ttl must be a number of seconds") }
        ttl = n
    }
    let token = TokenIssuer(key: key, secret: Array(secret.utf8))
        .token(identity: identity, name: f["--name"], grants: grants, ttl: ttl, now: Clock.unixSeconds())
    print(token)
    return 0
}

func configCheck(_ args: ArraySlice<String>) -> Int32 {
    guard let path = args.first, args.count == 1 else { fail("usage: atrium config check FILE") }
    let file = loadConfigFile(path)
    let (_, issues) = ConfigLoader.resolve(file: file, environment: [:], flags: [:])
    if issues.isEmpty {
        print("\(path): ok")
        return 0
    }
    for issue in issues { print("\(path): \(issue.field): \(issue.message)") }
    return 1
}

let argv = CommandLine.arguments
let command = argv.count > 1 ? argv[1] : "help"
let code: Int32
switch command {
case "serve": code = serve(argv.dropFirst(2))
case "token" where argv.count > 2 && argv[2] == "create": code = tokenCreate(argv.dropFirst(3))
case "config" where argv.count > 2 && argv[2] == "check": code = configCheck(argv.dropFirst(3))
case "version", "--version":
    print("atrium \(AtriumServer.version)")
    code = 0
case "help", "--help", "-h":
    print(usage + "\n" + settingsHelp())
    code = 0
default: fail("unknown command \(command)\n\(usage)")
}
exit(code)
