/// The ports of several media workers, decided from the settings as a pure value: worker i
/// binds UDP `--udp-ports`' i-th port, or `--udp-port` + i (all 0, any free port, when that is 0),
/// and ICE-TCP `--media-tcp-port` + i likewise (-1: none). The firewall opens exactly these.
public struct MediaPortPlan: Sendable, Equatable {
    /// The most media workers a server runs (a port and a thread each).
    public static let maxWorkers = 256
    /// The most workers the default (`--media-workers 0`: the usable cores) starts: each worker is a
    /// UDP port to open, about 9 MiB of socket buffers when busy, and a pipe of about 1.5 MiB for each
    /// pair of workers a spread room joins; 32 cores forward far more than one node's rooms usually
    /// send. An explicit `--media-workers` up to `maxWorkers` is taken as given.
    public static let defaultMaxWorkers = 32

    /// One worker's ports: UDP (0: any free port) and ICE-TCP (-1: none, 0: any free port).
    public struct Ports: Sendable, Equatable {
        public var udp: Int
        public var tcp: Int

        public init(udp: Int, tcp: Int) {
            self.udp = udp
            self.tcp = tcp
        }
    }

    public var workers: [Ports]

    public init(workers: [Ports]) { self.workers = workers }

    /// Why the settings give no plan, for the startup error.
    public enum Problem: Error, Equatable, CustomStringConvertible {
        /// The range has fewer ports than workers.
        case rangeTooSmall(range: ClosedRange<Int>, workers: Int)
        /// The first port plus the workers passes 65535.
        case pastLastPort(flag: String, first: Int, workers: Int)
        case noWorkers

        public var description: String {
            switch self {
            case .rangeTooSmall(let r, let n):
                "--udp-ports \(r.lowerBound)-\(r.upperBound) has \(r.count) ports for \(n) media workers "
                    + "(widen it or lower --media-workers)"
            case .pastLastPort(let flag, let first, let n):
                "\(flag) \(first) with \(n) media workers needs ports up to \(first + n - 1), past 65535"
            case .noWorkers: "no media workers"
            }
        }
    }

    /// The plan for `workers` workers; `udpPort` and `tcpPort` as configured (`udpPort` >= 0: the
    /// media plane is on), `range` from `--udp-ports`.
    public static func make(
        workers: Int, udpPort: Int, range: ClosedRange<Int>?, tcpPort: Int
    ) -> Result<MediaPortPlan, Problem> {
        guard workers > 0 else { return .failure(.noWorkers) }
        let udp: [Int]
        if let range {
            guard range.count >= workers else { return .failure(.rangeTooSmall(range: range, workers: workers)) }
            udp = (0..<workers).map { range.lowerBound + $0 }
        } else if udpPort == 0 {
            udp = Array(repeating: 0, count: workers)
        } else {
            guard udpPort <= 65536 - workers else {
                return .failure(.pastLastPort(flag: "--udp-port", first: udpPort, workers: workers))
            }
            udp = (0..<workers).map { udpPort + $0 }
        }
        let tcp: [Int]
        if tcpPort <= 0 {
            tcp = Array(repeating: tcpPort, count: workers)
        } else {
            guard tcpPort <= 65536 - workers else {
                return .failure(.pastLastPort(flag: "--media-tcp-port", first: tcpPort, workers: workers))
            }
            tcp = (0..<workers).map { tcpPort + $0 }
        }
        return .success(MediaPortPlan(workers: zip(udp, tcp).map { Ports(udp: $0, tcp: $1) }))
    }

    /// `A-B` with 1 <= A <= B <= 65535; nil for anything else.
    public static func parseRange(_ text: String) -> ClosedRange<Int>? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let a = Int(String(parts[0]).trimmingSpaces),
            let b = Int(String(parts[1]).trimmingSpaces), a >= 1, a <= b, b <= 65535
        else { return nil }
        return a...b
    }
}
