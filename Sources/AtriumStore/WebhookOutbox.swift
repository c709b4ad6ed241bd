public import AtriumModel

/// One event waiting to be delivered to one webhook endpoint.
public struct OutboxEntry: Equatable, Sendable {
    /// Its place in the outbox: deliveries to an endpoint follow it, room by room.
    public var seq: Int64
    /// The endpoint's URL, which names it.
    public var endpoint: String
    public var room: String
    public var eventID: String
    /// The JSON body, exactly as it is signed and sent.
    public var body: String
    /// Failed attempts so far.
    public var attempts: Int
    /// Unix milliseconds before which it is not tried again.
    public var nextAttemptAt: Int64

    public init(
        seq: Int64 = 0, endpoint: String, room: String, eventID: String, body: String, attempts: Int = 0,
        nextAttemptAt: Int64 = 0
    ) {
        self.seq = seq
        self.endpoint = endpoint
        self.room = room
        self.eventID = eventID
        self.body = body
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
    }
}

/// The durable queue of webhook deliveries (the transactional outbox pattern): the service thread
/// appends each event for every endpoint before anything is sent, and each endpoint's delivery thread
/// removes an entry only once the endpoint acknowledged it, so a restart loses none. One instance per
/// thread (`SQLiteWebhookOutbox` opens a connection of its own); `MemoryWebhookOutbox` is shared.
public protocol WebhookOutbox: AnyObject, Sendable {
    /// Appends entries in one transaction, in order; their `seq` is assigned.
    func enqueue(_ entries: [OutboxEntry]) throws(StoreError)
    /// The oldest entries of an endpoint, in `seq` order.
    func pending(endpoint: String, limit: Int) throws(StoreError) -> [OutboxEntry]
    /// Removes a delivered (or abandoned) entry.
    func remove(seq: Int64) throws(StoreError)
    /// Records a failed attempt and when to try again.
    func reschedule(seq: Int64, attempts: Int, nextAttemptAt: Int64) throws(StoreError)
    /// Entries waiting, for every endpoint.
    func count() throws(StoreError) -> Int
    /// The longest a delivery thread with nothing due waits before it reads the outbox again (an
    /// outbox other processes append to cannot wake it).
    var pollSeconds: Double { get }
}

extension WebhookOutbox {
    /// Only this process appends, and it wakes the delivery threads: read again at least every minute.
    public var pollSeconds: Double { 60 }
}
