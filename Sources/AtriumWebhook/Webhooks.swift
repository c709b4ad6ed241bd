public import AtriumJSON
public import AtriumLog
public import AtriumModel
import AtriumRoomCoding
public import AtriumRooms
public import AtriumStore

/// The webhook side of the hub, on the service thread: turns every room event into a signed JSON
/// delivery for each configured endpoint, appends them to the durable outbox in the order they
/// happen, and wakes the endpoints' delivery threads. Nothing here waits on the network: a slow or
/// dead endpoint only grows its part of the outbox.
public final class Webhooks: HubObserver {
    public let stats = WebhookStats()
    let deliveries: [EndpointDelivery]
    let outbox: any WebhookOutbox
    let options: WebhookOptions
    let logger: Logger
    let makeID: () -> String

    /// `outbox` is the service thread's; `makeOutbox` opens one for each delivery thread (the same
    /// object for the in-memory outbox).
    public init(
        endpoints: [WebhookEndpoint], outbox: any WebhookOutbox,
        makeOutbox: () throws(StoreError) -> any WebhookOutbox, options: WebhookOptions, logger: Logger,
        makeID: @escaping () -> String
    ) throws(StoreError) {
        self.outbox = outbox
        self.options = options
        self.logger = logger
        self.makeID = makeID
        var d: [EndpointDelivery] = []
        for e in endpoints {
            d.append(
                EndpointDelivery(endpoint: e, outbox: try makeOutbox(), options: options, stats: stats, logger: logger))
        }
        deliveries = d
    }

    /// Starts the delivery threads; what an earlier run left in the outbox goes first.
    public func start() -> Bool {
        deliveries.allSatisfy { $0.start() }
    }

    /// Stops the delivery threads; undelivered events stay in the outbox for the next start.
    public func stop() {
        for d in deliveries { d.stop() }
    }

    /// Events waiting in the outbox, every endpoint together.
    public var queueLength: Int { (try? outbox.count()) ?? 0 }

    /// Queues one event for every endpoint.
    public func emit(type: String, room: RoomID, roomName: String?, data: JSONObject, now: Int64) {
        emit([(type, data)], room: room, roomName: roomName, now: now)
    }

    func emit(_ events: [(type: String, data: JSONObject)], room: RoomID, roomName: String?, now: Int64) {
        guard !deliveries.isEmpty, !events.isEmpty else { return }
        var entries: [OutboxEntry] = []
        let at = options.now()
        for (type, data) in events {
            let event = WebhookEvent(
                id: makeID(), type: type, createdAt: at, room: room, roomName: roomName, data: data)
            let body = event.body
            for d in deliveries where type != WebhookEvent.chatMessage || d.endpoint.chat {
                entries.append(OutboxEntry(endpoint: d.name, room: room.rawValue, eventID: event.id, body: body))
            }
        }
        do throws(StoreError) {
            try outbox.enqueue(entries)
        } catch {
            for _ in entries { stats.add(.failed) }
            logger.error("webhook events not queued", ("error", "\(error)"), ("count", String(entries.count)))
            return
        }
        for d in deliveries { d.wake.signal() }
    }

    // MARK: - HubObserver

    public func roomOpened(_ room: Room, now: Int64) {
        emit(type: "room_started", room: room.id, roomName: room.name, data: ["room": HubCoding.room(room)], now: now)
    }

    public func roomEvents(_ events: [RoomEvent], room: Room, now: Int64) {
        var out: [(type: String, data: JSONObject)] = []
        for e in events {
            if case .roomEnded(let by) = e {
                out.append(("room_ended", ["reason": "ended", "by": HubCoding.actor(by)]))
            } else if let w = WebhookEvent.from(e) {
                out.append(w)
            }
        }
        emit(out, room: room.id, roomName: room.name, now: now)
    }

    public func roomClosed(_ room: Room, reason: RoomCloseReason, now: Int64) {
        // An ended room's `room_ended` went with its event, with who ended it.
        guard reason == .emptyTimeout else { return }
        emit(
            type: "room_ended", room: room.id, roomName: room.name, data: ["reason": "empty_timeout", "by": .null],
            now: now)
    }
}
