/// Where a new room's media goes among several media workers: a pure decision over each
/// worker's load, so the choice is tested as a table. The unit placed is the room (its `Router`): its
/// publishers' transports live on its home worker, and so do its viewers' until the room passes
/// `spread` transports there; later viewers go to another worker (`subscriber`), which is fed the
/// publishers' packets through a pipe (`PipeLink`).
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

    /// The worker for a new viewer's transport of a room placed on `room` (its workers, home first,
    /// each with the room's transports there), given every worker's load and the room's spread
    /// threshold (`media.room_spread`: transports of one room on one worker; 0 or less: never
    /// spread). The first of the room's workers below the threshold takes it; when all are at it, the
    /// least-loaded worker the room is not on yet; when the room is on every worker, the one of them
    /// with the fewest of its transports (the earliest on a tie). nil when there is no worker.
    public static func subscriber(room: [(worker: Int, transports: Int)], loads: [Load], spread: Int) -> Int? {
        guard let home = room.first else { return leastLoaded(loads) }
        guard spread > 0 else { return home.worker }
        if let open = room.first(where: { $0.transports < spread }) { return open.worker }
        let used = Set(room.map(\.worker))
        var best: Int?
        for (i, l) in loads.enumerated() where !used.contains(i) {
            if let b = best, (l.transports, l.rooms) >= (loads[b].transports, loads[b].rooms) { continue }
            best = i
        }
        if let best { return best }
        var fewest = home
        for r in room.dropFirst() where r.transports < fewest.transports { fewest = r }
        return fewest.worker
    }
}
