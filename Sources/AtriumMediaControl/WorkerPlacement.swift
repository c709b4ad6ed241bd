/// Where a new room's media goes among several media workers (issue 14): a pure decision over each
/// worker's load, so the choice is tested as a table. The unit placed is the room (its `Router`):
/// every transport, producer and consumer of a room lives on the worker that owns it, so a consumer
/// is always fed on the thread that receives its producer's packets.
public enum WorkerPlacement {
    /// What one worker carries, as the set of workers counts it when placing (what it was handed,
    /// not what it measured: placement must not depend on timing).
    public struct Load: Sendable, Equatable {
        /// Transports open on the worker (publishers and viewers: the forwarding work grows with them).
        public var transports: Int
        /// Rooms placed on the worker.
        public var rooms: Int

        public init(transports: Int = 0, rooms: Int = 0) {
            self.transports = transports
            self.rooms = rooms
        }
    }

    /// The index of the least-loaded worker: fewest transports, then fewest rooms, then the lowest
    /// index (deterministic, so a fresh server fills worker 0 first only when the loads tie). nil when
    /// there is no worker.
    public static func leastLoaded(_ loads: [Load]) -> Int? {
        var best: Int?
        for (i, l) in loads.enumerated() {
            guard let b = best else {
                best = i
                continue
            }
            let current = loads[b]
            if (l.transports, l.rooms) < (current.transports, current.rooms) { best = i }
        }
        return best
    }
}
