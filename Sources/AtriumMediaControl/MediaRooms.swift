import AtriumJSON
package import AtriumModel
public import AtriumProtocol
package import AtriumRooms

/// What the coordinator asks of the rooms: the state it reconciles against, and the few changes a
/// publisher's offer or a capture that ended makes. The `Hub` is the real one. Each change goes
/// through the hub, so its events reach the room and its `roomChanged` reaches the coordinator.
package protocol MediaRooms: AnyObject {
    func state(_ room: RoomID) -> RoomState?
    /// Publishes a new track of the participant's; the hub's events are returned as well as delivered.
    func publish(_ request: TrackRequest, by participant: ParticipantID, in room: RoomID, now: Int64)
        throws(HubError) -> (Track, [RoomEvent])
    /// Ends a track whose transceiver or connection went away (`user_stopped`); a refusal is ignored.
    func unpublish(_ track: TrackID, by participant: ParticipantID, in room: RoomID, now: Int64)
    /// Stops a share on its sharer's behalf (a capture that ended); a refusal is ignored.
    func stopShare(
        _ share: ShareID, by participant: ParticipantID, in room: RoomID, reason: ShareStopReason, now: Int64)
}

extension Hub: MediaRooms {
    package func publish(_ request: TrackRequest, by participant: ParticipantID, in room: RoomID, now t: Int64)
        throws(HubError) -> (Track, [RoomEvent])
    {
        let track = Track(
            id: ids.track(), owner: participant, source: request.source, name: request.name, width: request.width,
            height: request.height, layers: request.layers, muted: request.muted)
        let shareID = ids.share()
        let events = try apply(.publish(track, share: shareID), in: room, by: .participant(participant), now: t)
        return (track, events)
    }

    package func unpublish(_ track: TrackID, by participant: ParticipantID, in room: RoomID, now t: Int64) {
        _ = try? apply(.unpublish(track, reason: .userStopped), in: room, by: .participant(participant), now: t)
    }

    package func stopShare(
        _ share: ShareID, by participant: ParticipantID, in room: RoomID, reason: ShareStopReason, now t: Int64
    ) {
        _ = try? apply(.stopShare(share, reason: reason), in: room, by: .participant(participant), now: t)
    }
}
