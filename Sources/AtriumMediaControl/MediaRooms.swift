package import AtriumModel
package import AtriumRooms

/// What media control reads of the rooms: the state it reconciles against. It never changes a room:
/// the changes it finds needed (a track to publish or end for an offer, a share whose capture ended)
/// go back to the edge, which makes them through the hub; the hub's `roomChanged` then brings media
/// control in line. The `Hub` is the real one.
package protocol MediaRooms: AnyObject {
    func state(_ room: RoomID) -> RoomState?
}

extension Hub: MediaRooms {}

/// A change to a room media control found needed, made by the edge through the hub.
package enum RoomChange: Equatable, Sendable {
    /// A share whose capture stopped without a word stops with `capture_ended`, on its sharer's behalf.
    case stopShare(ShareID, by: ParticipantID, in: RoomID, reason: ShareStopReason)
    /// A track whose media the room lost (the node that received it left the cluster) is unpublished
    /// on its publisher's behalf with `connection_lost` (a share stops): its viewers see it end, and
    /// the publisher publishes it again.
    case unpublish(TrackID, by: ParticipantID, in: RoomID)
}
