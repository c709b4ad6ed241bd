import AtriumMediaControl
import AtriumModel
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
