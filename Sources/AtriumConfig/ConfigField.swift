import AtriumJSON
import AtriumLog

/// A raw setting before parsing: JSON from the config file, text from the environment or a flag.
enum RawSetting {
    case json(JSONValue)
    case text(String)
}

/// One setting with its three spellings: the config file's dotted path, the environment variable and the flag.
struct ConfigField: Sendable {
    let path: String
    let env: String
    let flag: String
    let help: String
    /// Applies a raw value; returns a message when it is not valid.
    let apply: @Sendable (inout ServerConfig, RawSetting) -> String?

    static let all: [ConfigField] = [
        ConfigField(path: "bind", env: "ATRIUM_BIND", flag: "--bind", help: "address to listen on") { c, raw in
            guard let s = text(raw), !s.isEmpty else { return "expected an address such as 127.0.0.1" }
            c.bind = s
            return nil
        },
        ConfigField(path: "port", env: "ATRIUM_PORT", flag: "--port", help: "TCP port (0: any free port)") { c, raw in
            guard let n = int(raw), (0...65535).contains(n) else { return "expected a port number from 0 to 65535" }
            c.port = n
            return nil
        },
        ConfigField(path: "store", env: "ATRIUM_STORE", flag: "--store", help: "sqlite or memory") { c, raw in
            guard let s = text(raw), let k = StoreKind(rawValue: s) else { return "expected sqlite or memory" }
            c.store = k
            return nil
        },
        ConfigField(
            path: "dataDir", env: "ATRIUM_DATA_DIR", flag: "--data-dir", help: "directory for the database and dev keys"
        ) { c, raw in
            guard let s = text(raw), !s.isEmpty else { return "expected a directory path" }
            c.dataDir = s
            return nil
        },
        ConfigField(path: "keys", env: "ATRIUM_KEYS", flag: "--keys", help: "API keys, KEY:SECRET[,KEY:SECRET]") {
            c, raw in
            switch raw {
            case .json(.object(let o)):
                var keys: [String: String] = [:]
                for (k, v) in o {
                    guard let s = v.stringValue else { return "the secret of key \"\(k)\" must be a string" }
                    keys[k] = s
                }
                c.keys = keys
                return nil
            case .json(.string(let s)), .text(let s):
                var keys: [String: String] = [:]
                for pair in s.split(separator: ",") {
                    guard let colon = pair.firstIndex(of: ":"), colon != pair.startIndex,
                        pair.index(after: colon) != pair.endIndex
                    else { return "expected KEY:SECRET pairs separated by commas" }
                    keys[String(pair[..<colon])] = String(pair[pair.index(after: colon)...])
                }
                c.keys = keys
                return nil
            default:
                return "expected an object of key to secret, or KEY:SECRET pairs"
            }
        },
        ConfigField(
            path: "dev", env: "ATRIUM_DEV", flag: "--dev", help: "development mode: creates and prints a dev key"
        ) { c, raw in
            guard let b = bool(raw) else { return "expected true or false" }
            c.dev = b
            return nil
        },
        ConfigField(path: "tls.cert", env: "ATRIUM_TLS_CERT", flag: "--tls-cert", help: "PEM certificate for https/wss")
        { c, raw in
            guard let s = text(raw), !s.isEmpty else { return "expected a file path" }
            c.tlsCert = s
            return nil
        },
        ConfigField(path: "tls.key", env: "ATRIUM_TLS_KEY", flag: "--tls-key", help: "PEM private key for https/wss") {
            c, raw in
            guard let s = text(raw), !s.isEmpty else { return "expected a file path" }
            c.tlsKey = s
            return nil
        },
        ConfigField(
            path: "cors.origins", env: "ATRIUM_CORS_ORIGINS", flag: "--cors-origins",
            help: "origins allowed by CORS, comma-separated, or *"
        ) { c, raw in
            switch raw {
            case .json(.array(let a)):
                let s = a.compactMap(\.stringValue)
                guard s.count == a.count else { return "expected an array of origins" }
                c.corsOrigins = s
            case .json(.string(let s)), .text(let s):
                c.corsOrigins = s.split(separator: ",").map { String($0) }
            default: return "expected an array of origins"
            }
            return nil
        },
        ConfigField(path: "log.level", env: "ATRIUM_LOG_LEVEL", flag: "--log-level", help: "debug, info, warn or error")
        { c, raw in
            guard let s = text(raw), let l = LogLevel(name: s) else { return "expected debug, info, warn or error" }
            c.logLevel = l
            return nil
        },
        ConfigField(path: "log.format", env: "ATRIUM_LOG_FORMAT", flag: "--log-format", help: "text (logfmt) or json") {
            c, raw in
            guard let s = text(raw), let f = LogFormat(rawValue: s) else { return "expected text or json" }
            c.logFormat = f
            return nil
        },
        ConfigField(
            path: "limits.maxBodyBytes", env: "ATRIUM_MAX_BODY_BYTES", flag: "--max-body-bytes",
            help: "largest admin request body"
        ) { c, raw in
            guard let n = int(raw), (1024...(64 << 20)).contains(n) else {
                return "expected a size from 1024 to 67108864 bytes"
            }
            c.maxBodyBytes = n
            return nil
        },
        ConfigField(
            path: "auth.leewaySeconds", env: "ATRIUM_TOKEN_LEEWAY", flag: "--token-leeway",
            help: "clock skew tolerated on token times"
        ) { c, raw in
            guard let n = int(raw), (0...600).contains(n) else { return "expected 0 to 600 seconds" }
            c.tokenLeeway = n
            return nil
        },
        ConfigField(
            path: "signal.authTimeoutSeconds", env: "ATRIUM_SIGNAL_AUTH_TIMEOUT", flag: "--signal-auth-timeout",
            help: "seconds a WebSocket has to authenticate"
        ) { c, raw in
            guard let n = int(raw), (1...300).contains(n) else { return "expected 1 to 300 seconds" }
            c.signalAuthTimeout = n
            return nil
        },
        ConfigField(
            path: "signal.idleTimeoutSeconds", env: "ATRIUM_SIGNAL_IDLE_TIMEOUT", flag: "--signal-idle-timeout",
            help: "seconds of silence before a WebSocket is closed"
        ) { c, raw in
            guard let n = int(raw), (5...3600).contains(n) else { return "expected 5 to 3600 seconds" }
            c.signalIdleTimeout = n
            return nil
        },
        ConfigField(
            path: "signal.resumeWindowSeconds", env: "ATRIUM_RESUME_WINDOW", flag: "--resume-window",
            help: "seconds a dropped participant may resume"
        ) { c, raw in
            guard let n = int(raw), (0...600).contains(n) else { return "expected 0 to 600 seconds" }
            c.resumeWindow = n
            return nil
        },
        ConfigField(
            path: "rooms.autoCreate", env: "ATRIUM_AUTO_CREATE_ROOMS", flag: "--auto-create-rooms",
            help: "off, grant (token has roomCreate) or any"
        ) { c, raw in
            guard let s = text(raw), ["off", "grant", "any"].contains(s) else { return "expected off, grant or any" }
            c.autoCreateRooms = s
            return nil
        },
    ]

    static func text(_ raw: RawSetting) -> String? {
        switch raw {
        case .text(let s), .json(.string(let s)): s
        default: nil
        }
    }

    static func int(_ raw: RawSetting) -> Int? {
        switch raw {
        case .text(let s): Int(s)
        case .json(let v): v.int64Value.flatMap { Int(exactly: $0) }
        }
    }

    static func bool(_ raw: RawSetting) -> Bool? {
        switch raw {
        case .json(.bool(let b)): b
        case .text(let s), .json(.string(let s)):
            switch s.lowercased() {
            case "1", "true", "yes", "on", "": true
            case "0", "false", "no", "off": false
            default: nil
            }
        default: nil
        }
    }
}
