package import AtriumJSON
package import AtriumMedia
package import AtriumModel
package import AtriumRooms

/// What the coordinator tells one participant (docs/protocol.md section 14): the endpoint sends each
/// on the participant's socket, after the result of the request in hand if there is one.
package enum MediaMessage: Equatable, Sendable {
    /// A track of a subscriber offer: which mid carries whose track.
    package struct OfferedTrack: Equatable, Sendable {
        package var mid: String
        package var track: TrackID
        package var publisher: ParticipantID
        package var source: TrackSource
    }

    /// The next offer of the subscriber connection (`reset`: on a new connection).
    case subscriberOffer(revision: Int, sdp: String, tracks: [OfferedTrack], reset: Bool)
    /// The rids of a simulcast track some viewer wants, bottom first.
    case layersWanted(track: TrackID, rids: [String])
    /// A transport of the participant's changed state (`publisher` or `subscriber`).
    case mediaState(target: String, state: MediaEvent.TransportState)
    /// A track this viewer is subscribed to is no longer forwarded to it (reason `bandwidth`: its
    /// link has no room for it), or is again.
    case trackPaused(track: TrackID, reason: String)
    case trackResumed(track: TrackID, reason: String)

    package var json: JSONObject {
        switch self {
        case .subscriberOffer(let revision, let sdp, let tracks, let reset):
            let list: [JSONValue] = tracks.map { t in
                .object([
                    "mid": .string(t.mid), "trackId": .string(t.track.rawValue),
                    "participantId": .string(t.publisher.rawValue), "source": .string(t.source.rawValue),
                ])
            }
            var message: JSONObject = [
                "type": "subscriber_offer", "revision": .int(Int64(revision)), "sdp": .string(sdp),
                "tracks": .array(list),
            ]
            if reset { message["reset"] = .bool(true) }
            return message
        case .layersWanted(let track, let rids):
            return [
                "type": "layers_wanted", "trackId": .string(track.rawValue), "rids": .array(rids.map { .string($0) }),
            ]
        case .mediaState(let target, let state):
            return ["type": "media_state", "target": .string(target), "state": .string(state.rawValue)]
        case .trackPaused(let track, let reason):
            return ["type": "track_paused", "trackId": .string(track.rawValue), "reason": .string(reason)]
        case .trackResumed(let track, let reason):
            return ["type": "track_resumed", "trackId": .string(track.rawValue), "reason": .string(reason)]
        }
    }
}

/// `active_speakers` for a room: the loudest microphones, loudest first.
package struct ActiveSpeakers: Equatable, Sendable {
    package struct Speaker: Equatable, Sendable {
        package var participant: ParticipantID
        /// Linear amplitude, 1 at 0 dBov, rounded to three places.
        package var level: Double
    }

    package var room: RoomID
    package var speakers: [Speaker]

    package var json: JSONObject {
        let list: [JSONValue] = speakers.map { s in
            .object(["participantId": .string(s.participant.rawValue), "level": .double(s.level)])
        }
        return ["type": "active_speakers", "speakers": .array(list)]
    }
}
