import AtriumAuth
import AtriumHTTP
import AtriumJSON
import AtriumModel
import AtriumProtocol
import AtriumRoomCoding
import AtriumRooms

/// Data beside media from the application server: the live room's chat history, and messages posted
/// as the server (`from: null`), which reach participants as any `data` event.
extension AdminAPI {
    static let dataFields: Set<String> = ["topic", "payload", "to"]

    /// `GET /v1/rooms/{id}/chat`: the live room's kept chat messages, oldest first (`[]` when nobody is in it).
    func listChat(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let claims = try authenticate(request)
        let room = try find(params["roomId"] ?? "")
        do throws(AuthError) { try claims.authorize(.readRoom(room)) } catch { throw .auth(error) }
        let chat = hub?.state(room.id)?.chat ?? []
        return Self.json(200, ["messages": .array(chat.map { HubCoding.dataInfo($0).json })])
    }

    /// `POST /v1/rooms/{id}/data`: a message from the server to everyone or to the listed participants
    /// of the live room (409 `room_not_live` when nobody is in it).
    func postData(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let claims = try authenticate(request)
        let room = try find(params["roomId"] ?? "")
        do throws(AuthError) { try claims.authorize(.administerRoom(room)) } catch { throw .auth(error) }
        let body = try jsonBody(request)
        for key in body.keys where !Self.dataFields.contains(key) { throw .invalidField(key, "unknown field") }
        guard let topic = body["topic"]?.stringValue, !topic.isEmpty, topic.utf8.count <= DataLimits.maxTopicBytes
        else { throw .invalidField("topic", "expected a string of 1 to \(DataLimits.maxTopicBytes) bytes") }
        guard let payload = body["payload"]?.stringValue, payload.utf8.count <= DataLimits.maxPayloadBytes else {
            throw .invalidField("payload", "expected a string of at most \(DataLimits.maxPayloadBytes) bytes")
        }
        var to: [ParticipantID]?
        if let v = body["to"], v != .null {
            guard let list = v.arrayValue, !list.isEmpty, list.count <= DataLimits.maxRecipients else {
                throw .invalidField("to", "expected 1 to \(DataLimits.maxRecipients) participant ids")
            }
            var ids: [ParticipantID] = []
            for item in list {
                guard let s = item.stringValue, !s.isEmpty, s.utf8.count <= 64 else {
                    throw .invalidField("to", "expected participant ids")
                }
                ids.append(ParticipantID(s))
            }
            to = ids
        }
        guard let hub, let state = hub.state(room.id) else {
            throw APIError(
                status: 409, code: "room_not_live", message: "nobody is in this room: there is no one to send to")
        }
        let message = DataMessage(
            id: hub.ids.message(), from: nil, topic: topic, payload: payload, to: to, at: env.nowMillis())
        let events: [RoomEvent]
        do throws(HubError) {
            events = try hub.apply(.sendData(message), in: room.id, by: .admin, now: env.now())
        } catch {
            throw .hub(error)
        }
        var recipients = 0
        for case .data(let sent) in events { recipients = sent.to?.count ?? state.participants.count }
        return Self.json(
            200,
            [
                "messageId": .string(message.id.rawValue), "at": .int(message.at),
                "recipients": .int(Int64(recipients)),
            ])
    }
}
