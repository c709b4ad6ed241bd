"""A long meeting: every track that ends leaves an inactive section in the subscriber connection
(JSEP keeps them). Past 24 of them the server starts a new subscriber connection (`reset`) carrying
the live tracks only, and media flows on it."""
import re

from test_media import run_in_room


def sections(sdp):
    return len(re.findall(r"^m=", sdp, re.M))


def test_ended_sections_are_bounded_by_a_new_connection(media_server):
    async def scenario(s):
        _, bob, sub, _, camera = await s.camera_flowing(10)

        # Each unsubscribe ends the camera's section; each subscribe adds a new one.
        for _ in range(25):
            await bob.request("unsubscribe", trackId=camera)
            await bob.request("subscribe", trackId=camera)
        await sub.wait_until(lambda: sub.resets == 1, "a reset offer", 20)
        await sub.wait_until(lambda: sub.tracks and sub.by_track(camera) in sub.tracks.values(),
                             "the camera on the new connection", 10)
        await sub.wait_more_frames([camera], 30, timeout=15)
        offers = [m for m in bob.log if m.get("type") == "subscriber_offer"]
        last = offers[-1]
        assert sections(last["sdp"]) < 5, sections(last["sdp"])
        assert any(m.get("reset") for m in offers)
        assert [t["trackId"] for t in last["tracks"]] == [camera]

    run_in_room(media_server, "media-reset", scenario)
