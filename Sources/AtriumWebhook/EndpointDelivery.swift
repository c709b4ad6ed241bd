import AtriumLog
import AtriumModel
import AtriumStore
import AtriumSync
import Synchronization

/// One endpoint's delivery thread: takes the due heads of its rooms from the outbox (`DeliveryPlan`),
/// POSTs each signed, removes it on a 2xx and reschedules it with backoff otherwise. It only ever
/// blocks itself: the service thread appends to the outbox and signals, and the media thread never
/// knows it exists.
final class EndpointDelivery: @unchecked Sendable {
    // @unchecked: after `start`, everything but `wake` and `stopping` belongs to the thread.
    let endpoint: WebhookEndpoint
    let outbox: any WebhookOutbox
    let options: WebhookOptions
    let stats: WebhookStats
    let logger: Logger
    let wake = WakeSignal()
    private let stopping = StopFlag()
    private var thread: JoinableThread?

    init(
        endpoint: WebhookEndpoint, outbox: any WebhookOutbox, options: WebhookOptions, stats: WebhookStats,
        logger: Logger
    ) {
        self.endpoint = endpoint
        self.outbox = outbox
        self.options = options
        self.stats = stats
        self.logger = logger.with("webhook", endpoint.url.description)
    }

    var name: String { endpoint.url.description }

    func start() -> Bool {
        guard let started = try? JoinableThread.start({ self.run() }) else { return false }
        thread = started
        return true
    }

    /// Stops the thread: an attempt in flight is cut within a fraction of a second (it stays queued).
    func stop() {
        stopping.set()
        wake.signal()
        thread?.join()
        thread = nil
    }

    private func run() {
        let client = HTTPClient()
        client.isCancelled = { [stopping] in stopping.isSet }
        while !stopping.isSet {
            let pending: [OutboxEntry]
            do throws(StoreError) {
                pending = try outbox.pending(endpoint: name, limit: 1000)
            } catch {
                logger.warn("webhook outbox read failed", ("error", "\(error)"))
                wake.wait(seconds: 1)
                continue
            }
            let decision = DeliveryPlan.decide(pending, now: options.now())
            for entry in decision.due where !stopping.isSet {
                // An outbox that cannot be written would send the same event again at once: wait.
                if !attempt(entry, client: client) { wake.wait(seconds: 1) }
            }
            if decision.due.isEmpty {
                let wait = decision.nextWake.map { Double(max(0, $0 - options.now())) / 1000 } ?? 60
                wake.wait(seconds: min(wait, outbox.pollSeconds))
            }
        }
    }

    /// One attempt; false when the outbox could not record its outcome.
    private func attempt(_ entry: OutboxEntry, client: HTTPClient) -> Bool {
        let timestamp = options.now() / 1000
        let headers = [
            ("Content-Type", "application/json"), ("User-Agent", "Atrium-Webhook/1"),
            ("X-Atrium-Event-Id", entry.eventID), ("X-Atrium-Delivery-Attempt", String(entry.attempts + 1)),
            (WebhookSignature.timestampHeader, String(timestamp)),
            (
                WebhookSignature.header,
                WebhookSignature.sign(body: entry.body, timestamp: timestamp, secret: endpoint.secret)
            ),
        ]
        let outcome: String
        do throws(HTTPClientError) {
            let status = try client.post(
                url: endpoint.url, headers: headers, body: Array(entry.body.utf8), timeout: options.timeout)
            if (200..<300).contains(status) {
                stats.add(.delivered)
                do throws(StoreError) { try outbox.remove(seq: entry.seq) } catch {
                    logger.warn("webhook outbox write failed", ("error", "\(error)"))
                    return false
                }
                return true
            }
            outcome = "status \(status)"
        } catch {
            if stopping.isSet { return true }
            outcome = error.description
        }
        let attempts = entry.attempts + 1
        do throws(StoreError) {
            if attempts >= options.backoff.maxAttempts {
                try outbox.remove(seq: entry.seq)
                stats.add(.failed)
                logger.warn(
                    "webhook abandoned", ("event", entry.eventID), ("attempts", String(attempts)), ("last", outcome))
            } else {
                let next = options.now() + options.backoff.delay(afterFailures: attempts)
                try outbox.reschedule(seq: entry.seq, attempts: attempts, nextAttemptAt: next)
                stats.add(.retried)
                logger.debug("webhook retry", ("event", entry.eventID), ("attempt", String(attempts)), ("why", outcome))
            }
        } catch {
            logger.warn("webhook outbox write failed", ("error", "\(error)"))
            return false
        }
        return true
    }
}

/// A flag the service thread sets and a delivery thread polls.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)

    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
