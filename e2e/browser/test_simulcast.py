"""Simulcast through Atrium in headless Chromium (issue 11): the JavaScript client (clients/js/atrium.js)
publishes a camera as three layers and a screen share as two, viewers choose their layer with
`setQuality` (`subscribe` with `quality`) and `setViewport` (`set_viewport`), and the publisher turns off
the encodings nobody needs when the server says so (`layers_wanted`).

The pages use the SDK directly: each browser opens the meeting page's join screen (the same origin
as /sdk/atrium.js and /dev/token) and connects its own `Room`s from a script. The publisher's camera
is a 1280x720 canvas (`captureStream`) drawn with a pattern the viewers check on their decoded
pictures: blue on the left, yellow on the right, and a white marker moving along a black band at the
bottom, so each picture is a new frame and shows that it came from this canvas (Chromium's fake camera
and screen are green test patterns).

Run inside a loopback-only network namespace (see conftest.py):

    unshare -n -- sh -c 'ip link set lo up && python3 -m pytest e2e/browser/test_simulcast.py'

Time bounds are loose (a loaded 2-core machine) except where the time is the point: a viewer's change
of quality shows in its decoded size within 2 s.
"""
import json
import time

LEFT_RGB = (0, 0, 255)
RIGHT_RGB = (255, 255, 0)

# Connects one Room from the page (a dev token from /dev/token) and keeps it as window.peers[name],
# with a log of the `layers_wanted` pushes it received.
CONNECT = """
const [room, name, role, options] = arguments;
const { Room } = await import("/sdk/atrium.js");
const q = new URLSearchParams({room, name, role, identity: name});
const r = await fetch(`/dev/token?${q}`, {cache: "no-store"});
const {token} = await r.json();
const peer = await Room.connect(`ws://${location.host}/v1/signal`, token, {name, ...(options || {})});
window.peers = window.peers || {};
window.peers[name] = peer;
peer.layersLog = [];
peer.addEventListener("layers_wanted", (e) => peer.layersLog.push({t: performance.now(), ...e.detail}));
return peer.me.id;
"""

# Publishes a 1280x720 canvas as the camera of window.peers[name]: blue left half, yellow right half,
# a white marker moving along a black band (the bottom tenth). Returns the track id and the layers the
# server recorded.
PUBLISH_CANVAS = """
const [name, options] = arguments;
const peer = window.peers[name];
const canvas = document.createElement("canvas");
canvas.width = 1280; canvas.height = 720;
const g = canvas.getContext("2d");
let n = 0;
const draw = () => {
  g.fillStyle = "rgb(0,0,255)"; g.fillRect(0, 0, 640, 648);
  g.fillStyle = "rgb(255,255,0)"; g.fillRect(640, 0, 640, 648);
  g.fillStyle = "#000"; g.fillRect(0, 648, 1280, 72);
  g.fillStyle = "#fff"; g.fillRect((n * 24) % 1216, 652, 64, 64);
  n++;
};
draw();
window.canvasTimer = setInterval(draw, 33);
const track = canvas.captureStream(30).getVideoTracks()[0];
const local = await peer.publishTrack(track, "camera", options || {});
const published = peer.me.tracks.find((t) => t.id === local.trackId);
return {trackId: local.trackId, layers: published ? published.layers : null, settings: track.getSettings()};
"""

# The publisher's view of one track: its sender's encodings and the outbound-rtp statistics by rid.
SENDER_STATE = """
const [name, trackId] = arguments;
const peer = window.peers[name];
const transceiver = peer._transceiverOf(trackId);
const p = transceiver.sender.getParameters();
const out = {encodings: p.encodings.map((e) => ({rid: e.rid ?? null, active: e.active,
                                                 scale: e.scaleResolutionDownBy ?? null,
                                                 maxBitrate: e.maxBitrate ?? null,
                                                 maxFramerate: e.maxFramerate ?? null})),
             degradationPreference: p.degradationPreference ?? null,
             contentHint: transceiver.sender.track ? transceiver.sender.track.contentHint : null,
             outbound: {}};
(await transceiver.sender.getStats()).forEach((s) => {
  if (s.type !== "outbound-rtp") return;
  out.outbound[s.rid ?? "-"] = {frames: s.framesEncoded || 0, bytes: s.bytesSent || 0,
                                width: s.frameWidth || 0, height: s.frameHeight || 0,
                                active: s.active ?? null, limitation: s.qualityLimitationReason ?? null};
});
return out;
"""

# A viewer's inbound video statistics by track id: decoded size, frames, freezes.
INBOUND = """
const [name] = arguments;
const peer = window.peers[name];
const out = {};
if (!peer.subscriber) return out;
const byMid = new Map(peer.remoteTracks.map((t) => [t.mid, t]));
(await peer.subscriber.getStats()).forEach((s) => {
  if (s.type !== "inbound-rtp" || s.kind !== "video") return;
  const t = byMid.get(s.mid);
  if (!t) return;
  out[t.trackId] = {width: s.frameWidth || 0, height: s.frameHeight || 0, frames: s.framesDecoded || 0,
                    freezes: s.freezeCount || 0, fps: s.framesPerSecond || 0, t: performance.now()};
});
return out;
"""

# Draws `count` distinct decoded frames of a viewer's received track into a canvas and returns the mean
# colour of its left and right parts (above the marker band), with the picture's size; the last frame
# comes back as a PNG data URL.
PIXELS = """
const [name, trackId, count] = arguments;
const peer = window.peers[name];
const remote = peer.remoteTracks.find((t) => t.trackId === trackId);
if (!remote) return {error: "no such remote track"};
const video = document.createElement("video");
video.muted = true; video.playsInline = true;
video.style.cssText = "position:fixed;left:0;top:0;width:320px;height:180px";
document.body.append(video);
video.srcObject = new MediaStream([remote.track]);
await video.play().catch(() => {});
const canvas = document.createElement("canvas");
const g = canvas.getContext("2d", {willReadFrequently: true});
const mean = (d, w, h, x0, x1) => {
  let sum = [0, 0, 0], k = 0;
  for (let y = Math.floor(h * 0.1); y < Math.floor(h * 0.8); y++)
    for (let x = Math.floor(w * x0); x < Math.ceil(w * x1); x++) {
      const i = (y * w + x) * 4;
      sum[0] += d[i]; sum[1] += d[i + 1]; sum[2] += d[i + 2]; k++;
    }
  return sum.map((v) => Math.round(v / k));
};
const frames = [];
const deadline = performance.now() + 8000;
let last = -1;
while (frames.length < count && performance.now() < deadline) {
  const meta = await new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), 1000);
    video.requestVideoFrameCallback((now, m) => { clearTimeout(timer); resolve(m); });
  });
  if (!meta || meta.presentedFrames === last) continue;
  last = meta.presentedFrames;
  const w = canvas.width = Math.max(1, Math.round(video.videoWidth / 4));
  const h = canvas.height = Math.max(1, Math.round(video.videoHeight / 4));
  g.drawImage(video, 0, 0, w, h);
  const d = g.getImageData(0, 0, w, h).data;
  frames.push({presented: meta.presentedFrames, width: video.videoWidth, height: video.videoHeight,
               left: mean(d, w, h, 0.05, 0.45), right: mean(d, w, h, 0.55, 0.95)});
}
const png = frames.length ? canvas.toDataURL("image/png") : null;
video.srcObject = null;
video.remove();
return {frames, png};
"""


def near(rgb, want, tolerance=60):
    return all(abs(c - w) <= tolerance for c, w in zip(rgb, want))


def size_is(stats, width, height, slack=16):
    """A decoded size equal to width x height up to Chrome's rounding (scaled layers round down to
    even or to multiples of 2/4, depending on the encoder)."""
    return bool(stats) and abs(stats["width"] - width) <= slack and abs(stats["height"] - height) <= slack


def open_page(b, base):
    b.open(base + "/")
    b.wait("return document.body.dataset.phase === 'join'", 15, f"{b.name}: the page")


def connect(b, room, name, role="participant", options=None):
    return b.js_async(CONNECT, room, name, role, options or {})


def inbound(b, name):
    return b.js_async(INBOUND, name)


def sender_state(b, name, track_id):
    return b.js_async(SENDER_STATE, name, track_id)


def wait_inbound(b, name, track_id, check, timeout, what):
    """Polls a viewer's inbound statistics of one track until `check(stats)`; returns the stats."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = inbound(b, name).get(track_id)
        if last and check(last):
            return last
        time.sleep(0.25)
    b.screenshot(f"timeout-{name}-{int(time.time())}")
    raise AssertionError(f"{name}: timed out after {timeout}s waiting for {what}; last stats {last}")


def wait_sender(b, name, track_id, check, timeout, what):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = sender_state(b, name, track_id)
        if check(last):
            return last
        time.sleep(0.25)
    raise AssertionError(f"{name}: timed out after {timeout}s waiting for {what}; last sender state {last}")


def assert_canvas_content(b, name, track_id, width, height, label, count=5):
    """`count` distinct decoded frames of the track on `name`'s page show the canvas pattern at about
    that size; saves the last one as a PNG artifact."""
    r = b.js_async(PIXELS, name, track_id, count)
    assert "error" not in r, r
    if r.get("png"):
        b.save_png(label, r["png"])
    frames = r["frames"]
    assert len(frames) >= count, f"{name}: only {len(frames)} decoded frames sampled: {frames}"
    for f in frames:
        assert near(f["left"], LEFT_RGB) and near(f["right"], RIGHT_RGB), (
            f"{name}: not the publisher's blue/yellow canvas: {f}")
        assert abs(f["width"] - width) <= 16 and abs(f["height"] - height) <= 16, (
            f"{name}: picture {f['width']}x{f['height']}, expected about {width}x{height}")
    return frames


def publish_canvas(b, name, options=None):
    return b.js_async(PUBLISH_CANVAS, name, options or {})


def viewer_call(b, name, method, *args):
    """Calls a Room method on a viewer (setQuality, setViewport, ...) and returns its result."""
    return b.js_async(f"return await window.peers[arguments[0]].{method}(...arguments[1]);", name, list(args))


def wait_remote(b, name, track_id, timeout=20):
    b.wait(
        f"const p = window.peers[{json.dumps(name)}];"
        f"return p && p.remoteTracks.some((t) => t.trackId === {json.dumps(track_id)});",
        timeout,
        f"{name} to receive {track_id}",
    )


def test_camera_simulcast_quality_switch_and_layers_wanted(dev_server, browsers, artifacts):
    """A publishes a 1280x720 canvas as a simulcast camera (q, h, f at 320x180, 640x360, 1280x720).
    Viewer va asks `high` and decodes 1280x720, vb asks `low` and decodes 320x180, both showing the
    canvas. vb switches to `high`: its decoded size changes within 2 s, without a freeze, its decoded
    frames growing on every sample. Then nobody wants the top layer: the server's `layers_wanted`
    drops `f` and A's top encoding is turned off (inactive, no frames encoded); when va asks `high`
    again it is turned back on and va decodes 1280x720 again."""
    base = f"http://127.0.0.1:{dev_server.port}"
    room = "simulcast-camera"
    pub = browsers("pub")
    view = browsers("viewers")
    open_page(pub, base)
    open_page(view, base)

    connect(pub, room, "alice", "host")
    cam = publish_canvas(pub, "alice")
    track = cam["trackId"]
    print(f"published {json.dumps(cam)}")
    # The publish request announced the three layers, bottom first, with their sizes.
    assert cam["layers"] == [
        {"rid": "q", "width": 320, "height": 180},
        {"rid": "h", "width": 640, "height": 360},
        {"rid": "f", "width": 1280, "height": 720},
    ], cam
    # The answer accepted simulcast: the sender still has its three encodings.
    state = sender_state(pub, "alice", track)
    print(f"sender after the answer: {json.dumps(state)}")
    assert [(e["rid"], e["scale"]) for e in state["encodings"]] == [("q", 4), ("h", 2), ("f", 1)], state

    connect(view, room, "va")
    connect(view, room, "vb")
    wait_remote(view, "va", track)
    wait_remote(view, "vb", track)
    assert viewer_call(view, "va", "setQuality", track, "high") == {"trackId": track, "quality": "high"}
    assert viewer_call(view, "vb", "setQuality", track, "low") == {"trackId": track, "quality": "low"}

    # Chromium's bandwidth estimate ramps up before the top layer is sent: a loose bound.
    a = wait_inbound(view, "va", track, lambda s: size_is(s, 1280, 720), 45, "va to decode 1280x720")
    b = wait_inbound(view, "vb", track, lambda s: size_is(s, 320, 180), 30, "vb to decode 320x180")
    print(f"va {a}, vb {b}, publisher {json.dumps(sender_state(pub, 'alice', track))}")
    assert_canvas_content(view, "va", track, 1280, 720, "va-high")
    assert_canvas_content(view, "vb", track, 320, 180, "vb-low")

    # vb switches to high mid-stream: the size changes within 2 s, with no freeze.
    before = inbound(view, "vb")[track]
    t0 = time.time()
    viewer_call(view, "vb", "setQuality", track, "high")
    samples = [before]
    switched_at = None
    while time.time() - t0 < 4:
        time.sleep(0.4)
        s = inbound(view, "vb")[track]
        samples.append(s)
        if switched_at is None and size_is(s, 1280, 720):
            switched_at = time.time() - t0
    print(f"vb switched to 1280x720 after {switched_at} s; samples {json.dumps(samples)}")
    assert switched_at is not None and switched_at <= 2.0, f"vb's size did not change within 2 s: {samples}"
    assert all(later["frames"] > earlier["frames"] for earlier, later in zip(samples, samples[1:])), (
        f"vb's decoded frames stopped growing during the switch: {samples}")
    assert samples[-1]["freezes"] == before["freezes"], f"vb froze during the switch: {before} -> {samples[-1]}"
    assert_canvas_content(view, "vb", track, 1280, 720, "vb-high")

    # Nobody on the top layer: the server drops `f` from layers_wanted, and A turns its encoding off.
    viewer_call(view, "va", "setQuality", track, "low")
    viewer_call(view, "vb", "setQuality", track, "medium")
    off = wait_sender(pub, "alice", track, lambda s: s["encodings"][2]["active"] is False, 15,
                      "the top encoding (f) to be turned off")
    log = pub.js("return window.peers.alice.layersLog")
    print(f"layers_wanted pushes: {json.dumps(log)}; sender {json.dumps(off)}")
    assert log and "f" not in log[-1]["rids"] and log[-1]["rids"][0] == "q", log
    assert off["encodings"][0]["active"] and off["encodings"][1]["active"], off
    time.sleep(1.0)  # frames already queued in the encoder
    f1 = sender_state(pub, "alice", track)["outbound"].get("f", {}).get("frames", 0)
    time.sleep(2.0)
    f2 = sender_state(pub, "alice", track)["outbound"].get("f", {}).get("frames", 0)
    assert f2 == f1, f"the inactive top encoding still encodes: {f1} -> {f2} frames"
    wait_inbound(view, "vb", track, lambda s: size_is(s, 640, 360), 15, "vb (medium) to decode 640x360")
    wait_inbound(view, "va", track, lambda s: size_is(s, 320, 180), 15, "va (low) to decode 320x180")

    # va asks high again: the top encoding comes back on, and va decodes it.
    viewer_call(view, "va", "setQuality", track, "high")
    on = wait_sender(pub, "alice", track, lambda s: s["encodings"][2]["active"] is True, 15,
                     "the top encoding (f) to be turned back on")
    print(f"sender after va asked high again: {json.dumps(on)}")
    wait_inbound(view, "va", track, lambda s: size_is(s, 1280, 720), 30, "va to decode 1280x720 again")
    assert_canvas_content(view, "va", track, 1280, 720, "va-high-again")
    g1 = sender_state(pub, "alice", track)["outbound"]["f"]["frames"]
    time.sleep(1.5)
    g2 = sender_state(pub, "alice", track)["outbound"]["f"]["frames"]
    assert g2 > g1, f"the top encoding does not encode again: {g1} -> {g2}"
