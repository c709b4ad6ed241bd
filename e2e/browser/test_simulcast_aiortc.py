"""A Chromium publisher's simulcast received through Atrium by an aiortc subscriber.

aiortc cannot send simulcast, so the publisher is Chromium (the JavaScript client publishing the
1280x720 canvas of test_simulcast.py); the subscriber is the integration suite's aiortc harness
(e2e/integration/media_peer.py, signal_client.py), which decodes every frame. Each decoded frame is
classified by its size and by the canvas's colours (blue left, yellow right), so the test proves
which layer arrives and that it is the publisher's picture. It runs here, not in e2e/integration,
because Chromium must run in the loopback-only network namespace of the browser tests:

    unshare -n -- sh -c 'ip link set lo up && python3 -m pytest e2e/browser/test_simulcast_aiortc.py'
"""
import asyncio
import os
import sys
import time

import pytest

from test_simulcast import LEFT_RGB, RIGHT_RGB, connect, near, open_page, publish_canvas

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
import media_peer  # noqa: E402  (after the path above)
import signal_client  # noqa: E402  (after the path above)


def classify_canvas(frame):
    """`WIDTHxHEIGHT` of a decoded frame, with `-canvas` when it shows the publisher's canvas (the mean
    colours of its left and right parts, above the marker band)."""
    rgb = frame.to_ndarray(format="rgb24")[::8, ::8]
    h, w = rgb.shape[0], rgb.shape[1]
    band = rgb[int(h * 0.1):int(h * 0.8)]
    left = band[:, int(w * 0.05):int(w * 0.45)].reshape(-1, 3).mean(axis=0)
    right = band[:, int(w * 0.55):int(w * 0.95)].reshape(-1, 3).mean(axis=0)
    canvas = near(left, LEFT_RGB) and near(right, RIGHT_RGB)
    return f"{frame.width}x{frame.height}{'-canvas' if canvas else ''}"


def test_aiortc_subscriber_receives_chromium_simulcast(dev_server, browsers, artifacts, monkeypatch):
    """Chromium publishes the canvas camera as q/h/f; an aiortc subscriber at quality high decodes
    1280x720 frames of the canvas, switched to low it decodes 320x180 ones, to medium 640x360."""
    monkeypatch.setattr(media_peer, "classify_video", classify_canvas)
    base = f"http://127.0.0.1:{dev_server.port}"
    room = "aiortc-simulcast"
    pub = browsers("pub")
    open_page(pub, base)
    connect(pub, room, "alice", "host")
    track = publish_canvas(pub, "alice")["trackId"]

    async def scenario():
        bob = await signal_client.joined(dev_server, "bob", room=room)
        sub = media_peer.Subscriber(bob)
        try:
            async def layer(label, timeout, count=20):
                """Waits until `count` more frames of that class have been decoded; returns the counts."""
                await sub.wait_until(lambda: sub.by_track(track) is not None, "the camera track", 20)
                start = sub.by_track(track).classes[label]
                await sub.wait_until(lambda: sub.by_track(track).classes[label] >= start + count,
                                     f"{count} frames classified {label}", timeout)
                return dict(sub.by_track(track).classes)

            high = await layer("1280x720-canvas", 60)
            print(f"high: {high}")
            await bob.request("subscribe", trackId=track, quality="low")
            low = await layer("320x180-canvas", 20)
            print(f"low: {low}")
            await bob.request("subscribe", trackId=track, quality="medium")
            medium = await layer("640x360-canvas", 20)
            print(f"medium: {medium}")
            st = sub.by_track(track)
            # Every frame is the canvas at one of the three layer sizes.
            others = {k: n for k, n in st.classes.items() if not k.endswith("-canvas")}
            assert not others, f"frames that are not the canvas at a layer's size: {st.classes}"
            assert set(st.classes) <= {"320x180-canvas", "640x360-canvas", "1280x720-canvas"}, st.classes
        finally:
            await sub.close()
            await bob.close()

    t0 = time.time()
    asyncio.run(asyncio.wait_for(scenario(), 150))
    print(f"took {time.time() - t0:.1f} s")
