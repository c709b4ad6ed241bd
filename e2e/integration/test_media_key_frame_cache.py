"""The key-frame cache end to end (docs/protocol.md §14, "The key-frame cache"): late viewers
of a static screen share start from the server's copy of the current picture, not from a key frame
asked of the sharer.

The sharer is an aiortc publisher whose screen sender acts on no key-frame request (PLI, FIR) and no
REMB (`ignore_key_frame_requests` in media_peer.py: aiortc's VP8 encoder would start again, with a
key frame, when REMB moves its target; its own periodic key frames come every 3000 frames, 200 s at
15 fps), so it sends one key frame, at the start, and the worker counts at the sender that it sent
exactly one. A viewer that gets a picture can only have got it from the cache; with the cache off
(`--key-frame-cache-bytes 0`) the same late viewer gets nothing, which proves the premise, and a
picture older than `--key-frame-cache-seconds` is not served.

Timing is printed; FIRST_FRAME_BOUND is only a hang guard (a cache start takes a fraction of a
second). bench/late_join.py measures it.

The join times matter only against the age limit (the cache holds the key frame and every delta
since; how long a static share stays servable is a matter of its bounds, tested in memory in
KeyFrameCacheTests): bench/late_join.py joins viewers over a longer share.

Runs alone with `python3 -m pytest -q -s e2e/integration/test_media_key_frame_cache.py`.
"""
import asyncio
import os
import time

import pytest

from conftest import MEDIA_ARGS, Server, stopped_cleanly
from test_media import run_in_room, sample_of, snapshot_after, wait_metric_above, wait_sent

JOIN_DELAYS = (2, 5, 10)        # seconds after the share's first packet
AGE_LIMIT = 3                   # --key-frame-cache-seconds of the age-limit test
BURST = 20                      # viewers joining within one second after the last late one
FIRST_FRAME_BOUND = 30.0        # a hang guard for a late viewer's first decoded frame
BURST_BOUND = 30.0              # the same for each of the burst's viewers (20 handshakes at once)
SCENARIO_TIMEOUT = 200


@pytest.fixture(scope="module")
def no_cache_server(tmp_path_factory):
    s = Server(os.path.join(tmp_path_factory.mktemp("nocache"), "data"), *MEDIA_ARGS,
               "--key-frame-cache-bytes", "0").start()
    yield s
    stopped_cleanly(s)


@pytest.fixture(scope="module")
def short_age_server(tmp_path_factory):
    s = Server(os.path.join(tmp_path_factory.mktemp("shortage"), "data"), *MEDIA_ARGS,
               "--key-frame-cache-seconds", str(AGE_LIMIT)).start()
    yield s
    stopped_cleanly(s)


class Counters:
    """The server's key-frame figures for one track, from one snapshot."""

    def __init__(self, text, track_id):
        self.served = sample_of(text, "atrium_media_key_frame_cache_starts_total", result="served")
        self.missed = sample_of(text, "atrium_media_key_frame_cache_starts_total", result="missed")
        self.plis = sample_of(text, "atrium_media_track_plis_sent_total", track=track_id)
        self.cache_starts = sample_of(text, "atrium_media_first_frame_seconds_count", source="cache")
        self.cached_bytes = sample_of(text, "atrium_media_track_key_frame_cache_bytes", track=track_id)
        self.width = sample_of(text, "atrium_media_track_frame_width", track=track_id)
        self.height = sample_of(text, "atrium_media_track_frame_height", track=track_id)
        self.fps = sample_of(text, "atrium_media_track_frames_per_second", track=track_id)

    def __repr__(self):
        return (f"served {self.served:g}, missed {self.missed:g}, PLIs sent {self.plis:g}, "
                f"first frames from cache {self.cache_starts:g}, cached {self.cached_bytes:g} B, "
                f"{self.width:g}x{self.height:g} at {self.fps:g} fps")


async def counters(server, track_id):
    """The figures from a snapshot the media worker took after this call (the share's bytes received,
    which change every second, show its refreshes)."""
    return Counters(await snapshot_after(server, track_id), track_id)


async def start_static_share(s, server):
    """The sharer: one screen share, its sender deaf to key-frame requests. Returns (publisher,
    track id, time of its first packet)."""
    sharer = await s.join("sharer")
    pub = await s.publish(sharer, ["screen_share"], ignore_key_frame_requests=["screen_share"])
    screen = pub.track_id("screen_share")
    assert screen is not None, pub.rejected
    await wait_sent(pub, "screen_share", 1, timeout=10)
    started = time.monotonic()
    stats = await pub.stats()
    assert stats["ignoringKeyFrameRequests"] == ["screen_share"], stats
    return pub, screen, started


async def watch(s, identity, track_id, bound):
    """A viewer that joins now (and so subscribes to the share) and decodes its first frame within
    `bound` seconds; returns (viewer, seconds from the join to that frame)."""
    joined_at = time.monotonic()
    client = await s.join(identity)
    sub = s.subscribe(client)
    await sub.wait_frames([track_id], 1, timeout=bound)
    return sub, sub.by_track(track_id).first_frame_at - joined_at


def assert_shows_the_share(sub, track_id):
    st = sub.by_track(track_id)
    assert st.first_class == "screen_share", f"first frame: {st.first_class}; {sub.describe()}"
    assert st.mismatched == 0 and st.classes["screen_share"] >= 0.9 * st.frames, sub.describe()


def test_late_viewers_of_a_static_share_start_from_the_cache(media_server):
    """Viewers joining 2, 5 and 10 s into a share whose sharer sent one key frame each decode the
    share at once, served from the cache without a key-frame request; then 20 viewers joining
    within one second cause at most one request."""
    async def scenario(s):
        pub, screen, started = await start_static_share(s, media_server)
        figures = []
        for delay in JOIN_DELAYS:
            await asyncio.sleep(max(0.0, started + delay - time.monotonic()))
            before = await counters(media_server, screen)
            sub, seconds = await watch(s, f"late-{delay}", screen, FIRST_FRAME_BOUND)
            await sub.wait_frames([screen], 5, timeout=5)
            assert_shows_the_share(sub, screen)
            await wait_metric_above(media_server, before.served, "atrium_media_key_frame_cache_starts_total",
                                    result="served")
            after = await counters(media_server, screen)
            print(f"viewer joining {delay} s into the share: first share frame decoded {seconds:.3f} s "
                  f"after its join; server: {after}")
            figures.append(seconds)
            assert after.served == before.served + 1, (before, after)
            assert after.missed == before.missed, (before, after)
            assert after.cache_starts == before.cache_starts + 1, (before, after)
            assert after.plis == before.plis, f"a key frame was asked for: {before} -> {after}"

        # Twenty viewers within one second.
        before = await counters(media_server, screen)
        requests_before = (await pub.stats())["keyFrameRequests"]["screen_share"]

        async def one(i):
            await asyncio.sleep(i / BURST)
            return await watch(s, f"burst-{i}", screen, BURST_BOUND)
        burst = await asyncio.gather(*(one(i) for i in range(BURST)))
        for sub, _ in burst:
            await sub.wait_frames([screen], 3, timeout=10)
            assert_shows_the_share(sub, screen)
        after = await counters(media_server, screen)
        stats = await pub.stats()
        requests = stats["keyFrameRequests"]["screen_share"] - requests_before
        times = sorted(seconds for _, seconds in burst)
        print(f"{BURST} viewers joining within 1 s: first share frame {times[0]:.3f} s (fastest), "
              f"{times[len(times) // 2]:.3f} s (median), {times[-1]:.3f} s (slowest) after their joins; "
              f"PLIs the server sent for the track {after.plis - before.plis:g}, key-frame requests the "
              f"sharer got {requests}; server: {after}")
        assert after.served == before.served + BURST, (before, after)
        assert after.plis - before.plis <= 1, (before, after)
        assert requests <= 1, stats

        # The premise: one key frame in all, and none of the requests the sharer got was acted on.
        assert stats["keyFramesSent"]["screen_share"] == 1, stats
        print(f"sharer: {stats['keyFramesSent']['screen_share']} key frame sent, "
              f"{stats['keyFrameRequests']['screen_share']} key-frame requests received and ignored, "
              f"{stats['sent']['screen_share']} packets sent")

    run_in_room(media_server, "cache-late-join", scenario, SCENARIO_TIMEOUT)


async def ignored_twice(pub):
    """Waits until the sharer has ignored two more key-frame requests (the server asks again a second
    later while a viewer still waits)."""
    requests0 = (await pub.stats())["keyFrameRequests"]["screen_share"]
    deadline = time.monotonic() + 60
    while (await pub.stats())["keyFrameRequests"]["screen_share"] < requests0 + 2:
        assert time.monotonic() < deadline, "the server did not ask the sharer for a key frame twice"
        await asyncio.sleep(0.2)


def test_a_picture_older_than_the_age_limit_is_not_served(short_age_server):
    """`--key-frame-cache-seconds 3`: a viewer joining after the limit finds a picture cached (its
    key frame too old) and is not served from it (a miss); the server asks the sharer instead, and
    this sharer, deaf to requests, leaves it without a picture. (That a younger picture is served is
    the test above's.)"""
    async def scenario(s):
        pub, screen, started = await start_static_share(s, short_age_server)
        await asyncio.sleep(max(0.0, started + AGE_LIMIT + 1.5 - time.monotonic()))
        before = await counters(short_age_server, screen)
        assert before.cached_bytes > 0, f"premise: a picture is cached, only too old: {before}"
        late = s.subscribe(await s.join("past-the-limit"))
        await ignored_twice(pub)
        after = await counters(short_age_server, screen)
        st = late.by_track(screen)
        print(f"past the age limit: the late viewer decoded {st.frames if st else 0} frames; server: {after}")
        assert st is not None and st.frames == 0, late.describe()
        assert after.missed > before.missed and after.served == before.served, (before, after)
        assert after.plis > before.plis, f"the server asked for no key frame: {before} -> {after}"
        assert (await pub.stats())["keyFramesSent"]["screen_share"] == 1

    run_in_room(short_age_server, "cache-age-limit", scenario, 90)


def test_without_the_cache_the_same_late_viewer_gets_no_frame(no_cache_server):
    """`--key-frame-cache-bytes 0`: the server can only ask the sharer for a key frame, which this
    sharer never sends, so a viewer joining 5 s into the share decodes nothing within the bound the
    cache met above."""
    async def scenario(s):
        pub, screen, started = await start_static_share(s, no_cache_server)
        await asyncio.sleep(max(0.0, started + JOIN_DELAYS[0] - time.monotonic()))
        before = await counters(no_cache_server, screen)
        client = await s.join("late")
        sub = s.subscribe(client)
        # Until the sharer has ignored two requests made for this viewer: it got nothing meanwhile.
        await ignored_twice(pub)
        after = await counters(no_cache_server, screen)
        stats = await pub.stats()
        st = sub.by_track(screen)
        print(f"no cache: after two ignored requests the late viewer decoded {st.frames if st else 0} frames "
              f"({st.rtp_packets if st else 0} RTP packets); PLIs the server sent {after.plis - before.plis:g}; "
              f"sharer: {stats['keyFramesSent']['screen_share']} key frame sent, "
              f"{stats['keyFrameRequests']['screen_share']} requests received and ignored")
        assert st is not None and st.frames == 0, sub.describe()
        assert after.served == before.served and after.cache_starts == before.cache_starts, (before, after)
        assert after.plis > before.plis, f"the server asked for no key frame: {before} -> {after}"
        assert stats["keyFrameRequests"]["screen_share"] > 0 and stats["keyFramesSent"]["screen_share"] == 1, stats

    run_in_room(no_cache_server, "no-cache-late-join", scenario, 90)
