import AtriumJSON

#if canImport(Glibc)
    import Glibc
#endif

/// Log levels in increasing severity.
public enum LogLevel: Int, Comparable, Sendable, CaseIterable {
    case debug, info, warn, error

    public init?(name: String) {
        switch name.lowercased() {
        case "debug": self = .debug
        case "info": self = .info
        case "warn", "warning": self = .warn
        case "error": self = .error
        default: return nil
        }
    }

    public var name: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .warn: "warn"
        case .error: "error"
        }
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// Output format: logfmt (`ts=... level=info msg="..." key=value`) for people, JSON lines for collectors.
public enum LogFormat: String, Sendable {
    case text
    case json
}

/// A structured logger writing one line per event to standard error. Not for the packet path.
public struct Logger: Sendable {
    public var level: LogLevel
    public var format: LogFormat
    /// Fields added to every line (e.g. the module).
    public var context: [(String, String)]

    public init(level: LogLevel = .info, format: LogFormat = .text, context: [(String, String)] = []) {
        self.level = level
        self.format = format
        self.context = context
    }

    public func with(_ key: String, _ value: String) -> Logger {
        var l = self
        l.context.append((key, value))
        return l
    }

    public func debug(_ msg: String, _ fields: (String, String)...) { log(.debug, msg, fields) }
    public func info(_ msg: String, _ fields: (String, String)...) { log(.info, msg, fields) }
    public func warn(_ msg: String, _ fields: (String, String)...) { log(.warn, msg, fields) }
    public func error(_ msg: String, _ fields: (String, String)...) { log(.error, msg, fields) }

    public func log(_ lvl: LogLevel, _ msg: String, _ fields: [(String, String)]) {
        guard lvl >= level else { return }
        let line = Self.render(lvl, msg, context + fields, format: format, time: Self.timestamp())
        // write(2) on fd 2: one syscall per line, so concurrent lines do not interleave.
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    /// Renders one line; pure, for tests.
    public static func render(
        _ lvl: LogLevel, _ msg: String, _ fields: [(String, String)], format: LogFormat,
        time: String
    ) -> String {
        let all = [("ts", time), ("level", lvl.name), ("msg", msg)] + fields
        switch format {
        case .text:
            return all.map { "\($0.0)=\(logfmtValue($0.1))" }.joined(separator: " ")
        case .json:
            return "{" + all.map { "\(jsonString($0.0)):\(jsonString($0.1))" }.joined(separator: ",") + "}"
        }
    }

    static func logfmtValue(_ v: String) -> String {
        let needsQuotes = v.isEmpty || v.contains(where: { $0 == " " || $0 == "=" || $0 == "\"" || $0.isNewline })
        return needsQuotes ? jsonString(v) : v
    }

    /// A JSON string literal, escaped by the one JSON writer of the project.
    static func jsonString(_ s: String) -> String { JSONValue.string(s).serialized() }

    /// RFC 3339 UTC with milliseconds.
    static func timestamp() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var t = ts.tv_sec
        var tm = tm()
        gmtime_r(&t, &tm)
        func pad(_ v: Int32, _ n: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, n - s.count)) + s
        }
        return "\(pad(tm.tm_year + 1900, 4))-\(pad(tm.tm_mon + 1, 2))-\(pad(tm.tm_mday, 2))T"
            + "\(pad(tm.tm_hour, 2)):\(pad(tm.tm_min, 2)):\(pad(tm.tm_sec, 2)).\(pad(Int32(ts.tv_nsec / 1_000_000), 3))Z"
    }
}
