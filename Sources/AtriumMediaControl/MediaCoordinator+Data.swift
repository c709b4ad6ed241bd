import AtriumMedia
package import AtriumModel

/// A message a participant sent on one of its data channels, for the signaling edge to check and
/// relay through the room.
package struct DataFromChannel: Equatable, Sendable {
    package var participant: ParticipantID
    package var room: RoomID
    package var lossy: Bool
    package var payload: [UInt8]
}

/// Data channels as media control sees them: which transports have which kind open, the messages
/// that arrive on them, and the way out to a participant's channel.
extension MediaCoordinator {
    /// Notes a channel opening or closing, or queues a message, from the worker's events.
    func dataEvent(_ event: MediaEvent) {
        switch event {
        case .dataChannel(let transport, _, let lossy, let open):
            var kinds = dataChannels[transport] ?? [:]
            kinds[lossy, default: 0] += open ? 1 : -1
            if kinds[lossy, default: 0] <= 0 { kinds[lossy] = nil }
            dataChannels[transport] = kinds.isEmpty ? nil : kinds
        case .dataMessage(let transport, let lossy, let payload):
            guard let (pid, room) = owner(ofTransport: transport) else { return }
            dataIn.append(DataFromChannel(participant: pid, room: room, lossy: lossy, payload: payload))
        default:
            break
        }
    }

    func owner(ofTransport id: String) -> (ParticipantID, RoomID)? {
        for (pid, peer) in peers where peer.publisher?.transport == id || peer.subscriber?.transport == id {
            return (pid, peer.room)
        }
        return nil
    }

    /// The messages that arrived on data channels since the last call, oldest first.
    package func takeData() -> [DataFromChannel] {
        defer { dataIn.removeAll() }
        return dataIn
    }

    /// Sends a message on the participant's data channel of that kind (its subscriber connection's,
    /// else its publisher connection's). False when it has none open: the caller falls back.
    package func sendData(to pid: ParticipantID, lossy: Bool, payload: [UInt8]) -> Bool {
        guard let peer = peers[pid] else { return false }
        for transport in [peer.subscriber?.transport, peer.publisher?.transport].compactMap({ $0 })
        where dataChannels[transport]?[lossy] != nil {
            plane.submit(.sendData(transport: transport, lossy: lossy, payload: payload))
            return true
        }
        return false
    }

}

extension MediaCoordinator {
    /// Whether the participant's publisher transport lost ICE consent (RFC 7675: 30 s without a valid
    /// check) or failed since it connected.
    package func publisherGone(_ pid: ParticipantID) -> Bool {
        let state = peers[pid]?.publisher.flatMap { transportStates[$0.transport] }
        return state == .disconnected || state == .failed
    }
}
