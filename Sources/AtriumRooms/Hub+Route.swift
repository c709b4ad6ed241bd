import AtriumModel

/// Commands for rooms wherever they run: applied here when the room is live here, sent through the
/// `RoomRouter` to the node that runs it otherwise (the cluster), with that node's events or refusal.
extension Hub {
    public func route(_ c: RoomCommand, now: Int64) -> Result<[RoomEvent], HubError> {
        if rooms[c.room] != nil { return applyHere(c, now: now) }
        guard let node = router.owner(of: c.room) else { return .failure(.roomNotFound(c.room.rawValue)) }
        return router.send(c, to: node)
    }

    /// A command for a room live here only (what a node answers for another: never sent on again).
    public func applyHere(_ c: RoomCommand, now: Int64) -> Result<[RoomEvent], HubError> {
        do throws(HubError) {
            return .success(try apply(c.command, in: c.room, by: c.actor, now: now))
        } catch {
            return .failure(error)
        }
    }
}
