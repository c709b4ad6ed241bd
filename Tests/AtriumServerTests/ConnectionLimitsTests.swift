import AtriumJSON
import Testing

@testable import AtriumConfig
@testable import AtriumEdge

/// The edge's connection caps as values (a flood of connections must meet a cap well before
/// the descriptor limit, and one address must not take every slot).
@Suite struct ConnectionLimitsTests {
    /// Rows: (per address, total, arrivals) -> admissions in order. "a" and "b" are source addresses.
    typealias AdmissionCase = (perAddress: Int, total: Int, arrivals: [String], expected: [ConnectionLimits.Admission])

    static let admissionCases: [AdmissionCase] = [
        (2, 10, ["a", "a", "a"], [.admitted, .admitted, .tooManyFromAddress]),
        (2, 3, ["a", "b", "a", "b"], [.admitted, .admitted, .admitted, .tooManyInTotal]),
        (1, 10, ["a", "b", "a", "b"], [.admitted, .admitted, .tooManyFromAddress, .tooManyFromAddress]),
        (5, 2, ["a", "a", "a"], [.admitted, .admitted, .tooManyInTotal]),
    ]

    @Test(arguments: admissionCases)
    func admissions(_ c: AdmissionCase) {
        var limits = ConnectionLimits(maxTotal: c.total, maxPerAddress: c.perAddress)
        #expect(c.arrivals.map { limits.admit($0) } == c.expected)
        #expect(limits.total == c.expected.filter { $0 == .admitted }.count)
    }

    @Test func releaseFreesTheSlotOfItsAddress() {
        var limits = ConnectionLimits(maxTotal: 3, maxPerAddress: 2)
        #expect(limits.admit("a") == .admitted)
        #expect(limits.admit("a") == .admitted)
        #expect(limits.admit("a") == .tooManyFromAddress)
        limits.release("a")
        #expect(limits.admit("a") == .admitted)
        limits.release("a")
        limits.release("a")
        #expect(limits.total == 0 && limits.byAddress.isEmpty)
        // Releasing an address never admitted changes nothing (a refused connection is destroyed too).
        limits.release("zzz")
        limits.release("zzz")
        #expect(limits.total == 0)
        #expect(limits.byAddress.isEmpty)
    }

    /// (configured, RLIMIT_NOFILE) -> the cap in effect: the configured one, but never within the reserve
    /// of the descriptor limit, and at least 8.
    static let effectiveCases: [(configured: Int, descriptors: Int, expected: Int)] = [
        (4096, 1_048_576, 4096),
        (4096, 1024, 1024 - ConnectionLimits.descriptorReserve),
        (100, 1024, 100),
        (4096, 128, 128 - ConnectionLimits.descriptorReserve),
        (4096, 64, 8),
        (4096, 0, 8),
        (4096, -1, 8),
        (Int.max, Int.max, Int.max - ConnectionLimits.descriptorReserve),
    ]

    @Test(arguments: effectiveCases)
    func effectiveTotal(_ c: (configured: Int, descriptors: Int, expected: Int)) {
        #expect(ConnectionLimits.effectiveTotal(configured: c.configured, descriptorLimit: c.descriptors) == c.expected)
    }

    @Test func settingsHaveThreeSpellingsAndDefaults() throws {
        let (d, i0) = ConfigLoader.resolve(file: nil, environment: [:], flags: [:])
        #expect(i0.isEmpty)
        #expect(d.requestTimeout == 10)
        #expect(d.maxConnections == 4096)
        #expect(d.maxConnectionsPerAddress == 1024)
        let file = try JSONParser.parse(
            #"{"limits": {"requestTimeoutSeconds": 3, "maxConnections": 500, "maxConnectionsPerAddress": 50}}"#)
        let (f, i1) = ConfigLoader.resolve(file: file, environment: [:], flags: [:])
        #expect(i1.isEmpty)
        #expect((f.requestTimeout, f.maxConnections, f.maxConnectionsPerAddress) == (3, 500, 50))
        let (e, i2) = ConfigLoader.resolve(
            file: file,
            environment: ["ATRIUM_REQUEST_TIMEOUT": "4", "ATRIUM_MAX_CONNECTIONS": "600"],
            flags: ["--max-connections-per-address": "7"])
        #expect(i2.isEmpty)
        #expect((e.requestTimeout, e.maxConnections, e.maxConnectionsPerAddress) == (4, 600, 7))
    }

    @Test(arguments: [
        "--request-timeout=0", "--request-timeout=301", "--request-timeout=9223372036854775808",
        "--max-connections=7", "--max-connections=-1", "--max-connections=1e300",
        "--max-connections-per-address=0", "--max-connections-per-address=9223372036854775807",
    ])
    func badLimitValues(_ arg: String) {
        let parts = arg.split(separator: "=", maxSplits: 1).map(String.init)
        let (_, issues) = ConfigLoader.resolve(file: nil, environment: [:], flags: [parts[0]: parts[1]])
        #expect(!issues.isEmpty, "\(arg)")
    }
}

/// The WebSocket outbound queue: a burst to a reading client fits, a stalled or overflowing one does not.
@Suite struct OutboundQueueLimitsTests {
    static let limits = EdgeWebSocket.QueueLimits(messages: 4, bytes: 1000, stallSeconds: 5)

    typealias Row = (pending: Int, queuedBytes: Int, incoming: Int, sinceProgress: Double, admitted: Bool)

    static let rows: [Row] = [
        (0, 0, 5000, 100, true),  // an empty queue takes one message of any size, however long idle
        (1, 100, 100, 0.1, true),  // a burst that keeps moving
        (3, 800, 200, 4.9, true),  // at the byte cap exactly, within the stall
        (3, 800, 201, 0, false),  // one byte over the cap
        (4, 100, 1, 0, false),  // the message cap
        (1, 1, 1, 5.1, false),  // stalled: nothing written for more than 5 s
        (1, 1, 1, Double.infinity, false),
    ]

    @Test(arguments: rows)
    func admission(_ r: Row) {
        #expect(
            Self.limits.admits(
                pending: r.pending, queuedBytes: r.queuedBytes, incoming: r.incoming, sinceProgress: r.sinceProgress)
                == r.admitted, "\(r)")
    }
}
