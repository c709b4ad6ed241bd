/// Splits `--flag value`, `--flag=value` and bare `--switch` arguments of one command. Unknown flags,
/// single-dash options (`-h`) and words the command does not take are refused, never ignored;
/// `--help` anywhere asks for the command's usage.
struct Arguments {
    var flags: [String: String] = [:]
    var positional: [String] = []
    var help = false

    /// - Parameters:
    ///   - command: the command's name in messages (`serve`, `token create`).
    ///   - positionals: how many bare words the command takes (`config check FILE`: 1).
    init(
        _ args: ArraySlice<String>, command: String, valueFlags: Set<String>, switches: Set<String>,
        positionals: Int = 0
    ) throws(UsageError) {
        var i = args.startIndex
        while i < args.endIndex {
            let a = args[i]
            i += 1
            if a == "--help" {
                help = true
                continue
            }
            if a.hasPrefix("-") && !a.hasPrefix("--") && a != "-" {
                throw UsageError(command, "unknown option \(a) (options start with two dashes, e.g. --help)")
            }
            guard a.hasPrefix("--") else {
                guard positional.count < positionals else { throw UsageError(command, "unexpected argument \"\(a)\"") }
                positional.append(a)
                continue
            }
            var name = a
            var value: String?
            if let eq = a.firstIndex(of: "=") {
                name = String(a[..<eq])
                value = String(a[a.index(after: eq)...])
            }
            if switches.contains(name) {
                flags[name] = value ?? "true"
            } else if valueFlags.contains(name) {
                if value == nil {
                    guard i < args.endIndex else { throw UsageError(command, "\(name) needs a value") }
                    value = args[i]
                    i += 1
                }
                flags[name] = value
            } else {
                throw UsageError(command, "unknown option \(name)")
            }
        }
    }
}

/// A refused command line: the message names the command, and `atrium COMMAND --help` tells the rest.
struct UsageError: Error {
    var message: String
    init(_ command: String, _ message: String) {
        self.message = "\(command): \(message)\nRun 'atrium \(command) --help' for its usage."
    }
}
