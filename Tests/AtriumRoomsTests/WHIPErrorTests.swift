import AtriumHTTP
import AtriumJSON
import AtriumRooms
import Testing

@testable import AtriumSignal

/// A room's refusal of a WHIP publisher becomes one documented HTTP status with the room's own code
/// (docs/whip-whep.md, "Errors"), and its body is the JSON every API of the server uses.
@Suite struct WHIPErrorTests {
    @Test(
        arguments: [
            (HubError.shareLocked, 403, "share_locked"),
            (.notAllowed("screen sharing is not permitted"), 403, "not_allowed"),
            (.shareInProgress, 409, "share_in_progress"),
            (.tooManyShares, 409, "too_many_shares"),
            (.roomFull, 409, "room_full"),
            (.noActiveShare, 409, "no_active_share"),
            (.roomNotFound("r"), 404, "room_not_found"),
            (.invalidRoomName("a b"), 403, "invalid_room_name"),
            (.clusterUnavailable("down"), 503, "cluster_unavailable"),
            (.roomElsewhere(node: "n2"), 503, "room_elsewhere"),
            (.invalidField("f", "m"), 400, "invalid_field"),
        ] as [(HubError, Int, String)])
    func aRoomsRefusalHasItsStatusAndCode(_ e: HubError, _ status: Int, _ code: String) throws {
        let w = WHIPError(e)
        #expect(w.status == status && w.code == code)
        let r = w.response
        #expect(r.status == status && r.header("content-type") == "application/json")
        let body = try JSONParser.parse(r.body)
        #expect(body["error"]?["code"] == .string(code))
        #expect(body["error"]?["message"]?.stringValue?.isEmpty == false)
    }
}
