import AtriumAuth
import AtriumConfig
import AtriumJSON
import AtriumLog
import AtriumModel
import AtriumServer

#if canImport(Glibc)
    import Glibc
#endif

/// `atrium serve | token create | config check | share | watch | version | help`.
func fail(_ message: String, code: Int32 = 2) -> Never {
    writeStderr("atrium: " + message + "\n")
    exit(code)
}

func writeStderr(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

/// One line to standard output at once (a JSON event of `share` or `watch`), unbuffered: a reader
/// of the pipe sees each line as it is written.
func emitLine(_ text: String) {
    let bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
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

func parse(
    _ args: ArraySlice<String>, command: String, valueFlags: Set<String>, switches: Set<String> = [],
    positionals: Int = 0, usage: String
) -> Arguments {
    let parsed: Arguments
    do {
        parsed = try Arguments(
            args, command: command, valueFlags: valueFlags, switches: switches, positionals: positionals)
    } catch {
        fail(error.message)
    }
    if parsed.help {
        print(usage)
        exit(0)
    }
    return parsed
}

func serve(_ args: ArraySlice<String>) -> Int32 {
    let valueFlags = Set(ConfigLoader.settingFlags.map(\.flag)).union(["--config"]).subtracting(
        ConfigLoader.booleanFlags)
    let parsed = parse(
        args, command: "serve", valueFlags: valueFlags, switches: ConfigLoader.booleanFlags, usage: Usage.serve)
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

/// The key and secret the README's quick start shows in place of the real ones.
let placeholderKey = "devxxxxxxx"
let placeholderSecret = "..."

func tokenCreate(_ args: ArraySlice<String>) -> Int32 {
    let parsed = parse(
        args, command: "token create",
        valueFlags: ["--key", "--secret", "--room", "--identity", "--name", "--role", "--sources", "--ttl"],
        switches: ["--admin", "--no-data"], usage: Usage.tokenCreate)
    let f = parsed.flags
    guard let key = f["--key"], let secret = f["--secret"] else { fail("token create needs --key and --secret") }
    if key == placeholderKey || secret == placeholderSecret {
        fail(
            "token create: --key \(placeholderKey) and --secret \(placeholderSecret) are the README's placeholders: "
                + "use the API key and secret the server printed (\"API key:\", \"API secret:\") "
                + "or the ones it was given with --keys")
    }
    guard secret.utf8.count >= ServerConfig.minimumSecretLength else {
        fail(
            "token create: the secret is \(secret.utf8.count) bytes; secrets must have at least "
                + "\(ServerConfig.minimumSecretLength) bytes (the server refuses shorter ones outside --dev)")
    }
    guard let identity = f["--identity"], ParticipantIdentity.isValid(identity) else {
        fail("token create needs --identity: 1 to 256 characters, no control characters or '/', not '.' or '..'")
    }
    let admin = f["--admin"] == "true"
    let room = f["--room"]
    guard room != nil || admin else { fail("token create needs --room (or --admin for a token valid in every room)") }
    if let room, !Room.isValidName(room), !RoomID.isWellFormed(room) {
        fail("token create: --room " + Room.invalidNameMessage(room))
    }
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
    grants.canPublishData = f["--no-data"] != "true"
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
    let parsed = parse(args, command: "config check", valueFlags: [], positionals: 1, usage: Usage.configCheck)
    guard let path = parsed.positional.first else { fail("usage: atrium config check FILE") }
    let file = loadConfigFile(path)
    let (config, issues) = ConfigLoader.resolve(file: file, environment: environment(), flags: [:])
    var errors = issues.map { "\($0.field): \($0.message)" }
    if issues.allSatisfy({ $0.field != "bind" }),
        let p = ListenProbe.check(address: config.bind, port: 0), p == .notLocal || p == .notAnAddress
    {
        errors.append(
            "bind: "
                + ListenProbe.message(
                    p, address: config.bind, port: config.port, addressFlag: "--bind", portFlag: "--port", proto: "TCP")
        )
    }
    if config.udpPort >= 0, issues.allSatisfy({ $0.field != "media.bind" }),
        let p = ListenProbe.check(address: config.mediaBind, port: 0, udp: true), p == .notLocal
    {
        errors.append(
            "media.bind: "
                + ListenProbe.message(
                    p, address: config.mediaBind, port: config.udpPort, addressFlag: "--media-bind",
                    portFlag: "--udp-port", proto: "UDP"))
    }
    for line in errors { print("\(path): \(line)") }
    var warnings: [String] = []
    for (field, file) in [("tls.cert", config.tlsCert), ("tls.key", config.tlsKey)] {
        if let file, readWholeFile(file) == nil {
            warnings.append("\(field): cannot read \(file): serve refuses to start without it")
        }
    }
    if config.keys.isEmpty && !config.dev {
        warnings.append(
            "keys: no API keys (in the file's \"keys\" or ATRIUM_KEYS): serve refuses to start without --keys, "
                + "ATRIUM_KEYS or dev")
    }
    for line in warnings { print("\(path): warning: \(line)") }
    guard errors.isEmpty else { return 1 }
    print("\(path): ok")
    return 0
}

let argv = CommandLine.arguments
let command = argv.count > 1 ? argv[1] : "help"
let code: Int32
switch command {
case "serve": code = serve(argv.dropFirst(2))
case "token" where argv.count > 2 && argv[2] == "create": code = tokenCreate(argv.dropFirst(3))
case "config" where argv.count > 2 && argv[2] == "check": code = configCheck(argv.dropFirst(3))
case "share": code = share(argv.dropFirst(2))
case "watch": code = watch(argv.dropFirst(2))
case "version", "--version":
    guard argv.count == 2 else { fail("version: unexpected argument \"\(argv[2])\"") }
    print("atrium \(AtriumServer.version)")
    code = 0
case "help", "--help":
    print(Usage.overview)
    code = 0
case "token", "config":
    let sub = argv.count > 2 ? " \(argv[2])" : ""
    let want = command == "token" ? "token create" : "config check"
    fail("unknown command \"\(command)\(sub)\"; did you mean 'atrium \(want)'?\nRun 'atrium --help' for the commands.")
case let word where word.hasPrefix("-"):
    fail("unknown option \(word) (options start with two dashes, e.g. --help)\nRun 'atrium --help' for the commands.")
default: fail("unknown command \"\(command)\"\nRun 'atrium --help' for the commands.")
}
exit(code)
