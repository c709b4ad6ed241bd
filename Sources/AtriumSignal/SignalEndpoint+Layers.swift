import AtriumMediaControl
import AtriumModel
import AtriumProtocol
import AtriumRooms

/// `set_viewport`: the size of the tile a viewer shows a subscribed track in, which picks the
/// simulcast layer of a camera (docs/protocol.md, `set_viewport`).
extension SignalEndpoint {
    func setViewport(_ trackID: TrackID, width: Int, height: Int, me: ParticipantID, room: RoomID) throws(SignalError) {
        guard let state = hub.state(room) else { throw .notJoined }
        guard state.tracks[trackID] != nil else { throw .trackNotFound }
        guard state.participants[me]?.subscriptions[trackID] != nil else {
            throw .invalidField("trackId", "not subscribed to this track")
        }
        if let media {
            media.setViewport(me, trackID, width: width, height: height, in: state)
            flushMedia()
        }
    }
}

extension Hub {
    /// Publishes a new track of a participant's (a `publish` request, or a section of its offer): the
    /// track and the hub's events (delivered as well).
    func publish(_ request: TrackRequest, by participant: ParticipantID, in room: RoomID, now t: Int64)
        throws(HubError) -> (Track, [RoomEvent])
    {
        let track = Track(
            id: ids.track(), owner: participant, source: request.source, name: request.name, width: request.width,
            height: request.height, layers: request.layers, muted: request.muted)
        let events = try apply(.publish(track, share: ids.share()), in: room, by: .participant(participant), now: t)
        return (track, events)
    }
}
