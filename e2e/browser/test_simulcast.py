"""Simulcast through Atrium in headless Chromium: the JavaScript client (clients/js/atrium.js)
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

from picture_sampler import PICTURE_SAMPLER

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
                    freezes: s.freezeCount || 0, fps: s.framesPerSecond || 0, t: performance.now(),
                    packets: s.packetsReceived || 0, received: s.framesReceived || 0, dropped: s.framesDropped || 0,
                    keyFrames: s.keyFramesDecoded || 0, plis: s.pliCount || 0, nacks: s.nackCount || 0};
});
return out;
"""

# Draws `count` distinct decoded frames of a viewer's received track into a canvas and returns the mean
# colour of its left and right parts (above the marker band), with the picture's size; the last frame
# comes back as a PNG data URL.
PIXELS = PICTURE_SAMPLER + """
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
const sampled = await sampleFrames(video, count, 8000, (meta, d, w, h) => ({
  presented: meta.presentedFrames, width: video.videoWidth, height: video.videoHeight,
  left: meanColour(d, w, h, 0.05, 0.45, 0.1, 0.8), right: meanColour(d, w, h, 0.55, 0.95, 0.1, 0.8)}));
video.srcObject = null;
video.remove();
return sampled;
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


def wait_steady(b, name, track_id, width, height, timeout, frames=10, publisher=None, server=None):
    """Waits until a viewer decodes the track at about width x height and has decoded `frames` more
    frames at that size since it first saw it (a picture that goes on, however slowly a loaded machine
    makes it). Returns the last stats. `publisher`, a (browser, name) pair, adds the sender's state
    (its quality limitation by layer) to a failure; `server` (the dev_server) adds what it estimated
    and allocated toward each viewer."""
    deadline = time.time() + timeout
    first, last = None, None
    while time.time() < deadline:
        last = inbound(b, name).get(track_id)
        if size_is(last, width, height):
            first = first or last
            if last["frames"] - first["frames"] >= frames:
                return last
        else:
            first = None
        time.sleep(0.3)
    more = ""
    if publisher:
        more += f"; publisher {json.dumps(sender_state(publisher[0], publisher[1], track_id))}"
    if server:
        more += f"; server {transport_rates(server)}"
    raise AssertionError(f"{b.name}: {name} did not decode {track_id} at {width}x{height} with {frames} frames "
                         f"more within {timeout}s (last {last}){more}")


def consumer_layer(server, label, track):
    """The spatial layer the server forwards to the transport `label` of `track` (-1: none; None: no
    such viewer in the last metrics snapshot)."""
    _, _, body, _ = server.request("GET", "/metrics", token=None)
    for line in body.decode().splitlines():
        if line.startswith("atrium_media_consumer_layer{") and f'transport="{label}"' in line and \
                f'track="{track}"' in line:
            return int(float(line.rsplit(" ", 1)[1]))
    return None


def wait_layer(server, label, track, layer, timeout=60):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = consumer_layer(server, label, track)
        if last == layer:
            return
        time.sleep(0.3)
    raise AssertionError(f"{label} not on layer {layer} of {track} within {timeout}s (last {last}): "
                         f"{transport_rates(server)}")


def metric_lines(server, keep, label="", also=()):
    """Lines of the server's /metrics, joined for a message: its transports' (only `label`'s, when
    given) whose name holds one of `keep`, and those that start with one of `also`."""
    _, _, body, _ = server.request("GET", "/metrics", token=None)
    return "; ".join(l for l in body.decode().splitlines() if (
        l.startswith("atrium_media_transport_") and label in l and any(k in l for k in keep)) or l.startswith(also))


def transport_rates(server):
    """The server's estimate, allocation and wanted rate (bit/s) and paused tracks of each transport,
    from its /metrics: why a viewer is held below what it asked for."""
    return metric_lines(server, ("estimate_bits", "allocated_bits", "wanted_bits", "paused_tracks", "pacer_queued"))


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


# Sets degradationPreference "maintain-resolution" on the sender of one of window.peers[name]'s tracks,
# in the SDK's queue of sender updates (after its own), and returns what the sender then reports.
KEEP_RESOLUTION = """
const [name, trackId] = arguments;
const peer = window.peers[name];
const sender = peer._transceiverOf(trackId).sender;
await peer._senderUpdate(trackId, async () => {
  const p = sender.getParameters();
  p.degradationPreference = "maintain-resolution";
  await sender.setParameters(p);
});
return sender.getParameters().degradationPreference ?? null;
"""


def keep_resolution(b, name, track_id):
    """A test that waits for the canvas camera's full 1280x720 keeps it whatever the machine's load:
    with Chromium's default preference for a camera (maintain-framerate), a busy publisher scales its
    input down, which turns a simulcast's top layer off (and shrinks a single encoding) for as long
    as the load lasts; a fixed resolution gives way in frame rate instead."""
    got = b.js_async(KEEP_RESOLUTION, name, track_id)
    assert got == "maintain-resolution", f"{name}: the sender of {track_id} reports {got}"


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


def publisher_and_viewers(server, browsers, room):
    """Two browsers on `server`'s page: "pub", where alice (host) has connected to `room`, and
    "viewers", for the viewers' Rooms."""
    base = f"http://127.0.0.1:{server.port}"
    pub = browsers("pub")
    view = browsers("viewers")
    open_page(pub, base)
    open_page(view, base)
    connect(pub, room, "alice", "host")
    return pub, view


def connect_viewers(b, room, names, track_ids):
    """Connects a viewer Room of each name on b's page and waits until each receives every track."""
    for name in names:
        connect(b, room, name)
    for name in names:
        for track_id in track_ids:
            wait_remote(b, name, track_id)


def start_screen_share(b, name):
    """Starts a screen share (no audio) of window.peers[name]: its track id, layers and capture settings."""
    return b.js_async(
        """const peer = window.peers[arguments[0]];
           const s = await peer.startScreenShare({audio: false});
           const published = peer.me.tracks.find((t) => t.id === s.video.trackId);
           return {trackId: s.video.trackId, layers: published ? published.layers : null,
                   settings: s.video.track.getSettings()};""",
        name)


def test_camera_simulcast_quality_switch_and_layers_wanted(dev_server, browsers, artifacts, figures):
    """A publishes a 1280x720 canvas as a simulcast camera (q, h, f at 320x180, 640x360, 1280x720).
    Viewer va asks `high` and decodes 1280x720, vb asks `low` and decodes 320x180, both showing the
    canvas. vb switches to `high`: the server moves it to the top stream (one switch up) and it decodes
    the canvas at 1280x720, its decoded frames going on (the time the switch took, and the freezes and
    key-frame requests of vb's browser meanwhile, are figures for `make bench`). Then nobody wants the top layer: the server's `layers_wanted`
    drops `f` and A's top encoding is turned off (inactive, no frames encoded); when va asks `high`
    again it is turned back on and va decodes 1280x720 again."""
    room = "simulcast-camera"
    pub, view = publisher_and_viewers(dev_server, browsers, room)
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

    keep_resolution(pub, "alice", track)

    vb_id = connect(view, room, "vb")
    connect(view, room, "va")
    for name in ("va", "vb"):
        wait_remote(view, name, track)
    assert viewer_call(view, "va", "setQuality", track, "high") == {"trackId": track, "quality": "high"}
    assert viewer_call(view, "vb", "setQuality", track, "low") == {"trackId": track, "quality": "low"}

    # Chromium's bandwidth estimate ramps up before the top layer is sent: a loose bound.
    a = wait_steady(view, "va", track, 1280, 720, 60, publisher=(pub, "alice"), server=dev_server)
    b = wait_steady(view, "vb", track, 320, 180, 30)
    print(f"va {a}, vb {b}, publisher {json.dumps(sender_state(pub, 'alice', track))}")
    assert_canvas_content(view, "va", track, 1280, 720, "va-high")
    assert_canvas_content(view, "vb", track, 320, 180, "vb-low")
    # Chromium answered with the transport-wide extension: its feedback gives the server an estimate
    # of each viewer's bandwidth (a metric; it chooses nothing yet), once a snapshot has it.
    def estimates():
        _, _, body, _ = dev_server.request("GET", "/metrics", token=None)
        return [float(line.rsplit(" ", 1)[1]) for line in body.decode().splitlines()
                if line.startswith("atrium_media_transport_estimate_bits{") and "/sub" in line]

    deadline = time.time() + 30
    while not (len(estimates()) == 2 and all(e > 0 for e in estimates())) and time.time() < deadline:
        time.sleep(0.3)
    print(f"estimates toward the viewers' connection: {estimates()}")
    assert len(estimates()) == 2 and all(e > 0 for e in estimates()), estimates()

    # vb switches to high mid-stream: the server moves it to the top stream, and it decodes 1280x720.
    vb_label = f"{vb_id}/sub"
    wait_layer(dev_server, vb_label, track, 0)
    before = inbound(view, "vb")[track]
    t0 = time.time()
    viewer_call(view, "vb", "setQuality", track, "high")
    after = wait_inbound(view, "vb", track, lambda s: size_is(s, 1280, 720), 60, "vb to decode 1280x720")
    switched_at = time.time() - t0
    wait_layer(dev_server, vb_label, track, 2)
    after = wait_inbound(view, "vb", track, lambda s: size_is(s, 1280, 720) and s["frames"] > after["frames"], 30,
                         "vb's frames at 1280x720 to go on")
    print(f"vb switched to 1280x720 after {switched_at:.2f} s: {before} -> {after}")
    assert after["frames"] > before["frames"], (before, after)
    figures("switch_up_s", round(switched_at, 2), "s", "<= 2")
    figures("switch_up_freezes", after["freezes"] - before["freezes"], "", "0")
    figures("switch_up_viewer_plis", after["plis"] - before["plis"], "", "0")
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

    # The inactive top encoding encodes nothing more while the bottom one goes on: its count is read
    # once the bottom one encoded 15 frames more (frames already queued in the encoder are out), then
    # again after 30 more.
    def encoded():
        out = sender_state(pub, "alice", track)["outbound"]
        return out.get("q", {}).get("frames", 0), out.get("f", {}).get("frames", 0)

    def after_bottom(n):
        q0 = encoded()[0]
        wait_sender(pub, "alice", track, lambda s: s["outbound"].get("q", {}).get("frames", 0) >= q0 + n, 60,
                    f"the bottom encoding to encode {n} frames more")
        return encoded()[1]

    f1 = after_bottom(15)
    f2 = after_bottom(30)
    assert f2 == f1, f"the inactive top encoding still encodes: {f1} -> {f2} frames"
    wait_inbound(view, "vb", track, lambda s: size_is(s, 640, 360), 15, "vb (medium) to decode 640x360")
    wait_inbound(view, "va", track, lambda s: size_is(s, 320, 180), 15, "va (low) to decode 320x180")

    # va asks high again: the top encoding comes back on, and va decodes it.
    viewer_call(view, "va", "setQuality", track, "high")
    on = wait_sender(pub, "alice", track, lambda s: s["encodings"][2]["active"] is True, 15,
                     "the top encoding (f) to be turned back on")
    print(f"sender after va asked high again: {json.dumps(on)}")
    wait_steady(view, "va", track, 1280, 720, 45, publisher=(pub, "alice"), server=dev_server)
    assert_canvas_content(view, "va", track, 1280, 720, "va-high-again")
    g1 = sender_state(pub, "alice", track)["outbound"]["f"]["frames"]
    wait_sender(pub, "alice", track, lambda s: s["outbound"]["f"]["frames"] > g1, 60,
                "the top encoding to encode again")


def frame_rate(b, name, track_id, seconds=3.0):
    """Frames a viewer decoded per second of one track over `seconds`, with the last stats."""
    s1 = inbound(b, name)[track_id]
    time.sleep(seconds)
    s2 = inbound(b, name)[track_id]
    return (s2["frames"] - s1["frames"]) * 1000.0 / max(1.0, s2["t"] - s1["t"]), s2


def test_viewport_and_screen_share_layers(dev_server, browsers, artifacts, figures):
    """`setViewport` picks the smallest camera layer that covers the tile, never above the quality, and
    0x0 clears it; a screen share goes out as two full-resolution layers (l at 5 fps, f at the capture's
    rate, contentHint "detail", degradationPreference "maintain-resolution"), a viewer on `low` gets
    the slow one at full resolution (the server's layer 0), and a share ignores the viewport (the
    server keeps its viewer on layer 1). Frame rates are printed as figures."""
    room = "simulcast-viewport"
    pub, view = publisher_and_viewers(dev_server, browsers, room)
    cam = publish_canvas(pub, "alice")["trackId"]
    keep_resolution(pub, "alice", cam)
    share = start_screen_share(pub, "alice")
    screen = share["trackId"]
    print(f"share {json.dumps(share)}")
    # Two layers at the capture's full size, bottom (5 fps) first. (Chromium's fake screen reports
    # 800x600 when the capture starts and then sends 800x450: the decoded size is checked below.)
    layers = share["layers"]
    assert [l["rid"] for l in layers] == ["l", "f"] and layers[0]["width"] > 0, share
    assert (layers[0]["width"], layers[0]["height"]) == (layers[1]["width"], layers[1]["height"]), share
    st = wait_sender(pub, "alice", screen, lambda s: s["degradationPreference"] == "maintain-resolution", 10,
                     "the share's sender to maintain resolution")
    print(f"share sender {json.dumps(st)}")
    assert st["contentHint"] == "detail", st
    assert [(e["rid"], e["scale"], e["maxFramerate"]) for e in st["encodings"]] == [("l", 1, 5), ("f", 1, 30)], st

    ids = {name: connect(view, room, name) for name in ("va", "vb")}
    for name in ids:
        for t in (cam, screen):
            wait_remote(view, name, t)
    label = {name: f"{pid}/sub" for name, pid in ids.items()}

    # Camera, va on high: the viewport chooses the layer.
    assert viewer_call(view, "va", "setViewport", cam, 640, 360) == {"trackId": cam, "width": 640, "height": 360}
    wait_inbound(view, "va", cam, lambda s: size_is(s, 640, 360), 30, "va (viewport 640x360) to decode 640x360")
    viewer_call(view, "va", "setViewport", cam, 300, 170)
    wait_inbound(view, "va", cam, lambda s: size_is(s, 320, 180), 15, "va (viewport 300x170) to decode 320x180")
    viewer_call(view, "va", "setViewport", cam, 0, 0)
    wait_steady(view, "va", cam, 1280, 720, 60, publisher=(pub, "alice"), server=dev_server)
    assert_canvas_content(view, "va", cam, 1280, 720, "va-viewport-cleared")
    # vb on low with a large viewport: never above the quality.
    viewer_call(view, "vb", "setQuality", cam, "low")
    viewer_call(view, "vb", "setViewport", cam, 1920, 1080)
    first = wait_inbound(view, "vb", cam, lambda s: size_is(s, 320, 180), 15,
                         "vb (low, viewport 1920x1080) to decode 320x180")
    wait_layer(dev_server, label["vb"], cam, 0)
    later = wait_inbound(view, "vb", cam, lambda s: s["frames"] >= first["frames"] + 30, 60, "vb's 30 frames more")
    assert size_is(later, 320, 180), later

    # Screen share: va low gets the 5 fps layer at full size, vb high the full rate; vb's small
    # viewport changes nothing for a share.
    viewer_call(view, "va", "setQuality", screen, "low")
    viewer_call(view, "vb", "setQuality", screen, "high")
    full = wait_inbound(view, "vb", screen, lambda s: s["width"] > 0, 20, "vb to decode the share")
    sw, sh = full["width"], full["height"]
    wait_inbound(view, "va", screen, lambda s: size_is(s, sw, sh), 20, f"va to decode the share at {sw}x{sh}")
    wait_layer(dev_server, label["va"], screen, 0)
    wait_layer(dev_server, label["vb"], screen, 1)
    slow, slow_stats = frame_rate(view, "va", screen)
    fast, fast_stats = frame_rate(view, "vb", screen)
    out = sender_state(pub, "alice", screen)["outbound"]
    print(f"share: va (low) {slow:.1f} fps {slow_stats}, vb (high) {fast:.1f} fps {fast_stats}; publisher {out}")
    figures("share_low_layer_fps", round(slow, 1), "fps", "<= 8")
    figures("share_top_layer_fps", round(fast, 1), "fps", "> 8")
    assert size_is(slow_stats, sw, sh) and size_is(fast_stats, sw, sh), (slow_stats, fast_stats)
    assert consumer_layer(dev_server, label["va"], screen) == 0, "va (low) left the share's slow layer"
    viewer_call(view, "vb", "setViewport", screen, 320, 180)
    # The viewport is answered (a share ignores it) and vb stays on the full-rate layer, decoding on.
    first = inbound(view, "vb")[screen]
    later = wait_inbound(view, "vb", screen, lambda s: s["frames"] >= first["frames"] + 30, 60, "vb's 30 frames more")
    print(f"share: vb (high, viewport 320x180) {later}")
    assert size_is(later, sw, sh), later
    assert consumer_layer(dev_server, label["vb"], screen) == 1, "vb's share dropped to the slow layer after a viewport"


def test_camera_without_simulcast(dev_server, browsers, artifacts):
    """`{simulcast: false}` publishes one encoding, as before simulcast: no `layers`, no rid, and the
    viewer decodes the full 1280x720 canvas; `setQuality` and `setViewport` still answer."""
    base = f"http://127.0.0.1:{dev_server.port}"
    room = "no-simulcast"
    b = browsers("both")
    open_page(b, base)
    connect(b, room, "alice", "host", {"simulcast": False})
    cam = publish_canvas(b, "alice")
    assert cam["layers"] == [], cam
    st = sender_state(b, "alice", cam["trackId"])
    assert len(st["encodings"]) == 1 and st["encodings"][0]["rid"] is None, st
    keep_resolution(b, "alice", cam["trackId"])
    connect(b, room, "va")
    wait_remote(b, "va", cam["trackId"])
    viewer_call(b, "va", "setQuality", cam["trackId"], "low")
    viewer_call(b, "va", "setViewport", cam["trackId"], 320, 180)  # null from a server without it
    wait_steady(b, "va", cam["trackId"], 1280, 720, 60, publisher=(b, "alice"), server=dev_server)
    assert_canvas_content(b, "va", cam["trackId"], 1280, 720, "va-single")


# The viewport the meeting page last sent for a track, and the size of the tile showing it (device pixels).
PAGE_VIEWPORT = """
const [trackId] = arguments;
const app = window.atriumApp;
const tile = document.querySelector(`[data-testid="tile"][data-track-id="${trackId}"]`);
if (!tile) return null;
const r = tile.getBoundingClientRect();
const dpr = window.devicePixelRatio;
return {sent: app.viewports.get(trackId) || null, tile: {width: Math.round(r.width * dpr), height: Math.round(r.height * dpr)},
        dpr, requests: (window.sentRequests || []).filter((m) => m.trackId === trackId)};
"""


def wait_page_viewport(b, track_id, timeout=10):
    """The page sent a viewport equal to its tile's current size in device pixels; returns both."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = b.js(PAGE_VIEWPORT, track_id)
        if last and last["sent"] and (last["sent"]["width"], last["sent"]["height"]) == (
                last["tile"]["width"], last["tile"]["height"]) and last["sent"]["done"]:
            return last
        time.sleep(0.2)
    raise AssertionError(f"{b.name}: the page did not send its tile's viewport for {track_id}: {last}")


def test_meeting_page_viewports_and_quality_menu(dev_server, browsers, artifacts, camera_y4m):
    """On the meeting page, each remote camera tile sends its size in device pixels as the track's
    viewport (again when the window narrows and when devicePixelRatio doubles), and its quality menu
    sends `subscribe` with the quality picked; your own tile has no menu."""
    from test_meeting_page import join, tile, wait_tile_video

    base = f"http://127.0.0.1:{dev_server.port}"
    room = "page-simulcast"
    a = browsers("a", camera=camera_y4m)
    b = browsers("b")
    a_id = join(a, base, room, "Alice", "host")
    b_id = join(b, base, room, "Bob", "participant")
    # Every request B's page sends from here on, for the checks below.
    b.js("""const room = window.atriumApp.room; window.sentRequests = [];
            const send = room.request.bind(room);
            room.request = (type, fields = {}) => { window.sentRequests.push({type, ...fields}); return send(type, fields); };""")
    a.click("camera-toggle")
    wait_tile_video(b, a_id)
    track = b.js(f"return window.atriumApp.room.remoteTracks.find((t) => t.participantId === {json.dumps(a_id)} && t.source === 'camera').trackId")
    assert b.js(f"return document.querySelector({json.dumps(tile(a_id))}).dataset.trackId") == track

    wide = wait_page_viewport(b, track)
    print(f"viewport at 1280 px: {json.dumps(wide)}")
    assert any(m["type"] == "set_viewport" and (m["width"], m["height"]) == (wide["tile"]["width"], wide["tile"]["height"])
               for m in wide["requests"]), wide
    # The result: the server's echo.
    assert wide["sent"]["result"] == {"trackId": track, "width": wide["tile"]["width"], "height": wide["tile"]["height"]}, wide

    # A narrower window: the tile's new size is sent (once it settles).
    b.set_size(390, 844)
    b.wait("return window.innerWidth === 390", 5, "the narrow viewport")
    narrow = wait_page_viewport(b, track)
    print(f"viewport at 390 px: {json.dumps(narrow)}")
    assert narrow["tile"] != wide["tile"], (wide, narrow)
    # devicePixelRatio 2: twice the CSS size. (An emulated ratio change alone fires neither resize,
    # media-query nor ResizeObserver callbacks in Chromium, unlike a real zoom: the width changes too.)
    b.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                             {"width": 400, "height": 844, "deviceScaleFactor": 2, "mobile": True})
    b.wait("return window.devicePixelRatio === 2 && window.innerWidth === 400", 5, "devicePixelRatio 2")
    dense = wait_page_viewport(b, track)
    print(f"viewport at 400 px, dpr 2: {json.dumps(dense)}")
    css = b.js(f"return document.querySelector({json.dumps(tile(a_id))}).getBoundingClientRect().width")
    assert dense["dpr"] == 2 and abs(dense["sent"]["width"] - 2 * css) <= 1, (css, dense)
    b.set_size(1280, 800)

    # The quality menu: on A's tile on B's page, not on B's own tile.
    menu = json.dumps(tile(a_id, ' [data-testid="quality-select"]'))
    own = json.dumps(tile(b_id, ' [data-testid="quality-select"]'))
    b.wait(f"const m = document.querySelector({menu}); return !!m && !m.hidden && m.value === 'high';", 10,
           "the quality menu on A's tile")
    assert b.js(f"const m = document.querySelector({own}); return !m || m.hidden;")
    before = inbound_page(b).get(track)
    b.js(f"const m = document.querySelector({menu}); m.value = 'low'; m.dispatchEvent(new Event('change', {{bubbles: true}}));")
    b.wait(f"return window.sentRequests.some((m) => m.type === 'subscribe' && m.trackId === {json.dumps(track)} && m.quality === 'low')",
           5, "the subscribe request with quality low")
    b.wait(f"const m = document.querySelector({menu}); return window.atriumApp.qualities.get({json.dumps(track)}) === 'low' && !m.disabled && m.value === 'low';",
           10, "the menu to settle on low")
    assert not [n for n in b.notices() if n["kind"] == "error"], b.notices()
    # With simulcast negotiated, the picture drops to the bottom layer (a quarter of A's 640x360 camera).
    encodings = a.js_async("""const room = window.atriumApp.room;
        const cam = room.localTrack('camera');
        return room._transceiverOf(cam.trackId).sender.getParameters().encodings.length;""")
    print(f"B decoded A's camera at {before}; A sends {encodings} encoding(s)")
    assert encodings > 1, "simulcast was not negotiated"
    if True:
        deadline = time.time() + 15
        while time.time() < deadline:
            now = inbound_page(b).get(track)
            if now and now["width"] and now["width"] <= camera_y4m.width // 4 + 8:
                break
            time.sleep(0.3)
        else:
            raise AssertionError(f"B's picture of A did not drop to the bottom layer: {before} -> {now}")


def inbound_page(b):
    """The meeting page's inbound video statistics by track id."""
    return b.js_async("""const room = window.atriumApp.room; const out = {};
        if (!room || !room.subscriber) return out;
        const byMid = new Map(room.remoteTracks.map((t) => [t.mid, t]));
        (await room.subscriber.getStats()).forEach((s) => {
          if (s.type !== "inbound-rtp" || s.kind !== "video" || !byMid.get(s.mid)) return;
          out[byMid.get(s.mid).trackId] = {width: s.frameWidth || 0, height: s.frameHeight || 0, frames: s.framesDecoded || 0};
        });
        return out;""")


def test_repeated_quality_switches_never_stall(dev_server, browsers, artifacts, figures):
    """A viewer switching between `low` and `high` again and again keeps decoding through every switch
    (Chromium's default VP8 simulcast: three temporal layers per encoding, L1T3): after each switch up
    the server forwards the top stream (its switch counted) and the viewer decodes it at 1280x720 with
    its frames going on. The key-frame requests the viewer's browser sent meanwhile (0 when every
    switch starts on a key frame the server asked for) are a figure for `make bench`."""
    room = "switches"
    pub, view = publisher_and_viewers(dev_server, browsers, room)
    track = publish_canvas(pub, "alice")["trackId"]
    keep_resolution(pub, "alice", track)
    vb_label = f"{connect(view, room, 'vb')}/sub"
    connect(view, room, "va")
    for name in ("va", "vb"):
        wait_remote(view, name, track)
    viewer_call(view, "vb", "setQuality", track, "low")
    wait_steady(view, "va", track, 1280, 720, 60, publisher=(pub, "alice"), server=dev_server)  # keeps the top layer on
    plis = []
    for round_ in range(5):
        wait_steady(view, "vb", track, 320, 180, 60)
        wait_layer(dev_server, vb_label, track, 0)
        before = inbound(view, "vb")[track]
        viewer_call(view, "vb", "setQuality", track, "high")
        wait_layer(dev_server, vb_label, track, 2)
        after = wait_steady(view, "vb", track, 1280, 720, 60)
        print(f"round {round_}: {before} -> {after}")
        plis.append(after["plis"] - before["plis"])
        viewer_call(view, "vb", "setQuality", track, "low")
    figures("repeated_switch_viewer_plis", sum(plis), "", "0")
