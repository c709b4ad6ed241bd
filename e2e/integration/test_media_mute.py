"""A moderator's mute holds in the media layer: the muted track's packets stop reaching subscribers even
when the publisher's client ignores the mute and keeps sending (aiortc does), and they flow again once
the owner unmutes."""
import asyncio

from test_media import metric, run_in_room, wait_metric_above


def test_a_muted_camera_is_not_forwarded_until_unmuted(media_server):
    async def scenario(s):
        host = await s.join("host", role="host")
        alice = await s.join("alice")
        sub = s.subscribe(host)
        pub = await s.publish(alice, ["camera"])
        camera = pub.track_id("camera")
        await sub.wait_frames([camera], 30, timeout=10)

        paused_before = await metric(media_server, "atrium_media_dropped_packets_total", reason="paused")
        await host.request("mute_participant", trackId=camera)
        await alice.expect("track_muted", lambda m: m["trackId"] == camera and m["muted"])
        await wait_metric_above(media_server, paused_before + 20, "atrium_media_dropped_packets_total",
                                reason="paused")
        # Nothing more is forwarded: the subscriber's count stands still (a frame in flight may land).
        await asyncio.sleep(0.5)
        frozen = sub.by_track(camera).frames
        await asyncio.sleep(1.5)
        assert sub.by_track(camera).frames <= frozen + 1, sub.describe()
        out = await metric(media_server, "atrium_media_track_packets_total", track=camera, direction="out")
        await asyncio.sleep(1)
        assert await metric(media_server, "atrium_media_track_packets_total", track=camera, direction="out") == out

        # The owner unmutes: forwarding resumes on a key frame the server asks for.
        await alice.request("mute", trackId=camera, muted=False)
        await sub.wait_more_frames([camera], 30, timeout=10)

    run_in_room(media_server, "media-mute", scenario)
