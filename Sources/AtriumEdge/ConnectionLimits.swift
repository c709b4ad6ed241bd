/// Caps on open connections, per source address and in total, decided as values (tested in
/// `ConnectionLimitsTests`). The edge asks `admit` when lws has accepted a connection and `release`
/// when lws destroys it; a refused connection is answered 503 and closed at once, so a client over
/// the cap learns it in one round trip instead of waiting in the listen backlog.
public struct ConnectionLimits: Sendable, Equatable {
    /// Why a connection was refused, or that it was admitted.
    public enum Admission: Equatable, Sendable {
        case admitted
        case tooManyFromAddress
        case tooManyInTotal
    }

    public let maxTotal: Int
    public let maxPerAddress: Int
    public private(set) var total = 0
    public private(set) var byAddress: [String: Int] = [:]

    public init(maxTotal: Int, maxPerAddress: Int) {
        self.maxTotal = max(1, maxTotal)
        self.maxPerAddress = max(1, maxPerAddress)
    }

    /// Counts a connection from `address` if both caps allow it.
    public mutating func admit(_ address: String) -> Admission {
        guard total < maxTotal else { return .tooManyInTotal }
        let n = byAddress[address, default: 0]
        guard n < maxPerAddress else { return .tooManyFromAddress }
        byAddress[address] = n + 1
        total += 1
        return .admitted
    }

    /// Forgets one admitted connection from `address`.
    public mutating func release(_ address: String) {
        guard let n = byAddress[address] else { return }
        if n <= 1 { byAddress[address] = nil } else { byAddress[address] = n - 1 }
        total = max(0, total - 1)
    }

    /// Descriptors kept free for everything that is not a client connection: the SQLite database and
    /// its journal, the media plane's UDP socket, epoll and eventfd, lws's own pipe and listening
    /// socket, the log streams, files served from the web directory, and the 503 answers to refused
    /// connections (which need a descriptor for the moment they are open).
    public static let descriptorReserve = 64

    /// The total cap actually used: the configured one, but never more than the descriptor limit
    /// (RLIMIT_NOFILE) leaves after the reserve, so that `accept` never meets EMFILE (lws logs
    /// `accept: errno 24` on every poll round and spins while it lasts). At least 8.
    public static func effectiveTotal(configured: Int, descriptorLimit: Int, reserve: Int = descriptorReserve) -> Int {
        let room = descriptorLimit > reserve ? descriptorLimit - reserve : 0
        return max(8, min(configured, room))
    }
}
