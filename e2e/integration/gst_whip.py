"""A WHIP publisher built on GStreamer's webrtcbin (Debian's gstreamer1.0-plugins-bad, driven through
python3-gst-1.0, so run with Debian's /usr/bin/python3): a third-party WebRTC stack publishing a solid
colour picture. Debian 12's `simple-whip-client` (the same webrtcbin) cannot run: it links libsoup2 while
the GStreamer 1.22 webrtc and nice plugins load libsoup3, and libsoup aborts on the mix.

    /usr/bin/python3 gst_whip.py URL TOKEN [--color 0xffff00ff] [--width 1280] [--height 720]

Gathers its candidates, POSTs the offer (no trickle) and applies the answer. Prints JSON lines:
{"event": "published", "status": 201, "location", "etag"}, or {"event": "refused", "status", "body"};
then runs until a line "stop" (or the end) on stdin, sends DELETE and prints {"event": "deleted", "status"}.
"""
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstWebRTC", "1.0")
gi.require_version("GstSdp", "1.0")
from gi.repository import GLib, Gst, GstSdp, GstWebRTC  # noqa: E402


def say(**fields):
    print(json.dumps(fields), flush=True)


def main():
    args = sys.argv[1:]
    url, token = args[0], args[1]
    opts = dict(zip(args[2::2], args[3::2]))
    color = opts.get("--color", "0xffff00ff")
    width, height = opts.get("--width", "1280"), opts.get("--height", "720")
    Gst.init(None)
    pipe = Gst.parse_launch(
        "webrtcbin name=w bundle-policy=max-bundle "
        f"videotestsrc is-live=true pattern=solid-color foreground-color={color} "
        f"! video/x-raw,width={width},height={height},framerate=15/1 ! videoconvert "
        "! vp8enc deadline=1 target-bitrate=600000 keyframe-max-dist=30 ! rtpvp8pay pt=96 "
        "! application/x-rtp,media=video,encoding-name=VP8,payload=96 ! w.")
    w = pipe.get_by_name("w")
    loop = GLib.MainLoop()
    state = {"location": None, "posted": False}

    def post(sdp):
        # CLOCK_MONOTONIC is the machine's: a parent process compares it with its own readings.
        say(event="posting", monotonic=time.monotonic(), wall=time.time())
        req = urllib.request.Request(url, data=sdp.encode(), method="POST", headers={
            "Content-Type": "application/sdp", "Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                answer = r.read().decode()
                state["location"] = urllib.parse.urljoin(url, r.headers["Location"])
                say(event="published", status=r.status, location=state["location"], etag=r.headers["ETag"],
                    links=r.headers.get_all("Link") or [])
        except urllib.error.HTTPError as e:
            say(event="refused", status=e.code, body=e.read().decode(), type=e.headers.get("Content-Type"))
            loop.quit()
            return
        if os.environ.get("WHIP_DEBUG"):
            print(answer, file=sys.stderr, flush=True)
        _, msg = GstSdp.SDPMessage.new_from_text(answer)
        desc = GstWebRTC.WebRTCSessionDescription.new(GstWebRTC.WebRTCSDPType.ANSWER, msg)
        w.emit("set-remote-description", desc, Gst.Promise.new())

    def gathered(element, _pspec):
        if element.get_property("ice-gathering-state") != GstWebRTC.WebRTCICEGatheringState.COMPLETE:
            return
        if state["posted"]:
            return
        state["posted"] = True
        post(element.get_property("local-description").sdp.as_text())

    def on_offer(promise, element, _):
        reply = promise.get_reply()
        offer = reply.get_value("offer") if reply is not None and reply.has_field("offer") else None
        if offer is None:
            # An early negotiation before the caps are known: the next one offers.
            say(event="retry", reason=reply.to_string() if reply is not None else "no reply")
            return
        element.emit("set-local-description", offer, Gst.Promise.new())

    def negotiate(element):
        element.emit("create-offer", None, Gst.Promise.new_with_change_func(on_offer, element, None))

    w.connect("on-negotiation-needed", negotiate)
    w.connect("notify::ice-gathering-state", gathered)

    def stdin():
        for line in sys.stdin:
            if line.strip() == "stop":
                break
        GLib.idle_add(stop)

    def stop():
        if state["location"]:
            req = urllib.request.Request(state["location"], method="DELETE",
                                         headers={"Authorization": f"Bearer {token}"})
            try:
                with urllib.request.urlopen(req, timeout=10) as r:
                    say(event="deleted", status=r.status)
            except urllib.error.HTTPError as e:
                say(event="deleted", status=e.code, body=e.read().decode())
        loop.quit()
        return False

    threading.Thread(target=stdin, daemon=True).start()
    pipe.set_state(Gst.State.PLAYING)
    loop.run()
    pipe.set_state(Gst.State.NULL)


if __name__ == "__main__":
    main()
