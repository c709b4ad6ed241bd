package import AtriumJSEP
package import AtriumModel
package import AtriumProtocol
import AtriumRooms

/// A `publish_offer` request, checked (docs/protocol.md section 14): the offer, and by mid the entries
/// of `tracks` that bind its transceivers. A malformed request fails as a whole; what is wrong with
/// one entry's new track (its name, its layers) rejects only that section, later.
package struct PublishRequest {
    package enum Entry {
        /// Binds a track the publisher already has (nil: `trackId` is not a string).
        case existing(TrackID?)
        /// Publishes a new track of this source, described by the rest of the entry.
        case new(TrackSource, Result<TrackRequest, ProtocolError>)
    }

    package var offer: PublishOffer
    package var entries: [String: Entry]

    package init(_ request: PublishOfferRequest) throws(NegotiationError) {
        let text = request.sdp
        entries = [:]
        for e in request.tracks {
            switch e.binding {
            case .existing(let id): entries[e.mid] = .existing(id)
            case .new(let t): entries[e.mid] = .new(t.source, .success(t))
            case .invalid(let source, let error, _): entries[e.mid] = .new(source, .failure(error))
            }
        }
        do {
            offer = try PublishOffer(text: text, options: PublishOptions(simulcast: true))
        } catch {
            throw .media(code: error.code, message: error.description)
        }
        for mid in entries.keys where !offer.sections.contains(where: { $0.mid == mid }) {
            throw .request(.invalidField("tracks", "mid \"\(mid)\" is not in the offer"))
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
