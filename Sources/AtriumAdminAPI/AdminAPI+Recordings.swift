import AtriumAuth
import AtriumHTTP
import AtriumJSON
import AtriumModel
import AtriumRecording
import AtriumRooms

/// Recordings of a live room (admin API only: participants cannot start one): start, list, read,
/// stop. The `RecordingManager` runs ffmpeg; this maps requests and refusals.
extension AdminAPI {
    private func recordingRoom(_ request: HTTPRequest, _ params: [String: String], write: Bool) throws(APIError)
        -> (Room, RecordingManager)
    {
        let claims = try authenticate(request)
        let room = try find(params["roomId"] ?? "")
        do throws(AuthError) { try claims.authorize(write ? .administerRoom(room) : .readRoom(room)) } catch {
            throw .auth(error)
        }
        guard let recordings else {
            throw APIError(
                status: 503, code: "recording_unavailable", message: "recording needs the media plane on this node")
        }
        return (room, recordings)
    }

    func startRecording(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (room, recordings) = try recordingRoom(request, params, write: true)
        let body = try jsonBody(request)
        guard !room.e2ee else { throw .e2eeRoom("a recording") }
        do throws(RecordingError) {
            let parsed = try RecordingRequest(json: body)
            guard let state = hub?.state(room.id) else { throw .roomNotLive }
            let r = try recordings.start(parsed, room: room, state: state)
            return Self.json(201, r.json)
        } catch {
            throw .recording(error)
        }
    }

    func listRecordings(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (room, recordings) = try recordingRoom(request, params, write: false)
        return Self.json(200, ["recordings": .array(recordings.list(room: room.id).map(\.json))])
    }

    func getRecording(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (room, recordings) = try recordingRoom(request, params, write: false)
        let id = params["recordingId"] ?? ""
        guard let r = recordings.recording(room: room.id, id: id) else { throw .recording(.recordingNotFound(id)) }
        return Self.json(200, r.json)
    }

    /// Stops a recording: ffmpeg is asked to finish the file (`stopping`, then `finished`).
    func stopRecording(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (room, recordings) = try recordingRoom(request, params, write: true)
        do throws(RecordingError) {
            return Self.json(200, try recordings.stop(room: room.id, id: params["recordingId"] ?? "").json)
        } catch {
            throw .recording(error)
        }
    }
}

extension APIError {
    static func recording(_ e: RecordingError) -> APIError {
        switch e {
        case .invalidField(let f, let m): .invalidField(f, m)
        case .roomNotLive:
            APIError(status: 409, code: "room_not_live", message: "nobody is in this room: there is nothing to record")
        case .shareNotFound(let id): APIError(status: 404, code: "share_not_found", message: "no share \"\(id)\"")
        case .participantNotFound(let key):
            APIError(status: 404, code: "participant_not_found", message: "no participant \"\(key)\" in this room")
        case .nothingToRecord:
            APIError(status: 409, code: "nothing_to_record", message: "none of the chosen tracks has media yet")
        case .codecUnsupported(let codec, let container):
            APIError(
                status: 422, code: "codec_unsupported",
                message: "a \(container.rawValue) file cannot hold \(codec) without re-encoding: choose mkv",
                details: ["field": "container"])
        case .recordingNotFound(let id):
            APIError(status: 404, code: "recording_not_found", message: "no recording \"\(id)\" in this room")
        case .unavailable(let why): APIError(status: 503, code: "recording_unavailable", message: why)
        }
    }
}
