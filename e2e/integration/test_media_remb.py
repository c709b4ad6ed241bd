"""A viewer that offers only REMB ("REMB from a subscriber is used where it is all the
subscriber offers"). aiortc answers the server's subscriber offer with `goog-remb` and the
abs-send-time extension and without `transport-cc` (it implements no transport-wide feedback), and
sends one REMB per received track from its receive-side estimator. Its REMBs, added up over their
SSRCs, are its connection's estimate, and the allocator fits its tracks into it: on an open loopback
link it is allocated every track (nothing paused) and keeps decoding both video tracks, each frame
classified by its content.
"""
import asyncio
import time

from test_media import assert_carries, metric, run_in_room


def test_a_remb_only_viewer_is_allocated_by_its_remb(media_server):
    sources = ["camera", "screen_share", "microphone"]

    async def scenario(s):
        alice = await s.join("alice")
        bob = await s.join("bob")
        sub = s.subscribe(bob)
        pub = await s.publish(alice, sources)
        ids = {src: pub.track_id(src) for src in sources}
        video = [ids["camera"], ids["screen_share"]]
        await sub.wait_frames(video, 30, timeout=15)
        label = f"{bob.participant_id}/sub"
        # The estimate is bob's REMB, and the allocator ran on it: allocated bits for his connection,
        # every track allocated, none paused.
        deadline = time.monotonic() + 15
        while True:
            estimate = await metric(media_server, "atrium_media_transport_estimate_bits", transport=label)
            allocated = await metric(media_server, "atrium_media_transport_allocated_bits", transport=label)
            wanted = await metric(media_server, "atrium_media_transport_wanted_bits", transport=label)
            paused = await metric(media_server, "atrium_media_transport_paused_tracks", transport=label)
            if estimate > 0 and allocated > 0 and allocated >= 0.9 * wanted and paused == 0:
                break
            assert time.monotonic() < deadline, (
                f"bob's REMB did not drive an allocation: estimate {estimate}, allocated {allocated}, "
                f"wanted {wanted}, paused {paused}")
            await asyncio.sleep(0.5)
        print(f"bob (REMB only): estimate {estimate:.0f}, allocated {allocated:.0f} of {wanted:.0f}")
        await sub.wait_more_frames(video, 30, timeout=10)
        assert_carries(sub, ids, alice.participant_id)

    run_in_room(media_server, "media-remb", scenario)
