"""WHEP playback (docs/whip-whep.md) with aiortc as the player: one POST of a receive-only offer, and the
session follows the room's share from one sharer to the next on the same SSRCs, with no new offer (the
frames' content shows whose screen and whose sound it is); a player of one participant gets that
participant's camera and microphone; the player is hidden from the room; DELETE ends it. The refusals
have their documented statuses and JSON bodies."""
import json
import os

import pytest

from conftest import MEDIA_ARGS, Server, stopped_cleanly
from media_peer import Publisher, peer_connection
from signal_client import joined, mint, mint_jwt, run
from whep_peer import WhepPlayer, http_call

TEST_TIMEOUT = 90


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    d = tmp_path_factory.mktemp("whep")
    s = Server(os.path.join(d, "data"), *MEDIA_ARGS).start()
    yield s
    stopped_cleanly(s)


def error_of(body):
    return json.loads(body)["error"]["code"]


def test_a_player_follows_the_share_from_one_sharer_to_the_next(server):
    async def go():
        room = "whep-follow"
        alice = await joined(server, "alice", room=room)
        bob = await joined(server, "bob", room=room)
        player = await WhepPlayer.start(server.port, room, mint(server, room, "fan"))
        pubs = []
        try:
            assert player.status == 201, player.error
            assert player.location.startswith(f"/v1/rooms/{room}/whep/")
            assert server.metric("atrium_whep_sessions") == 1
            # The player is hidden: nobody in the room hears of it.
            await alice.no_event("participant_joined", lambda m: m["participant"]["identity"].startswith("fan"))

            pubs.append(await Publisher.start(alice, ["screen_share", "microphone"]))
            first = (await alice.expect("share_started"))["share"]
            video = await player.wait_class("video", "screen_share", 20, timeout=30)
            audio = await player.wait_class("audio", "microphone", 20, timeout=30)

            await alice.request("stop_share", shareId=first["id"])
            # Bob's screen shows the camera's red picture and carries the share's 880 Hz tone.
            pubs.append(await Publisher.start(bob, ["screen_share", "screen_share_audio"],
                                              looks={"screen_share": "camera"}))
            await bob.expect("share_started", lambda m: m["share"]["participantId"] == bob.participant_id)
            await player.wait_class("video", "camera", 20, timeout=30)
            await player.wait_class("audio", "screen_share_audio", 20, timeout=30)
            # The same receivers, never ended: one stream per kind whose source changed.
            assert player.stats["video"] is video and player.stats["audio"] is audio
            assert not video.ended and not audio.ended
            assert len(player.pc.getTransceivers()) == 2

            assert await player.delete() == 200
            server.wait_metric("atrium_whep_sessions", lambda v: v == 0, timeout=10)
        finally:
            await player.close()
            for p in pubs:
                await p.close()
            await alice.close()
            await bob.close()

    run(go(), TEST_TIMEOUT)


def test_a_player_of_one_participant_gets_its_camera_and_microphone(server):
    async def go():
        room = "whep-one"
        carol = await joined(server, "carol", room=room)
        dave = await joined(server, "dave", room=room)
        pubs = [await Publisher.start(carol, ["screen_share"]),
                await Publisher.start(dave, ["camera", "microphone"])]
        player = await WhepPlayer.start(server.port, room, mint(server, room, "fan"), query="?participant=dave")
        try:
            assert player.status == 201, player.error
            await player.wait_class("video", "camera", 20, timeout=30)
            await player.wait_class("audio", "microphone", 20, timeout=30)
            assert player.stats["video"].classes["screen_share"] == 0
        finally:
            await player.close()
            for p in pubs:
                await p.close()
            await carol.close()
            await dave.close()

    run(go(), TEST_TIMEOUT)


async def recvonly_offer():
    pc = peer_connection()
    pc.addTransceiver("video", direction="recvonly")
    await pc.setLocalDescription(await pc.createOffer())
    sdp = pc.localDescription.sdp
    await pc.close()
    return sdp


def test_refusals_have_documented_statuses_and_bodies(server):
    sdp = run(recvonly_offer()).encode()
    room = "whep-refuse"
    path = f"/v1/rooms/{room}/whep"
    before = server.metric("atrium_whep_sessions")

    def post(token, body=sdp, content_type="application/sdp"):
        h = {"Content-Type": content_type}
        if token:
            h["Authorization"] = f"Bearer {token}"
        return http_call(server.port, "POST", path, body, h)

    status, _, body = post(None)
    assert status == 401 and error_of(body) == "missing_token"
    no_subscribe = mint_jwt(server, "fan", {"room": room, "roomJoin": True, "canSubscribe": False})
    status, _, body = post(no_subscribe)
    assert status == 403 and error_of(body) == "not_allowed"
    tok = mint(server, room, "fan")
    status, _, body = post(tok, content_type="text/plain")
    assert status == 415 and error_of(body) == "unsupported_media_type"
    status, _, body = post(tok, body=b"not sdp")
    assert status == 400 and error_of(body) == "invalid_sdp"
    sendonly = sdp.replace(b"a=recvonly", b"a=sendonly")
    status, _, body = post(tok, body=sendonly)
    assert status == 400 and error_of(body) == "sdp_unsupported"
    status, _, body = http_call(server.port, "DELETE", f"{path}/nope", b"", {"Authorization": f"Bearer {tok}"})
    assert status == 404 and error_of(body) == "session_not_found"
    status, h, _ = http_call(server.port, "OPTIONS", path)
    assert status == 204 and h["allow"] == "POST, OPTIONS"
    # Nothing half-open is left behind.
    assert server.metric("atrium_whep_sessions") == before
