import AtriumAuth
import AtriumJSON
import AtriumModel
import AtriumRoomCoding
import AtriumRooms

/// An admin API failure: the HTTP status and the documented `{"error": {"code", "message"}}` body.
/// Every code is listed in `openapi.yaml` (components.schemas.ErrorCode) and in docs/admin-api.md.
struct APIError: Error {
    var status: Int
    var code: String
    var message: String
    /// Extra members of the error object (`field`, or `line`/`column`/`position` for malformed JSON).
    var details: JSONObject = [:]
    var headers: [(name: String, value: String)] = []

    static func invalidField(_ field: String, _ message: String) -> APIError {
        APIError(
            status: 422, code: "invalid_field", message: "\(field): \(message)",
            details: ["field": .string(field)])
    }

    /// A room name outside `A-Z a-z 0-9 _ - .` (1 to 128): its own code, so a page can say what to type.
    static func invalidRoomName(_ message: String) -> APIError {
        APIError(
            status: 422, code: "invalid_room_name", message: "name: \(message)", details: ["field": .string("name")])
    }

    static func malformedJSON(_ e: JSONParseError) -> APIError {
        APIError(
            status: 400, code: "malformed_json", message: "the body is not valid JSON: \(e.description)",
            details: [
                "line": .int(Int64(e.line)), "column": .int(Int64(e.column)),
                "position": .int(Int64(e.position)),
            ])
    }

    static func auth(_ e: AuthError) -> APIError {
        var err = APIError(status: e.isAuthentication ? 401 : 403, code: e.code, message: e.message)
        if e == .missingToken {
            // RFC 6750 section 3.1: no error attribute when the request carried no token.
            err.headers = [("www-authenticate", "Bearer realm=\"atrium\"")]
        } else if e.isAuthentication {
            err.headers = [("www-authenticate", "Bearer realm=\"atrium\", error=\"invalid_token\"")]
        }
        return err
    }

    static func store(_ e: StoreError) -> APIError {
        switch e {
        case .duplicateName(let name):
            APIError(status: 409, code: "duplicate_name", message: "a room named \"\(name)\" already exists")
        case .notFound(let id):
            APIError(status: 404, code: "room_not_found", message: "no room \"\(id)\"")
        case .schemaTooNew, .backend:
            APIError(status: 503, code: "store_unavailable", message: "the room store failed: \(e)")
        case .unavailable(let m):
            APIError(status: 503, code: "cluster_unavailable", message: "the cluster's Redis cannot be reached: \(m)")
        }
    }

    /// A hub refusal: conflicts of the room's rules are 409, missing things 404, bad fields 422.
    static func hub(_ e: HubError) -> APIError {
        let status: Int =
            switch e {
            case .participantNotFound, .trackNotFound, .shareNotFound, .requestNotFound, .roomNotFound: 404
            case .invalidField, .badRequest, .invalidRoomName: 422
            case .notAllowed: 403
            case .clusterUnavailable, .roomElsewhere, .storeUnavailable: 503
            default: 409
            }
        var err = APIError(status: status, code: e.code, message: e.message)
        if case .invalidField(let field, _) = e { err.details = ["field": .string(field)] }
        return err
    }

    /// What would read a room's media, refused in an end-to-end encrypted room.
    static func e2eeRoom(_ what: String) -> APIError {
        APIError(
            status: 409, code: "e2ee_room",
            message: "the room is end-to-end encrypted: the server cannot read its media for \(what)")
    }

    static func roomNotFound(_ key: String) -> APIError {
        APIError(status: 404, code: "room_not_found", message: "no room \"\(key)\"")
    }

    var body: JSONValue {
        var inner: JSONObject = ["code": .string(code), "message": .string(message)]
        for (k, v) in details { inner[k] = v }
        return .object(["error": .object(inner)])
    }
}
