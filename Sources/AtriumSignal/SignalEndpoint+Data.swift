import AtriumJSON
import AtriumMediaControl
import AtriumModel
import AtriumProtocol
import AtriumRoomCoding
import AtriumRooms

/// Data messages on data channels: a message a participant sent on its channel is checked like a
/// `send_data` (the same envelope, permission and budget) and relayed through the room; the room's
/// messages that came on channels leave on the recipients' channels.
extension SignalEndpoint {
    /// Takes from the participant's data budget (`DataRateLimiter`), shared by signaling and channels.
    func admitData(_ pid: ParticipantID, size: Int) -> Bool {
        let t = monotonic()
        var limiter = dataLimits[pid] ?? DataRateLimiter(now: t)
        defer { dataLimits[pid] = limiter }
        return limiter.admit(size: size, now: t)
    }

    /// A message from a participant's channel: the envelope of `send_data` (`topic`, `payload`, `to`).
    /// A refusal of a reliable message is told over signaling as an `error` without an id; a lossy one
    /// is dropped without a word (the next pointer position follows).
    func relayChannelData(_ d: DataFromChannel) {
        let path: DataPath = d.lossy ? .lossy : .reliable
        func refuse(_ code: String, _ message: String) {
            guard !d.lossy, let s = session(of: d.participant) else { return }
            send(s, error: code, message, id: nil)
        }
        guard let value = try? JSONParser.parse(d.payload), let o = value.objectValue else {
            return refuse("invalid_field", "a data channel message is a JSON object like send_data's")
        }
        let request: ClientRequest
        do throws(ProtocolError) { request = try ClientRequest(.sendData, FieldReader(object: o)) } catch {
            return refuse(error.code, error.message)
        }
        guard case .sendData(let topic, let payload, let to) = request else { return }
        guard admitData(d.participant, size: payload.utf8.count) else {
            return refuse("data_rate_limited", SignalError.dataRateLimited.message)
        }
        let message = DataMessage(
            id: hub.ids.message(), from: d.participant, topic: topic, payload: payload, to: to, at: nowMillis(),
            path: path)
        do throws(HubError) {
            try hub.apply(.sendData(message), in: d.room, by: .participant(d.participant), now: now())
        } catch {
            refuse(error.code, error.message)
        }
    }

    /// Sends a message that came on a channel to each recipient's channel of the same kind; a reliable
    /// one goes over signaling to those without one, a lossy one only to channels.
    func deliverOnChannels(_ m: DataMessage, to recipients: [ParticipantID]) {
        let json = HubCoding.event(.data(m)).json
        let bytes = JSONValue.object(json).bytes()
        var fallback: [ParticipantID] = []
        for p in recipients {
            if media?.sendData(to: p, lossy: m.path == .lossy, payload: bytes) == true { continue }
            if m.path == .reliable { fallback.append(p) }
        }
        if !fallback.isEmpty { broadcast(json, to: fallback) }
    }
}
