import AtriumJSON
package import AtriumModel
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

/// A track as a `publish` request or a `publish_offer` entry describes it (same fields,
/// docs/protocol.md section 14), checked once.
package struct TrackRequest: Equatable, Sendable {
    package var source: TrackSource
    package var name: String
    package var width: Int
    package var height: Int
    package var layers: [SimulcastLayer]
    package var muted: Bool

    package init(_ f: Fields) throws(SignalError) {
        source = try f.enumValue("source")
        if let kind = try f.optionalString("kind"), kind != TrackKind(source: source).rawValue {
            throw .invalidField("kind", "\(source.rawValue) is \(TrackKind(source: source).rawValue)")
        }
        layers = []
        if let raw = f.object["layers"] {
            guard let arr = raw.arrayValue, arr.count <= 4 else {
                throw .invalidField("layers", "expected up to 4 layers")
            }
            for item in arr {
                guard let o = item.objectValue else { throw .invalidField("layers", "expected objects") }
                let lf = Fields(object: o)
                layers.append(
                    SimulcastLayer(
                        rid: try lf.string("rid", max: 16), width: try lf.int("width", 0...16384),
                        height: try lf.int("height", 0...16384)))
            }
        }
        name = try f.optionalString("name", max: 256) ?? ""
        width = try f.optionalInt("width", 0...16384) ?? 0
        height = try f.optionalInt("height", 0...16384) ?? 0
        muted = try f.optionalBool("muted") ?? false
    }
}
