package import AtriumJSON
package import AtriumMedia
package import AtriumModel
package import AtriumProtocol
import AtriumRooms

/// A participant's network quality as `network_quality` reports it (docs/protocol.md section 14):
/// built from what the media plane measures on the participant's transports, the round-trip time
/// from RTCP receiver reports (RFC 3550 section 6.4.1) and the fraction of media lost (the
/// subscriber's receiver reports about what it is sent; our own reception statistics of what a
/// publisher sends). The worse transport decides.
package struct NetworkQuality: Equatable, Sendable {
    package typealias Level = NetworkQualityEntry.Level

    package var participant: ParticipantID
    package var level: Level
    /// Seconds; nil until measured.
    package var rtt: Double?
    /// 0 to 1; nil until reported.
    package var loss: Double?

    /// Under 2 % loss and 150 ms is excellent, under 10 % and 400 ms good, worse is poor; nil
    /// when nothing is measured yet.
    package static func level(rtt: Double?, loss: Double?) -> Level? {
        guard rtt != nil || loss != nil else { return nil }
        let r = rtt ?? 0
        let l = loss ?? 0
        if l < 0.02 && r < 0.15 { return .excellent }
        if l < 0.10 && r < 0.40 { return .good }
        return .poor
    }

    /// One participant's entry from the statistics of its transports (connected or not).
    package static func of(_ participant: ParticipantID, transports: [TransportStats]) -> NetworkQuality? {
        guard !transports.isEmpty else { return nil }
        let rtt = transports.compactMap(\.rtt).max()
        let loss = transports.compactMap(\.loss).max()
        if !transports.contains(where: \.connected) {
            return NetworkQuality(participant: participant, level: .lost, rtt: rtt, loss: loss)
        }
        guard let level = level(rtt: rtt, loss: loss) else { return nil }
        return NetworkQuality(participant: participant, level: level, rtt: rtt, loss: loss)
    }

    /// The entry as `network_quality` has it: milliseconds, loss to three places.
    package var entry: NetworkQualityEntry {
        NetworkQualityEntry(
            participant: participant, quality: level, rttMs: rtt.map { Int64(($0 * 1000).rounded()) },
            loss: loss.map { ($0 * 1000).rounded() / 1000 })
    }

    /// The `network_quality` message of a room.
    package static func message(_ entries: [NetworkQuality]) -> JSONObject {
        ServerEvent.networkQuality(entries.map(\.entry)).json
    }

    /// Who is told what: each member its own entry and those of the room's publishers (what it can
    /// watch), sorted by participant id; a member with neither is told an empty list, so that every
    /// push is all a member may see and a grade no longer pushed goes. The publishers' list is shared:
    /// the members whose own entry is in it or who have none form one group (one message encoded
    /// once), the others get it with their own. So a hidden participant or a viewer is
    /// never named to the others, and an audience of N costs N short messages, not N of N entries.
    /// Pure.
    package static func audiences(
        _ entries: [NetworkQuality], publishers: Set<ParticipantID>, members: [ParticipantID]
    ) -> [(recipients: [ParticipantID], entries: [NetworkQuality])] {
        var shared: [NetworkQuality] = []
        var own: [ParticipantID: NetworkQuality] = [:]
        for e in entries {
            if publishers.contains(e.participant) { shared.append(e) } else { own[e.participant] = e }
        }
        var common: [ParticipantID] = []
        var out: [(recipients: [ParticipantID], entries: [NetworkQuality])] = []
        for m in members {
            if let mine = own[m] {
                let list = (shared + [mine]).sorted { $0.participant.rawValue < $1.participant.rawValue }
                out.append(([m], list))
            } else {
                common.append(m)
            }
        }
        if !common.isEmpty { out.insert((common, shared), at: 0) }
        return out
    }
}

extension MediaCoordinator {
    /// Every participant with media transports the plane has reported, by room (participants in
    /// join order of the coordinator's map, sorted by id for a stable message).
    package func networkQuality() -> [RoomID: [NetworkQuality]] {
        let stats = Dictionary(plane.transportStats.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var out: [RoomID: [NetworkQuality]] = [:]
        for (pid, peer) in peers {
            let ids = [peer.publisher?.transport, peer.subscriber?.transport].compactMap { $0 }
            if let q = NetworkQuality.of(pid, transports: ids.compactMap { stats[$0] }) {
                out[peer.room, default: []].append(q)
            }
        }
        for room in out.keys { out[room]?.sort { $0.participant.rawValue < $1.participant.rawValue } }
        return out
    }
}
