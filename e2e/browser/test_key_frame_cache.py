"""The key-frame cache with a browser viewer (docs/protocol.md §14, "The key-frame cache"; issue 13):
headless Chromium opening the meeting page joins a screen share that has been running for a while and
decodes it, although the sharer sent its only key frame before the viewer came.

The sharer is an aiortc publisher from the integration harness (e2e/integration/media_peer.py) whose
screen sender acts on no PLI, FIR or REMB (`ignore_key_frame_requests`): Chromium as a sharer cannot
be made to ignore them. Its asyncio side runs on an event loop in a thread of its own, next to
selenium's blocking calls.

Run inside a loopback-only network namespace (see conftest.py):

    unshare -n -- sh -c 'ip link set lo up && python3 -m pytest e2e/browser/test_key_frame_cache.py'
"""
import asyncio
import os
import sys
import threading
import time

from test_meeting_page import SOURCE_PIXELS, VIDEO_STATS, join, near, tile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
from media_peer import SCREEN_MEAN, Publisher  # noqa: E402
from signal_client import joined  # noqa: E402

LATE = 5                # seconds into the share when the browser joins
FIRST_FRAME_BOUND = 20  # seconds from opening the page to a decoded share frame: loose on purpose


class Loop:
    """An asyncio event loop on a thread of its own; `call(coro)` runs a coroutine there and waits."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def call(self, coro, timeout=30):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def counter(server, name, **labels):
    status, _, body, _ = server.request("GET", "/metrics", token=None)
    assert status == 200, body
    total = 0.0
    for line in body.decode().splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        if all(f'{k}="{v}"' in line for k, v in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    return total


def test_a_browser_joining_a_running_share_decodes_it_from_the_cache(dev_server, browsers, artifacts):
    room = "cache-browser"
    status, _, body, _ = dev_server.request("POST", "/v1/rooms", {"name": room})
    assert status in (200, 201), body
    loop = Loop()
    opened = []
    try:
        async def share():
            c = await joined(dev_server, "sharer", room=room)
            c.start_keepalive(5)
            opened.append(c)
            pub = await Publisher.start(c, ["screen_share"], ignore_key_frame_requests=["screen_share"])
            opened.append(pub)
            deadline = time.monotonic() + 10
            while (await pub.stats())["sent"]["screen_share"] == 0:
                assert time.monotonic() < deadline, "the sharer sent nothing"
                await asyncio.sleep(0.1)
            return c, pub
        sharer_client, pub = loop.call(share())
        started = time.monotonic()
        time.sleep(max(0.0, started + LATE - time.monotonic()))
        served_before = counter(dev_server, "atrium_media_key_frame_cache_starts_total", result="served")
        plis_before = counter(dev_server, "atrium_media_track_plis_sent_total", track=pub.track_id("screen_share"))

        viewer = browsers("viewer")
        opened_at = time.monotonic()
        join(viewer, f"http://127.0.0.1:{dev_server.port}", room, "Viewer", "participant")
        deadline = opened_at + FIRST_FRAME_BOUND
        stats = {}
        while time.monotonic() < deadline:
            stats = viewer.js_async(VIDEO_STATS)
            if stats.get("screen_share", {}).get("frames", 0) > 0:
                break
            time.sleep(0.1)
        seconds = time.monotonic() - opened_at
        viewer.screenshot("late-viewer")
        screen = stats.get("screen_share", {})
        assert screen.get("frames", 0) > 0, f"no share frame decoded in {FIRST_FRAME_BOUND}s: {stats}"
        assert (screen["width"], screen["height"]) == (1280, 720), screen
        assert screen["trackId"] == pub.track_id("screen_share"), screen
        # What the stage shows is the share's picture: its stripes' mean colour (media_peer's screen).
        pid = sharer_client.participant_id
        shown = viewer.js_async(SOURCE_PIXELS, pid, 3, tile(pid) + " video")["screen_share"]
        shown.pop("png", None)
        assert shown["sameTrack"] and len(shown["frames"]) >= 3, shown
        for f in shown["frames"]:
            assert near(f["all"], [round(c) for c in SCREEN_MEAN], 40), f"not the share's picture: {f}"

        # The metrics snapshot is refreshed once a second: polled, with a hang guard.
        deadline = time.time() + 30
        while counter(dev_server, "atrium_media_key_frame_cache_starts_total", result="served") <= served_before:
            assert time.time() < deadline, "no viewer start from the cache was counted"
            time.sleep(0.3)
        served = counter(dev_server, "atrium_media_key_frame_cache_starts_total", result="served") - served_before
        plis = counter(dev_server, "atrium_media_track_plis_sent_total", track=pub.track_id("screen_share")) - plis_before
        sharer = loop.call(pub.stats())
        print(f"browser viewer joining {LATE} s into the share: framesDecoded > 0 {seconds:.2f} s after opening the "
              f"page; cache starts served {served:g}, PLIs sent {plis:g}; sharer: "
              f"{sharer['keyFramesSent']['screen_share']} key frame sent, "
              f"{sharer['keyFrameRequests']['screen_share']} requests received and ignored")
        assert served >= 1 and plis == 0, (served, plis)
        assert sharer["keyFramesSent"]["screen_share"] == 1, sharer
    finally:
        async def close():
            for x in reversed(opened):
                try:
                    await asyncio.wait_for(x.close(), 10)
                except Exception:
                    pass
        try:
            loop.call(close(), timeout=30)
        finally:
            loop.close()
