package import AtriumJSEP
package import AtriumJSON
package import AtriumModel
package import AtriumRooms

/// A `publish_offer` request, checked (docs/protocol.md section 14): the offer, and by mid the entries
/// of `tracks` that bind its transceivers. A malformed request fails as a whole; what is wrong with
/// one entry's new track (its name, its layers) rejects only that section, later.
package struct PublishRequest {
    package enum Entry {
        /// Binds a track the publisher already has (nil: `trackId` is not a string).
        case existing(TrackID?)
        /// Publishes a new track of this source, described by the rest of the entry.
        case new(TrackSource, Result<TrackRequest, SignalError>)
    }

    package var offer: PublishOffer
    package var entries: [String: Entry]

    package init(_ f: Fields) throws(SignalError) {
        let text = try f.string("sdp", max: 65536)
        entries = [:]
        if let raw = f.object["tracks"] {
            guard let list = raw.arrayValue, list.count <= 16 else {
                throw .invalidField("tracks", "expected an array of up to 16 objects")
            }
            for item in list {
                guard let o = item.objectValue else { throw .invalidField("tracks", "expected objects") }
                let entry = Fields(object: o)
                let mid = try entry.string("mid", max: 32)
                guard entries[mid] == nil else { throw .invalidField("tracks", "mid \"\(mid)\" appears twice") }
                if let id = o["trackId"] {
                    entries[mid] = .existing(id.stringValue.map(TrackID.init))
                } else {
                    let source: TrackSource = try entry.enumValue("source")
                    let request: Result<TrackRequest, SignalError>
                    do throws(SignalError) { request = .success(try TrackRequest(entry)) } catch {
                        request = .failure(error)
                    }
                    entries[mid] = .new(source, request)
                }
            }
        }
        do {
            offer = try PublishOffer(text: text, options: PublishOptions(simulcast: true))
        } catch {
            throw .media(code: error.code, message: error.description)
        }
        for mid in entries.keys where !offer.sections.contains(where: { $0.mid == mid }) {
            throw .invalidField("tracks", "mid \"\(mid)\" is not in the offer")
        }
    }
}

/// What becomes of one section of a publisher's offer (`MediaCoordinator.plan`).
enum SectionPlan: Equatable {
    /// A stopped transceiver, or one of a kind the server does not know: refused without a word,
    /// and the track it carried, if any, ends.
    case stop(ending: TrackID?)
    /// Already bound to a track that is still published: accepted as before.
    case keep(Track)
    /// Refused with this code and message in `rejected`; `unbind`: the binding to an ended track goes.
    case reject(String, String, unbind: Bool = false)
    /// Binds one of the publisher's tracks, received with this codec.
    case bind(Track, SelectedCodec)
    /// Publishes a new track, then binds it.
    case publish(TrackRequest, SelectedCodec)
}

/// The sections of an offer as they are decided: accepted with their tracks, or refused.
struct PublishOutcome {
    var accepted: [(OfferedSection, Track)] = []
    var rejected: [PublishAnswer.Rejection] = []
    /// Every refused mid (rejected or stopped), answered with port 0.
    var refused = Set<String>()
    /// The SSRCs the rejected sections declared: their packets are dropped as `rejected`.
    var refusedSSRCs = Set<UInt32>()

    mutating func reject(_ s: OfferedSection, _ code: String, _ message: String) {
        rejected.append(PublishAnswer.Rejection(mid: s.mid, code: code, message: message))
        refused.insert(s.mid)
        if let x = s.ssrc { refusedSSRCs.insert(x) }
        if let x = s.rtxSSRC { refusedSSRCs.insert(x) }
    }
}

/// The result of a `publish_offer`: the answer, the tracks bound to mids, the sections rejected.
package struct PublishAnswer: Equatable, Sendable {
    package struct Bound: Equatable, Sendable {
        package var mid: String
        package var track: TrackID
        package var source: TrackSource
        package var share: ShareID?
    }

    package struct Rejection: Equatable, Sendable {
        package var mid: String
        package var code: String
        package var message: String
    }

    package var sdp: String
    package var tracks: [Bound]
    package var rejected: [Rejection]

    package var json: JSONObject {
        let tracks: [JSONValue] = tracks.map { b in
            var o: JSONObject = [
                "mid": .string(b.mid), "trackId": .string(b.track.rawValue), "source": .string(b.source.rawValue),
            ]
            if let share = b.share { o["shareId"] = .string(share.rawValue) }
            return .object(o)
        }
        let rejected: [JSONValue] = rejected.map { r in
            .object(["mid": .string(r.mid), "code": .string(r.code), "message": .string(r.message)])
        }
        return ["sdp": .string(sdp), "tracks": .array(tracks), "rejected": .array(rejected)]
    }
}
