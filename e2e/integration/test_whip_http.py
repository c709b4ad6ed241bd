"""WHIP's HTTP side (RFC 9725, docs/whip-whep.md) against a real server, without media: the documented
statuses and JSON error bodies for a missing or expired token, a token for another room, a wrong
content type, an offer that is not SDP or sends nothing; OPTIONS with the allowed methods and CORS;
and a session's PATCH (trickle 204, If-Match 412, ICE restart 422) and DELETE. An aiortc peer makes the
offers (its media is not started: the netns suite carries media, test_whip.py)."""
import http.client
import json
import os

import pytest

from conftest import MEDIA_ARGS, Server, stopped_cleanly
from media_peer import peer_connection, make_track
from signal_client import joined, mint, mint_jwt, run


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    d = tmp_path_factory.mktemp("whiphttp")
    s = Server(os.path.join(d, "data"), *MEDIA_ARGS).start()
    yield s
    stopped_cleanly(s)


def call(server, method, path, body=b"", headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request(method, path, body=body, headers=headers or {})
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, data


async def offer_sdp():
    pc = peer_connection()
    pc.addTransceiver(make_track("screen_share"), direction="sendonly")
    await pc.setLocalDescription(await pc.createOffer())
    sdp = pc.localDescription.sdp
    await pc.close()
    return sdp


def post(server, room, token, sdp, content_type="application/sdp", query=""):
    h = {"Content-Type": content_type}
    if token:
        h["Authorization"] = f"Bearer {token}"
    return call(server, "POST", f"/v1/rooms/{room}/whip{query}", sdp.encode(), h)


def error_of(body):
    return json.loads(body)["error"]["code"]


def test_refusals_have_documented_statuses_and_bodies(server):
    sdp = run(offer_sdp())
    tok = mint(server, "whip-a", "obs")
    status, h, body = post(server, "whip-a", None, sdp)
    assert status == 401 and error_of(body) == "missing_token" and "bearer" in h["www-authenticate"].lower()
    expired = mint_jwt(server, "obs", {"room": "whip-a", "roomJoin": True, "canPublish": True}, ttl=-120)
    status, _, body = post(server, "whip-a", expired, sdp)
    assert status == 401 and error_of(body) == "token_expired", body
    status, _, body = post(server, "whip-b", tok, sdp)
    assert status == 403 and error_of(body) == "wrong_room", body
    status, _, body = post(server, "whip-a", tok, sdp, content_type="application/json")
    assert status == 415 and error_of(body) == "unsupported_media_type", body
    status, _, body = post(server, "whip-a", tok, "hello")
    assert status == 400 and error_of(body) == "invalid_sdp", body
    status, _, body = post(server, "whip-a", tok, sdp, query="?source=microphone")
    assert status == 400 and error_of(body) == "invalid_field", body
    # Only codecs the server does not forward: nothing to take, refused with the section's reason.
    unknown = sdp.replace("VP8/90000", "XV1/90000").replace("H264/90000", "XV2/90000")
    status, _, body = post(server, "whip-e", mint(server, "whip-e", "obs"), unknown)
    assert status == 400 and error_of(body) == "no_common_codec", body
    assert server.request("GET", "/v1/rooms/whip-e/participants")[3]["participants"] == []
    status, h, _ = call(server, "OPTIONS", "/v1/rooms/whip-a/whip")
    assert status == 204 and "POST" in h["allow"] and h["access-control-allow-origin"] == "*"
    status, _, body = call(server, "GET", "/v1/rooms/whip-a/whip")
    assert status == 405 and error_of(body) == "method_not_allowed"
    # Refused before the room was looked up: it was never opened.
    assert server.request("GET", "/v1/rooms/whip-a/participants")[0] == 404


def test_a_session_takes_trickle_refuses_a_restart_and_ends_with_delete(server):
    async def go():
        watcher = await joined(server, "watcher", room="whip-c")
        try:
            sdp = await offer_sdp()
            tok = mint(server, "whip-c", "obs", name="OBS")
            status, h, answer = post(server, "whip-c", tok, sdp)
            assert status == 201, answer
            assert h["content-type"] == "application/sdp" and b"a=ice-lite" in answer
            location, etag = h["location"], h["etag"]
            assert location.startswith("/v1/rooms/whip-c/whip/") and etag.startswith('"')
            started = await watcher.expect("share_started")
            frag = "a=ice-ufrag:x\r\na=ice-pwd:y\r\na=mid:0\r\na=candidate:1 1 udp 1 127.0.0.1 9 typ host\r\n"
            trickle = {"Authorization": f"Bearer {tok}", "Content-Type": "application/trickle-ice-sdpfrag",
                       "If-Match": etag}
            cand = "a=mid:0\r\na=candidate:1 1 udp 2130706431 127.0.0.1 50000 typ host\r\n"
            assert call(server, "PATCH", location, cand.encode(), trickle)[0] == 204
            status, _, body = call(server, "PATCH", location, cand.encode(), {**trickle, "If-Match": '"other"'})
            assert status == 412 and error_of(body) == "precondition_failed"
            status, _, body = call(server, "PATCH", location, frag.encode(), trickle)
            assert status == 422 and error_of(body) == "ice_restart_unsupported"
            other = mint(server, "whip-c", "someone-else")
            status, _, body = call(server, "DELETE", location, headers={"Authorization": f"Bearer {other}"})
            assert status == 403 and error_of(body) == "not_allowed"
            status, _, _ = call(server, "DELETE", location, headers={"Authorization": f"Bearer {tok}"})
            assert status == 200
            stopped = await watcher.expect("share_stopped")
            assert stopped["share"]["id"] == started["share"]["id"] and stopped["reason"] == "user_stopped"
            await watcher.expect("participant_left")
            status, _, body = call(server, "DELETE", location, headers={"Authorization": f"Bearer {tok}"})
            assert status == 404 and error_of(body) == "session_not_found"
        finally:
            await watcher.close()

    run(go())


def test_the_share_lock_refuses_the_post_with_its_code(server):
    async def go():
        host = await joined(server, "host", room="whip-d", role="host")
        try:
            await host.request("set_share_lock", locked=True)
            status, _, body = post(server, "whip-d", mint(server, "whip-d", "obs"), await offer_sdp())
            assert status == 403 and error_of(body) == "share_locked", body
            status, _, _, data = server.request("GET", "/v1/rooms/whip-d/participants")
            assert [p["identity"] for p in data["participants"]] == ["host"], data
        finally:
            await host.close()

    run(go())
