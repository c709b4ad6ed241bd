extension MediaStats {
    /// The exposition of several media workers' counters as one: each family's HELP and TYPE once,
    /// then every worker's samples with its `worker` label (Prometheus refuses a family named twice).
    /// One worker keeps its samples unlabelled, as a server with one media thread always showed them.
    public static func prometheus(workers: [MediaStats]) -> String {
        guard workers.count > 1 else { return workers.first?.prometheus() ?? "" }
        var order: [String] = []
        var headers: [String: [Substring]] = [:]
        var samples: [String: [Substring]] = [:]
        for (i, stats) in workers.enumerated() {
            var current = ""
            for line in stats.prometheus(worker: i).split(separator: "\n") {
                if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") {
                    let name = String(line.dropFirst(7).prefix { $0 != " " })
                    current = name
                    if i == 0 {
                        if headers[name] == nil { order.append(name) }
                        headers[name, default: []].append(line)
                    }
                } else {
                    samples[current, default: []].append(line)
                }
            }
        }
        var out = ""
        for name in order {
            for line in headers[name] ?? [] { out += line + "\n" }
            for line in samples[name] ?? [] { out += line + "\n" }
        }
        return out
    }
}
