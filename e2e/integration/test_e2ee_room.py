"""An end-to-end encrypted room (docs/admin-api.md, "Rooms"; docs/e2ee.md): the `e2ee` setting
round-trips through the admin API and is announced in the snapshot; what would need to read the
room's media is refused with `409 e2ee_room` (a recording, a live stream, a WHIP tool publishing, a
WHEP player); the setting cannot change
while the room is live (`409 room_live`); its tracks are counted as encrypted
(`atrium_e2ee_tracks`)."""
import asyncio

from signal_client import mint
from test_media import metric, run_in_room, wait_metric_above
from test_whep import recvonly_offer
from test_whip_http import call, error_of, offer_sdp


def test_an_e2ee_room_announces_itself_and_refuses_recording_and_streaming(media_server):
    server = media_server
    status, _, _, room = server.request("POST", "/v1/rooms", {"name": "secret-room", "e2ee": True})
    assert status == 201 and room["e2ee"] is True, room
    assert server.request("GET", f"/v1/rooms/{room['id']}")[3]["e2ee"] is True
    status, _, _, plain = server.request("POST", "/v1/rooms", {"name": "plain-room"})
    assert status == 201 and plain["e2ee"] is False, plain
    # Not live: it may change, and back.
    assert server.request("PATCH", f"/v1/rooms/{plain['id']}", {"e2ee": True})[3]["e2ee"] is True
    assert server.request("PATCH", f"/v1/rooms/{plain['id']}", {"e2ee": False})[3]["e2ee"] is False
    status, _, _, body = server.request("PATCH", f"/v1/rooms/{plain['id']}", {"e2ee": "yes"})
    assert status == 422 and body["error"]["code"] == "invalid_field" and body["error"]["field"] == "e2ee"

    async def scenario(s):
        alice = await s.join("alice")
        assert alice.snapshot["room"]["e2ee"] is True, alice.snapshot["room"]
        before = await metric(server, "atrium_e2ee_tracks")
        pub = await s.publish(alice, ["camera"])
        assert pub.track_id("camera")
        await wait_metric_above(server, before, "atrium_e2ee_tracks")
        for path, body in [("recordings", {"what": "share"}), ("streams", {"hls": True})]:
            status, _, _, refused = server.request("POST", f"/v1/rooms/{room['id']}/{path}", body)
            assert status == 409 and refused["error"]["code"] == "e2ee_room", (path, refused)
        # A WHIP tool cannot encrypt, nor a WHEP player decrypt: refused, and neither joins.
        for kind, sdp in [("whip", await offer_sdp()), ("whep", await recvonly_offer())]:
            token = mint(server, "secret-room", f"{kind}-tool")
            headers = {"Content-Type": "application/sdp", "Authorization": f"Bearer {token}"}
            status, _, body = await asyncio.to_thread(
                call, server, "POST", "/v1/rooms/secret-room/" + kind, sdp.encode(), headers)
            assert status == 409 and error_of(body) == "e2ee_room", (kind, status, body)
        people = server.request("GET", f"/v1/rooms/{room['id']}/participants")[3]["participants"]
        assert [p["identity"] for p in people] == ["alice"], people
        status, _, _, live = server.request("PATCH", f"/v1/rooms/{room['id']}", {"e2ee": False})
        assert status == 409 and live["error"]["code"] == "room_live", live
        # Other settings still change on the live room; it stays encrypted.
        status, _, _, patched = server.request("PATCH", f"/v1/rooms/{room['id']}", {"metadata": "m"})
        assert status == 200 and patched["e2ee"] is True, patched

    run_in_room(server, "secret-room", scenario)
