"""A moderator's mute holds in the media layer: the muted track's packets stop reaching subscribers even
when the publisher's client ignores the mute and keeps sending (aiortc does), and they flow again once
the owner unmutes."""
import asyncio
import time

from test_media import metric, metrics_text, run_in_room, sample_of


async def paused_drops_above(server, floor, timeout=30):
    """A /metrics text in which the worker has dropped more than `floor` packets of paused (muted)
    tracks; `timeout` is a hang guard."""
    deadline = time.monotonic() + timeout
    while sample_of(text := await metrics_text(server), "atrium_media_dropped_packets_total", reason="paused") <= floor:
        assert time.monotonic() < deadline, f"no more than {floor} packets of paused tracks dropped in {timeout} s"
        await asyncio.sleep(0.1)
    return text


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
        # Nothing more is forwarded: from a snapshot in which the mute already drops alice's packets to
        # one taken after 30 more were dropped, the track sent nothing and the subscriber's count stood
        # still (a frame in flight may land).
        muted = await paused_drops_above(media_server, paused_before + 20)
        frozen = sub.by_track(camera).frames
        later = await paused_drops_above(media_server, sample_of(muted, "atrium_media_dropped_packets_total",
                                                                 reason="paused") + 30)
        assert sub.by_track(camera).frames <= frozen + 1, sub.describe()
        received, sent = ([sample_of(text, "atrium_media_track_packets_total", track=camera, direction=d)
                           for text in (muted, later)] for d in ("in", "out"))
        assert received[1] > received[0] and sent[0] == sent[1], (received, sent)

        # The owner unmutes: forwarding resumes on a key frame the server asks for.
        await alice.request("mute", trackId=camera, muted=False)
        await sub.wait_more_frames([camera], 30, timeout=10)

    run_in_room(media_server, "media-mute", scenario)
