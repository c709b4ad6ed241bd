import AtriumBytes
public import AtriumJSON

/// Resolves a `ServerConfig` from its sources with precedence flag > environment > file > default,
/// collecting every problem with its field rather than stopping at the first.
public enum ConfigLoader {
    /// Every flag `serve` takes for a setting, with its help text and its default (for usage output).
    public static var settingFlags: [(flag: String, env: String, path: String, help: String, defaultText: String)] {
        ConfigField.all.map { ($0.flag, $0.env, $0.path, $0.help, ConfigDefaults.text($0.path)) }
    }

    /// Flags that take no value.
    public static let booleanFlags: Set<String> = ["--dev"]

    /// - Parameters:
    ///   - file: the parsed config file, if any (a JSON object).
    ///   - environment: the process environment; only `ATRIUM_*` names are read.
    ///   - flags: flag name (with dashes) -> value.
    public static func resolve(file: JSONValue?, environment: [String: String], flags: [String: String])
        -> (config: ServerConfig, issues: [ConfigIssue])
    {
        var config = ServerConfig()
        var issues: [ConfigIssue] = []
        if let file {
            if let obj = file.objectValue {
                let flat = flatten(obj, prefix: "")
                let known = Set(ConfigField.all.map(\.path))
                for (path, _) in flat where !known.contains(path) {
                    issues.append(ConfigIssue(field: path, source: "file", message: "unknown field"))
                }
                for field in ConfigField.all {
                    if let v = flat.first(where: { $0.path == field.path })?.value,
                        let msg = field.apply(&config, .json(v))
                    {
                        issues.append(ConfigIssue(field: field.path, source: "file", message: msg))
                    }
                }
            } else {
                issues.append(ConfigIssue(field: "(root)", source: "file", message: "expected a JSON object"))
            }
        }
        for field in ConfigField.all {
            if let v = environment[field.env], let msg = field.apply(&config, .text(v)) {
                issues.append(ConfigIssue(field: field.path, source: field.env, message: msg))
            }
        }
        for field in ConfigField.all {
            if let v = flags[field.flag], let msg = field.apply(&config, .text(v)) {
                issues.append(ConfigIssue(field: field.path, source: field.flag, message: msg))
            }
        }
        issues += validate(config)
        return (config, issues)
    }

    /// Checks that span fields.
    static func validate(_ c: ServerConfig) -> [ConfigIssue] {
        var out: [ConfigIssue] = []
        if !IPAddressText.isValid(c.bind) {
            out.append(
                ConfigIssue(
                    field: "bind", source: "config",
                    message:
                        "\"\(c.bind)\" is not an IPv4 or IPv6 address (use 127.0.0.1, 0.0.0.0 or an address of this machine)"
                ))
        }
        if (c.tlsCert == nil) != (c.tlsKey == nil) {
            out.append(
                ConfigIssue(
                    field: c.tlsCert == nil ? "tls.cert" : "tls.key", source: "config",
                    message: "tls.cert and tls.key must be given together"))
        }
        if c.udpPort >= 0 {
            if !IPAddressText.isValid(c.mediaBind) {
                out.append(
                    ConfigIssue(
                        field: "media.bind", source: "config",
                        message: "\"\(c.mediaBind)\" is not an IPv4 or IPv6 address"))
            }
            for a in c.mediaAnnounce where !IPAddressText.isValid(a) {
                out.append(
                    ConfigIssue(
                        field: "media.announce", source: "config", message: "\"\(a)\" is not an IPv4 or IPv6 address"))
            }
            // With the count given, the ports are checked here; with the default (the cores), at start.
            if c.mediaWorkers > 0,
                case .failure(let problem) = MediaPortPlan.make(
                    workers: c.mediaWorkers, udpPort: c.udpPort, range: c.udpPortRange, tcpPort: c.mediaTCPPort)
            {
                out.append(
                    ConfigIssue(
                        field: c.udpPortRange == nil ? "media.udpPort" : "media.udpPorts", source: "config",
                        message: problem.description))
            }
            if c.mediaAnnounce.isEmpty && (c.mediaBind == "0.0.0.0" || c.mediaBind == "::") {
                out.append(
                    ConfigIssue(
                        field: "media.announce", source: "config",
                        message: "media.bind \(c.mediaBind) needs media.announce: the address peers reach"))
            }
        }
        if let secret = c.turnSecret {
            if c.turnURLs.isEmpty {
                out.append(
                    ConfigIssue(field: "turn.urls", source: "config", message: "turn.secret needs turn.urls"))
            }
            if !c.dev && secret.utf8.count < ServerConfig.minimumSecretLength {
                out.append(
                    ConfigIssue(
                        field: "turn.secret", source: "config",
                        message: "turn.secret is shorter than \(ServerConfig.minimumSecretLength) bytes"))
            }
        }
        if c.mediaTCPPort >= 0 && c.udpPort < 0 {
            out.append(
                ConfigIssue(
                    field: "media.tcpPort", source: "config",
                    message: "ICE-TCP is part of the media plane, which media.udpPort -1 turns off"))
        }
        for (key, secret) in c.keys.sorted(by: { $0.key < $1.key }) {
            if key.isEmpty || key.contains(where: { $0 == ":" || $0 == "," || $0.isWhitespace }) {
                out.append(
                    ConfigIssue(
                        field: "keys", source: "config",
                        message: "API key \"\(key)\" must be non-empty without ':', ',' or spaces"))
            }
            if !c.dev && secret.utf8.count < ServerConfig.minimumSecretLength {
                out.append(
                    ConfigIssue(
                        field: "keys", source: "config",
                        message:
                            "the secret of key \"\(key)\" is shorter than \(ServerConfig.minimumSecretLength) bytes"))
            }
        }
        return out
    }

    /// Flattens nested objects to dotted paths, except `keys`, whose members are data, not settings.
    static func flatten(_ o: JSONObject, prefix: String) -> [(path: String, value: JSONValue)] {
        var out: [(path: String, value: JSONValue)] = []
        for (k, v) in o {
            let path = prefix.isEmpty ? k : prefix + "." + k
            if case .object(let inner) = v, path != "keys" {
                out += flatten(inner, prefix: path)
            } else {
                out.append((path, v))
            }
        }
        return out
    }
}

/// Literal IP addresses as the media settings take them (no host names: nothing is resolved).
enum IPAddressText {
    static func isValid(_ text: String) -> Bool {
        parseIPv4(Substring(text)) != nil || (text.contains(":") && parseIPv6(Substring(text)) != nil)
    }
}
