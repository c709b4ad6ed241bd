/// Prometheus metrics in the text exposition format (version 0.0.4). Owned by the service thread;
/// gauges whose value lives elsewhere are read through closures at scrape time.
public final class MetricsRegistry {
    /// Latency buckets in seconds, from sub-millisecond admin calls to slow store writes.
    public static let latencyBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1]

    private struct RequestKey: Hashable {
        var route: String
        var method: String
        var status: Int
    }

    private struct Histogram {
        var counts = [UInt64](repeating: 0, count: MetricsRegistry.latencyBuckets.count)
        var sum = 0.0
        var count: UInt64 = 0
    }

    private var requests: [RequestKey: UInt64] = [:]
    private var latency: [String: Histogram] = [:]
    private var gauges: [(name: String, help: String, read: () -> Double)] = []
    private var counters: [(name: String, help: String, read: () -> Double)] = []
    private var texts: [() -> String] = []
    private let buildLabels: [(String, String)]

    public init(version: String, swiftVersion: String) {
        buildLabels = [("version", version), ("swift", swiftVersion)]
    }

    /// Counts one HTTP request and its latency. `route` is the route pattern, never the raw path,
    /// so label cardinality stays bounded.
    public func observeRequest(route: String, method: String, status: Int, seconds: Double) {
        requests[RequestKey(route: route, method: method, status: status), default: 0] += 1
        var h = latency[route] ?? Histogram()
        for (i, b) in Self.latencyBuckets.enumerated() where seconds <= b { h.counts[i] += 1 }
        h.sum += seconds
        h.count += 1
        latency[route] = h
    }

    public func gauge(_ name: String, help: String, _ read: @escaping () -> Double) {
        gauges.append((name, help, read))
    }

    public func counter(_ name: String, help: String, _ read: @escaping () -> Double) {
        counters.append((name, help, read))
    }

    /// Families rendered by their owner (labelled series such as the media plane's), appended as they are.
    public func text(_ render: @escaping () -> String) {
        texts.append(render)
    }

    public func render() -> String {
        var out = ""
        out += "# HELP atrium_build_info Build information.\n# TYPE atrium_build_info gauge\n"
        out += "atrium_build_info\(labels(buildLabels)) 1\n"
        out += "# HELP atrium_http_requests_total HTTP requests by route, method and status.\n"
        out += "# TYPE atrium_http_requests_total counter\n"
        for (k, v) in requests.sorted(by: {
            ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status)
        }) {
            out +=
                "atrium_http_requests_total\(labels([("route", k.route), ("method", k.method), ("status", String(k.status))])) \(v)\n"
        }
        out += "# HELP atrium_http_request_duration_seconds HTTP request latency by route.\n"
        out += "# TYPE atrium_http_request_duration_seconds histogram\n"
        for (route, h) in latency.sorted(by: { $0.key < $1.key }) {
            for (i, b) in Self.latencyBuckets.enumerated() {
                out +=
                    "atrium_http_request_duration_seconds_bucket\(labels([("route", route), ("le", format(b))])) \(h.counts[i])\n"
            }
            out +=
                "atrium_http_request_duration_seconds_bucket\(labels([("route", route), ("le", "+Inf")])) \(h.count)\n"
            out += "atrium_http_request_duration_seconds_sum\(labels([("route", route)])) \(format(h.sum))\n"
            out += "atrium_http_request_duration_seconds_count\(labels([("route", route)])) \(h.count)\n"
        }
        for g in gauges {
            out += "# HELP \(g.name) \(g.help)\n# TYPE \(g.name) gauge\n\(g.name) \(format(g.read()))\n"
        }
        for c in counters {
            out += "# HELP \(c.name) \(c.help)\n# TYPE \(c.name) counter\n\(c.name) \(format(c.read()))\n"
        }
        for t in texts { out += t() }
        return out
    }

    private func labels(_ pairs: [(String, String)]) -> String {
        "{" + pairs.map { "\($0.0)=\"\(escape($0.1))\"" }.joined(separator: ",") + "}"
    }

    private func escape(_ v: String) -> String {
        v.replacingOccurrences("\\", "\\\\").replacingOccurrences("\"", "\\\"").replacingOccurrences("\n", "\\n")
    }

    private func format(_ d: Double) -> String {
        if d == d.rounded() && abs(d) < 1e15 { return String(Int64(d)) }
        return "\(d)"
    }
}

extension String {
    fileprivate func replacingOccurrences(_ target: Character, _ replacement: String) -> String {
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}
