"""A WHEP player built on GStreamer's webrtcbin (Debian's gstreamer1.0-plugins-bad, driven through
python3-gst-1.0, so run with Debian's /usr/bin/python3): a third-party WebRTC stack that plays a room.

    /usr/bin/python3 gst_whep.py URL TOKEN

Offers a receive-only VP8 video and Opus audio transceiver, POSTs the offer once its candidates are
gathered (no trickle) and applies the answer. Every decoded video frame is scaled down and classified
by its mean colour (the names media_peer.classify_video uses: "camera" red, "screen_share" the blue
and white stripes, "whip_magenta"), every second of audio by its pitch ("microphone" 440 Hz,
"screen_share_audio" 880 Hz). Prints JSON lines: {"event": "playing", "status": 201, "location"} or
{"event": "refused", "status", "body"}; {"event": "pad", "kind"} for each stream webrtcbin opens; every
second {"event": "stats", "video": {class: frames}, "audio": {class: seconds}}; on "stop" from stdin,
DELETE and {"event": "deleted", "status"}.
"""
import json
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstWebRTC", "1.0")
gi.require_version("GstSdp", "1.0")
gi.require_version("GstApp", "1.0")
from gi.repository import GLib, Gst, GstSdp, GstWebRTC  # noqa: E402

SMALL = (32, 18)      # frames are classified at this size: the patterns are flat or regular


def say(**fields):
    print(json.dumps(fields), flush=True)


def classify_rgb(data):
    n = len(data) // 3
    r = sum(data[0::3]) / n
    g = sum(data[1::3]) / n
    b = sum(data[2::3]) / n
    if r > 170 and b > 170 and g < 90:
        return "whip_magenta"
    if r > 170 and g < 90 and b < 90:
        return "camera"
    if b > 200 and 30 < r < 130 and 30 < g < 130:
        return "screen_share"
    return "unknown"


def classify_pitch(samples, rate):
    """samples: signed 16-bit mono values of about a second."""
    if not samples:
        return "silence"
    rms = (sum(s * s for s in samples[::4]) / len(samples[::4])) ** 0.5
    if rms < 500:
        return "silence"
    crossings = sum(1 for a, b in zip(samples, samples[1:]) if (a < 0) != (b < 0))
    hz = crossings / 2 / (len(samples) / rate)
    for name, f in (("microphone", 440), ("screen_share_audio", 880)):
        if abs(hz - f) < 30:
            return name
    return "unknown"


def main():
    url, token = sys.argv[1], sys.argv[2]
    Gst.init(None)
    pipe = Gst.Pipeline.new("player")
    w = Gst.ElementFactory.make("webrtcbin", "w")
    w.set_property("bundle-policy", GstWebRTC.WebRTCBundlePolicy.MAX_BUNDLE)
    pipe.add(w)
    loop = GLib.MainLoop()
    state = {"location": None, "posted": False}
    video, audio = {}, {}
    pcm = []

    def post(sdp):
        req = urllib.request.Request(url, data=sdp.encode(), method="POST", headers={
            "Content-Type": "application/sdp", "Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                answer = r.read().decode()
                state["location"] = urllib.parse.urljoin(url, r.headers["Location"])
                say(event="playing", status=r.status, location=state["location"])
        except urllib.error.HTTPError as e:
            say(event="refused", status=e.code, body=e.read().decode())
            loop.quit()
            return
        _, msg = GstSdp.SDPMessage.new_from_text(answer)
        desc = GstWebRTC.WebRTCSessionDescription.new(GstWebRTC.WebRTCSDPType.ANSWER, msg)
        w.emit("set-remote-description", desc, Gst.Promise.new())

    def gathered(element, _pspec):
        if element.get_property("ice-gathering-state") != GstWebRTC.WebRTCICEGatheringState.COMPLETE:
            return
        if not state["posted"]:
            state["posted"] = True
            post(element.get_property("local-description").sdp.as_text())

    def on_offer(promise, element, _):
        reply = promise.get_reply()
        offer = reply.get_value("offer") if reply is not None and reply.has_field("offer") else None
        if offer is not None:
            element.emit("set-local-description", offer, Gst.Promise.new())

    def negotiate(element):
        element.emit("create-offer", None, Gst.Promise.new_with_change_func(on_offer, element, None))

    def on_video_sample(sink):
        sample = sink.emit("pull-sample")
        ok, info = sample.get_buffer().map(Gst.MapFlags.READ)
        if ok:
            what = classify_rgb(bytes(info.data))
            video[what] = video.get(what, 0) + 1
            sample.get_buffer().unmap(info)
        return Gst.FlowReturn.OK

    def on_audio_sample(sink):
        sample = sink.emit("pull-sample")
        ok, info = sample.get_buffer().map(Gst.MapFlags.READ)
        if ok:
            data = bytes(info.data)
            pcm.extend(int.from_bytes(data[i:i + 2], "little", signed=True) for i in range(0, len(data) - 1, 2))
            sample.get_buffer().unmap(info)
            if len(pcm) >= 48000:
                what = classify_pitch(pcm[:48000], 48000)
                audio[what] = audio.get(what, 0) + 1
                del pcm[:]
        return Gst.FlowReturn.OK

    def on_pad(_element, pad):
        if pad.get_direction() != Gst.PadDirection.SRC:
            return
        kind = pad.get_current_caps().get_structure(0).get_string("media")
        say(event="pad", kind=kind)
        if kind == "video":
            chain = ("queue ! rtpvp8depay ! vp8dec ! videoconvert ! videoscale "
                     f"! video/x-raw,format=RGB,width={SMALL[0]},height={SMALL[1]} "
                     "! appsink name=sink emit-signals=true sync=false")
            callback = on_video_sample
        else:
            chain = ("queue ! rtpopusdepay ! opusdec ! audioconvert ! audioresample "
                     "! audio/x-raw,format=S16LE,channels=1,rate=48000 ! appsink name=sink emit-signals=true sync=false")
            callback = on_audio_sample
        bin_ = Gst.parse_bin_from_description(chain, True)
        pipe.add(bin_)
        sink = bin_.get_by_name("sink")
        sink.connect("new-sample", callback)
        bin_.sync_state_with_parent()
        pad.link(bin_.get_static_pad("sink"))

    def report():
        say(event="stats", video=dict(video), audio=dict(audio))
        return True

    for caps in ("application/x-rtp,media=video,encoding-name=VP8,payload=96,clock-rate=90000",
                 "application/x-rtp,media=audio,encoding-name=OPUS,payload=111,clock-rate=48000"):
        w.emit("add-transceiver", GstWebRTC.WebRTCRTPTransceiverDirection.RECVONLY, Gst.Caps.from_string(caps))
    w.connect("on-negotiation-needed", negotiate)
    w.connect("notify::ice-gathering-state", gathered)
    w.connect("pad-added", on_pad)

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
    GLib.timeout_add(1000, report)
    pipe.set_state(Gst.State.PLAYING)
    loop.run()
    pipe.set_state(Gst.State.NULL)


if __name__ == "__main__":
    main()
