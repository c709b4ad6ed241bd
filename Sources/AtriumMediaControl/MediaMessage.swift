package import AtriumJSON
package import AtriumMedia
package import AtriumModel
package import AtriumProtocol
import AtriumRooms

/// What the coordinator tells one participant (docs/protocol.md section 14): the endpoint sends each
/// on the participant's socket, after the result of the request in hand if there is one.
package enum MediaMessage: Equatable, Sendable {
    package typealias OfferedTrack = SubscriberOffer.Track

    /// The next offer of the subscriber connection (`reset`: on a new connection).
    case subscriberOffer(revision: Int, sdp: String, tracks: [OfferedTrack], reset: Bool)
    /// The rids of a simulcast track some viewer wants, bottom first.
    case layersWanted(track: TrackID, rids: [String])
    /// A transport of the participant's changed state (`publisher` or `subscriber`).
    case mediaState(target: MediaTarget, state: MediaEvent.TransportState)
    /// A track this viewer is subscribed to is no longer forwarded to it (reason `bandwidth`: its
    /// link has no room for it), or is again.
    case trackPaused(track: TrackID, reason: String)
    case trackResumed(track: TrackID, reason: String)

    /// The message as the protocol has it.
    package var event: ServerEvent {
        switch self {
        case .subscriberOffer(let revision, let sdp, let tracks, let reset):
            .subscriberOffer(SubscriberOffer(revision: revision, sdp: sdp, tracks: tracks, reset: reset))
        case .layersWanted(let track, let rids): .layersWanted(track, rids: rids)
        case .mediaState(let target, let state):
            .mediaState(target: target, state: MediaTransportState(rawValue: state.rawValue) ?? .closed)
        case .trackPaused(let track, let reason): .trackPaused(track, reason: reason)
        case .trackResumed(let track, let reason): .trackResumed(track, reason: reason)
        }
    }

    package var json: JSONObject { event.json }
}

/// `active_speakers` for a room: the loudest microphones, loudest first.
package struct ActiveSpeakers: Equatable, Sendable {
    package typealias Speaker = AtriumProtocol.Speaker

    package var room: RoomID
    package var speakers: [Speaker]

    package var json: JSONObject { ServerEvent.activeSpeakers(speakers).json }
}
