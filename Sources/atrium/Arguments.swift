/// Splits `--flag value`, `--flag=value` and bare `--switch` arguments. Unknown flags are errors.
struct Arguments {
    var flags: [String: String] = [:]
    var positional: [String] = []

    init(_ args: ArraySlice<String>, valueFlags: Set<String>, switches: Set<String>) throws(UsageError) {
        var i = args.startIndex
        while i < args.endIndex {
            let a = args[i]
            i += 1
            guard a.hasPrefix("--") else {
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
                    guard i < args.endIndex else { throw UsageError("\(name) needs a value") }
                    value = args[i]
                    i += 1
                }
                flags[name] = value
            } else {
                throw UsageError("unknown option \(name)")
            }
        }
    }
}

struct UsageError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
