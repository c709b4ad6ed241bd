"""A WHIP publisher seen on the meeting page: GStreamer's webrtcbin (e2e/integration/gst_whip.py)
publishes a magenta picture into a room with one POST; a Chromium meeting page shows it on the share
stage, and the decoded pictures are magenta. libnice gathers no loopback candidate, so the test adds a
veth address inside this private namespace for the server and GStreamer; Chromium keeps to loopback.
The figure `whip_post_to_page_first_frame_ms` (wall clocks of the one machine: the POST, the stage's
first presented frame) is for `make bench`."""
import asyncio
import os
import subprocess
import sys
import time

from picture_sampler import PICTURE_SAMPLER
from test_meeting_page import join, wait_stage

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
from signal_client import mint  # noqa: E402
from whip_peer import GstWhip  # noqa: E402

VETH_ADDRESS = "10.9.1.1"


def wait_up(dev, timeout=10):
    """Until the link is up (its carrier too): the browser starts on a network that no longer changes."""
    deadline = time.monotonic() + timeout
    while "state UP" not in subprocess.run(["ip", "-o", "link", "show", "dev", dev], capture_output=True,
                                           text=True).stdout:
        assert time.monotonic() < deadline, f"{dev} did not come up"
        time.sleep(0.02)

# The wall-clock time (ms) the stage presents its first frame, watched from before the POST.
WATCH_FIRST_FRAME = """
window.__whipFirstFrame = null;
const watch = () => {
  const v = document.querySelector('[data-testid="stage-video"]');
  if (v && v.requestVideoFrameCallback) {
    v.requestVideoFrameCallback((now, meta) => {
      window.__whipFirstFrame = performance.timeOrigin + meta.presentationTime;
    });
  } else {
    setTimeout(watch, 5);
  }
};
watch();
"""

STAGE_COLOUR = PICTURE_SAMPLER + """
const video = document.querySelector('[data-testid="stage-video"]');
const s = await sampleFrames(video, 5, 5000, (meta, d, w, h) => ({all: meanColour(d, w, h, 0.1, 0.9, 0.1, 0.9)}));
return s.frames;
"""


def test_a_gstreamer_whip_share_plays_on_the_meeting_page(server_dir, browsers, artifacts, figures):
    from conftest import start_server
    subprocess.run(["ip", "link", "add", "wpage0", "type", "veth", "peer", "name", "wpage1"], check=True)
    server = pub = None
    try:
        subprocess.run(["ip", "addr", "add", f"{VETH_ADDRESS}/24", "dev", "wpage0"], check=True)
        for dev in ("wpage0", "wpage1"):
            # No IPv6 link-local address appearing a moment later: Chromium takes a new address for a
            # network change and stalls the page's requests in flight (a gate run saw the page's first
            # fetch hang).
            with open(f"/proc/sys/net/ipv6/conf/{dev}/disable_ipv6", "w") as f:
                f.write("1")
            subprocess.run(["ip", "link", "set", dev, "up"], check=True)
        wait_up("wpage0")
        server = start_server(server_dir, "--dev", "--auto-create-rooms", "any", "--media-bind", "0.0.0.0",
                              "--media-announce", f"127.0.0.1,{VETH_ADDRESS}")
        base = f"http://127.0.0.1:{server.port}"
        b = browsers("viewer")
        join(b, base, "whip-page", "Viewer", "participant")
        b.js(WATCH_FIRST_FRAME)
        loop = asyncio.new_event_loop()
        pub = loop.run_until_complete(GstWhip.start(f"{base}/v1/rooms/whip-page/whip",
                                                    mint(server, "whip-page", "obs", name="OBS")))
        e = loop.run_until_complete(pub.event())
        assert e["event"] == "published" and e["status"] == 201, e
        sharer = b.js("return [...window.atriumApp.room.participants.values()].find((p) => p.identity === 'obs')?.id")
        wait_stage(b, sharer, timeout=30)
        b.wait("return window.__whipFirstFrame !== null", 15, "the stage's first frame")
        first = b.js("return window.__whipFirstFrame")
        if pub.posted_wall:
            figures("whip_post_to_page_first_frame_ms", round(first - pub.posted_wall * 1000, 1), "ms", "measured")
        frames = b.js_async(STAGE_COLOUR)
        b.screenshot("whip-share")
        assert len(frames) >= 5, frames
        for f in frames:
            r, g, bl = f["all"]
            assert r > 170 and bl > 170 and g < 90, f"the stage does not show the magenta WHIP picture: {f}"
        d = loop.run_until_complete(pub.stop())
        assert d["status"] == 200, d
        b.wait("return document.querySelector('[data-testid=\"share-stage\"]').hidden", 15, "the stage to go")
        loop.run_until_complete(pub.close())
        loop.close()
        pub = None
    finally:
        if pub:
            pub.kill()
        if server:
            server.stop()
        subprocess.run(["ip", "link", "del", "wpage0"], check=False)
