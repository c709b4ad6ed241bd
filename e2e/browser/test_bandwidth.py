"""Bandwidth toward each viewer in headless Chromium, with shaped links.

A publisher sends a simulcast camera (a 1280x720 canvas: q, h, f; its resolution kept under load) and
a simulcast screen share (Chromium's fake screen: l at 5 fps and f, both at full size). Three viewers
in one browser, each its own subscriber connection (its own UDP port on 127.0.0.1):

- A is not shaped: it is on the top layers before, during and after B's limit;
- B's port is shaped with `tc` (an HTB class over a TBF; this kernel has no netem) to 500 kbit/s, then
  250 kbit/s, then not at all: its estimate finds the bottleneck, its camera steps down or is paused
  (`track_paused`, reason `bandwidth`), its share goes to its low stream at its full size and keeps
  decoding; once the limit is lifted it is back on the top layers;
- C, once B is done, loses 5 % of the datagrams the server sends it (an nftables `numgen random`
  rule on the input hook, each datagram drawn on its own: see `lose`): it keeps decoding, and its
  NACKs are answered with retransmissions.

The layers are the server's (`atrium_media_consumer_layer`), the pictures the viewers' decoders'. The
timing figures (B's longest gap and loss at 250 kbit/s, the time back after the lift) are recorded for
`make bench` (bench/browser_figures.py), which prints them over several runs beside the bounds: under
2 % lost, no gap over 1 s, back at the top within 10 s. Needs root in a private network namespace (the
browser target runs there: see conftest.py).
"""
import os
import re
import subprocess
import time

import pytest

from test_simulcast import (
    connect, inbound, keep_resolution, metric_lines, publish_canvas, publisher_and_viewers, sender_state, size_is,
    start_screen_share, wait_remote)

# Logs the track_paused / track_resumed pushes a viewer gets.
LOG_PAUSES = """
const [name] = arguments;
const peer = window.peers[name];
peer.pauseLog = [];
for (const type of ["track_paused", "track_resumed"])
  peer.addEventListener(type, (e) => peer.pauseLog.push({t: performance.now(), ...e.detail}));
"""

# The local UDP port of a viewer's subscriber connection (its selected candidate pair).
SUBSCRIBER_PORT = """
const [name] = arguments;
const pc = window.peers[name].subscriber;
if (!pc) return null;
const stats = await pc.getStats();
let pair = null;
stats.forEach((s) => { if (s.type === "transport" && s.selectedCandidatePairId) pair = stats.get(s.selectedCandidatePairId); });
if (!pair) stats.forEach((s) => { if (s.type === "candidate-pair" && s.nominated && s.state === "succeeded") pair = s; });
if (!pair) return null;
const local = stats.get(pair.localCandidateId);
return local ? local.port : null;
"""

# Lost and received packets over a viewer's inbound streams (video and audio).
LOSS = """
const [name] = arguments;
let lost = 0, received = 0;
(await window.peers[name].subscriber.getStats()).forEach((s) => {
  if (s.type === "inbound-rtp") { lost += s.packetsLost || 0; received += s.packetsReceived || 0; }
});
return {lost, received};
"""

# A viewer's repair figures per inbound stream (video by track id, audio as "audio"): what arrived,
# what it counts lost, the retransmissions it took, the NACKs and PLIs it sent, frames decoded and dropped.
REPAIR = """
const [name] = arguments;
const peer = window.peers[name];
const byMid = new Map(peer.remoteTracks.map((t) => [t.mid, t]));
const out = {};
(await peer.subscriber.getStats()).forEach((s) => {
  if (s.type !== "inbound-rtp") return;
  const t = byMid.get(s.mid);
  const key = s.kind === "audio" ? "audio" : (t ? t.trackId : s.mid);
  out[key] = {packets: s.packetsReceived || 0, lost: s.packetsLost || 0,
              rtx: s.retransmittedPacketsReceived || 0, nacks: s.nackCount || 0, plis: s.pliCount || 0,
              frames: s.framesDecoded || 0, dropped: s.framesDropped || 0, keyFrames: s.keyFramesDecoded || 0};
});
return out;
"""


# Samples a viewer's decoded frames of one track in the page every 50 ms (a poll from the test
# through the driver can itself take longer than the bound on a loaded machine), one sampler per
# viewer: `start` begins,
# `stop` returns the longest time between two increments of framesDecoded (and to the end), the
# samples taken and the longest time between two samples (the page's own timer lag).
GAP_SAMPLER = """
const [name, trackId, action] = arguments;
const peer = window.peers[name];
if (action === "start") {
  const remote = peer.remoteTracks.find((t) => t.trackId === trackId);
  const g = {last: performance.now(), prevSample: performance.now(), frames: null, longest: 0, samples: 0, lag: 0};
  const receiver = peer.subscriber.getReceivers().find((r) => r.track === remote.track);
  g.timer = setInterval(async () => {
    const now = performance.now();
    g.lag = Math.max(g.lag, now - g.prevSample);
    g.prevSample = now;
    let frames = null;
    (await receiver.getStats()).forEach((s) => { if (s.type === "inbound-rtp") frames = s.framesDecoded || 0; });
    const at = performance.now();
    g.samples += 1;
    if (frames === null) return;
    if (g.frames !== null && frames > g.frames) { g.longest = Math.max(g.longest, at - g.last); g.last = at; }
    if (g.frames === null) g.last = at;
    g.frames = frames;
  }, 50);
  (window.gapSamplers ||= {})[name] = g;
  return true;
}
const g = window.gapSamplers[name];
clearInterval(g.timer);
const end = performance.now();
return {longest: Math.max(g.longest, end - g.last) / 1000, samples: g.samples, lag: g.lag / 1000, frames: g.frames};
"""

def run(*args):
    subprocess.run(list(args), check=True)


def shape(port, rate, limit=36000):
    """Limits what goes to `port` on lo to `rate` (e.g. "500kbit"): an HTB class whose queue is a TBF
    at the same rate with HTB's own default burst (1,600 bytes) and `limit` bytes of room (about 30
    full packets unless told).
    Not HTB over a pfifo: the server sends a run of same-size datagrams to one viewer as one UDP GSO
    message, which lo carries unsegmented, and HTB lets a whole message through at once and goes
    into debt (the link's mean rate holds, not its spacing). A probe cluster then crossed the
    250 kbit/s link at its full rate and read as twice the link (2026-12-02, 16:00 UTC: 4 of 12 runs,
    with loss up to 11.6 % after). TBF splits a GSO message bigger than its burst into its
    datagrams, each shaped on its own, as a real bottleneck sees them after the sender's NIC."""
    subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"], stderr=subprocess.DEVNULL)
    run("tc", "qdisc", "add", "dev", "lo", "root", "handle", "1:", "htb", "default", "10")
    run("tc", "class", "add", "dev", "lo", "parent", "1:", "classid", "1:10", "htb", "rate", "10gbit")
    run("tc", "class", "add", "dev", "lo", "parent", "1:", "classid", "1:20", "htb", "rate", rate, "ceil", rate)
    run("tc", "qdisc", "add", "dev", "lo", "parent", "1:20", "handle", "20:", "tbf", "rate", rate, "burst", "1600",
        "limit", str(limit))
    run("tc", "filter", "add", "dev", "lo", "parent", "1:", "protocol", "ip", "prio", "1", "u32",
        "match", "ip", "protocol", "17", "0xff", "match", "ip", "dport", str(port), "0xffff", "flowid", "1:20")


def bottleneck_stats():
    """What B's shaped link sent and dropped so far (`tc -s qdisc` of its TBF): tells a loss at the
    bottleneck from one the server or the browser made."""
    out = subprocess.run(["tc", "-s", "qdisc", "show", "dev", "lo", "parent", "1:20"], capture_output=True,
                         text=True).stdout
    return " ".join(out.split())


def unshape():
    subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"], stderr=subprocess.DEVNULL)


def lose(port):
    """Drops 5 % of the datagrams that reach `port` on lo, each drawn on its own, after they have left
    the sender. Not on the output hook: there a drop is the sender's sendmmsg refused with EPERM, which
    the kernel reports only for the first message of a call, so the server's next call starts with the
    refused datagram and sends it again, passing 95 % of the time (with that rule C lost about 0.3 %
    and sent a handful of NACKs). And lo carries a UDP GSO message (a run of a frame's packets to one
    viewer) as one packet through every hook to the receiving socket, so a rule would drop whole runs:
    with `gso_max_segs 1` the device cuts it into datagrams as it sends it, after its qdisc, and the
    input hook sees each datagram. That is lo's setting for every flow, so it comes after B's checks,
    which are then run on lo as they always were (on a loaded machine, 2026-12-02: with it on through
    them B failed its loss or its time back in 4 of 9 runs; with it after them B or A failed in 3 of
    11, so maybe only the load). Counters: every datagram to the port, then those dropped."""
    run("ip", "link", "set", "dev", "lo", "gso_max_segs", "1")
    run("nft", "add", "table", "inet", "atrium_bw")
    run("nft", "add", "chain", "inet", "atrium_bw", "in", "{ type filter hook input priority 0; }")
    run("nft", "add", "rule", "inet", "atrium_bw", "in", "udp", "dport", str(port), "counter")
    run("nft", "add", "rule", "inet", "atrium_bw", "in", "udp", "dport", str(port),
        "numgen", "random", "mod", "100", "<", "5", "counter", "drop")


def stop_losing():
    subprocess.run(["nft", "delete", "table", "inet", "atrium_bw"], stderr=subprocess.DEVNULL)
    subprocess.run(["ip", "link", "set", "dev", "lo", "gso_max_segs", "65535"], stderr=subprocess.DEVNULL)


def repair_metrics(server, label):
    """The server's repair counters, all workers summed: NACKs received, packets resent in answer
    (as RTX: not the padding-only RTX of probes, which a browser counts among its retransmitted
    packets), misses, refusals (repeats within a round trip, over the budget; also for `label`), and
    what it sent the transport `label`."""
    _, _, body, _ = server.request("GET", "/metrics", token=None)
    names = {"atrium_media_nacks_total": 'direction="received"', "atrium_media_retransmissions_total": "",
             "atrium_media_retransmission_misses_total": "",
             "atrium_media_dropped_packets_total": 'reason="retransmission_',
             "atrium_media_transport_retransmissions_refused_total": f'transport="{label}"',
             "atrium_media_transport_send_errors_total": f'transport="{label}"',
             "atrium_media_transport_packets_total": f'transport="{label}",direction="out"'}
    out = dict.fromkeys(names, 0.0)
    for line in body.decode().splitlines():
        name = line.split("{", 1)[0]
        if name in names and names[name] in line:
            out[name] += float(line.rsplit(" ", 1)[1])
    return {name.removeprefix("atrium_media_"): v for name, v in out.items()}


def labelled_metric(server, name, key, value):
    """The first sample of `name` whose label `key` is `value` (None when there is none)."""
    _, _, body, _ = server.request("GET", "/metrics", token=None)
    for line in body.decode().splitlines():
        if line.startswith(name + "{") and f'{key}="{value}"' in line:
            return float(line.rsplit(" ", 1)[1])
    return None


def metrics(server, name, label):
    return labelled_metric(server, name, "transport", label)


def track_metric(server, name, track):
    return labelled_metric(server, name, "track", track)


def poll(check, timeout, what, interval=0.3):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        ok, last = check()
        if ok:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}; last {last}")


def consumer_layer(server, label, track):
    """The spatial layer the server forwards to the transport `label` of `track` (-1: none)."""
    _, _, body, _ = server.request("GET", "/metrics", token=None)
    for line in body.decode().splitlines():
        if line.startswith("atrium_media_consumer_layer{") and f'transport="{label}"' in line and \
                f'track="{track}"' in line:
            return int(float(line.rsplit(" ", 1)[1]))
    return None


def switches_down(server, label, track):
    _, _, body, _ = server.request("GET", "/metrics", token=None)
    for line in body.decode().splitlines():
        if line.startswith("atrium_media_consumer_layer_switches_total{") and f'transport="{label}"' in line \
                and f'track="{track}"' in line and 'direction="down"' in line:
            return int(float(line.rsplit(" ", 1)[1]))
    return 0


@pytest.mark.timeout(900)
def test_each_viewer_gets_what_its_link_carries(dev_server, browsers, artifacts, figures):
    """The mechanisms, checked on the server's per-viewer layers and the viewers' decoded pictures;
    the figures (B's longest gap and loss at 250 kbit/s, the time back after the lift, C's repair) are
    printed and recorded for `make bench`, which runs this scenario several times against the bounds
    (loss < 2 %, no gap over 1 s, back at the top within 10 s)."""
    room = "bandwidth"
    pub, view = publisher_and_viewers(dev_server, browsers, room)
    cam = publish_canvas(pub, "alice")["trackId"]
    # The top layer exists whatever the machine's load (a busy publisher gives way in frame rate):
    # the checks below are about what the server forwards, not what a loaded encoder sends.
    keep_resolution(pub, "alice", cam)
    screen = start_screen_share(pub, "alice")["trackId"]
    ids = {}
    for name in ("va", "vb", "vc"):
        ids[name] = connect(view, room, name)
        view.js(LOG_PAUSES, name)
        wait_remote(view, name, cam)
        wait_remote(view, name, screen)
    ports = {n: poll(lambda n=n: (view.js_async(SUBSCRIBER_PORT, n) is not None, view.js_async(SUBSCRIBER_PORT, n)),
                     60, f"{n}'s port") for n in ids}
    print(f"viewer ports {ports}")
    labels = {n: f"{pid}/sub" for n, pid in ids.items()}

    def layers(name):
        return consumer_layer(dev_server, labels[name], cam), consumer_layer(dev_server, labels[name], screen)

    def on_top(name):
        """The server forwards the camera's top stream (f) and the share's (f), and the viewer decodes
        the camera at 1280x720 with its frames growing."""
        s1 = inbound(view, name).get(cam)
        at = layers(name)
        time.sleep(0.3)
        s2 = inbound(view, name).get(cam)
        ok = at == (2, 1) and size_is(s2, 1280, 720) and bool(s1) and s2["frames"] > s1["frames"]
        return ok, {"layers": at, "camera": s2}

    def report(name):
        return metric_lines(dev_server, ("_bits", "paused", "pacer", "paced", "probe"), labels[name],
                            also=("atrium_media_consumer_layer{", "atrium_media_track_frame_width"))

    for name in ("va", "vb", "vc"):
        try:
            poll(lambda name=name: on_top(name), 120, f"{name} on the top layers")
        except AssertionError:
            print(f"{name} not at the top: {report(name)}")
            raise
    share_full = inbound(view, "va")[screen]
    sw, sh = share_full["width"], share_full["height"]
    assert sw > 0, share_full
    a_down0 = switches_down(dev_server, labels["va"], cam) + switches_down(dev_server, labels["va"], screen)

    try:
        # B at 500 kbit/s: the estimate finds the bottleneck.
        shape(ports["vb"], "500kbit")
        t0 = time.time()
        poll(lambda: ((e := metrics(dev_server, "atrium_media_transport_estimate_bits", labels["vb"])) is not None
                      and e < 600_000, e), 120, "B's estimate to find the 500 kbit/s bottleneck")
        figures("500kbit_estimate_settled_s", round(time.time() - t0, 2), "s")

        # At 250 kbit/s the camera gives way (a lower stream, or paused with `track_paused` reason
        # `bandwidth`), the share goes to its low stream (5 fps) at its full size.
        shape(ports["vb"], "250kbit")
        t1 = time.time()

        def stepped_down():
            c, sc = layers("vb")
            s = inbound(view, "vb").get(screen)
            return (c is not None and c <= 1 and sc == 0 and size_is(s, sw, sh)), {"layers": (c, sc), "share": s}

        try:
            state = poll(stepped_down, 120, "B's camera below the top and its share on its low stream at full size")
        except AssertionError:
            print(f"B at 250 kbit/s: {report('vb')}")
            raise
        figures("250kbit_step_down_s", round(time.time() - t1, 2), "s")
        print(f"250 kbit/s: B after {time.time() - t1:.1f}s: {state}")

        # It keeps decoding its share at full size on the low stream; the figures of the window (8 s
        # for `make bench`'s figures, 3 s when only the mechanism is checked).
        loss0 = view.js_async(LOSS, "vb")
        share0 = inbound(view, "vb")[screen]
        view.js(GAP_SAMPLER, "vb", screen, "start")
        view.js(GAP_SAMPLER, "va", screen, "start")
        end = time.time() + (8 if os.environ.get("ATRIUM_FIGURES") else 3)
        while time.time() < end:
            time.sleep(0.25)
            s = inbound(view, "vb")[screen]
            assert size_is(s, sw, sh), f"B's share lost its size: {s}"
        gaps = view.js(GAP_SAMPLER, "vb", screen, "stop")
        gaps_a = view.js(GAP_SAMPLER, "va", screen, "stop")
        loss1 = view.js_async(LOSS, "vb")
        share1 = inbound(view, "vb")[screen]
        assert share1["frames"] > share0["frames"], f"B's share stopped decoding at 250 kbit/s: {share0} {share1}"
        lost = loss1["lost"] - loss0["lost"]
        received = loss1["received"] - loss0["received"]
        pauses = view.js("return window.peers.vb.pauseLog")
        assert all(e["reason"] == "bandwidth" for e in pauses), pauses
        estimate = metrics(dev_server, "atrium_media_transport_estimate_bits", labels["vb"])
        assert estimate is not None and estimate < 600_000, estimate
        print(f"B's bottleneck: {bottleneck_stats()}")
        figures("250kbit_longest_gap_s", round(gaps["longest"], 2), "s", "<= 1.0")
        figures("250kbit_loss_pct", round(100.0 * lost / max(1, lost + received), 2), "%", "< 2")
        figures("250kbit_clean_viewer_longest_gap_s", round(gaps_a["longest"], 2), "s")
        figures("250kbit_page_timer_lag_s", round(gaps["lag"], 2), "s")
        # Whether the publishing browser was the limit (its encoder held back by the CPU).
        out = sender_state(pub, "alice", cam)["outbound"]
        figures("publisher_cpu_limited", int(any(o.get("limitation") == "cpu" for o in out.values())), "",
                "0 (1: the publishing browser was the limit)")

        # A, on an open link, is back on (or still on) the top layers.
        poll(lambda: on_top("va"), 120, "A on the top layers while B is shaped")
        a_share = inbound(view, "va")[screen]
        assert size_is(a_share, sw, sh), a_share
        figures("clean_viewer_steps_down", switches_down(dev_server, labels["va"], cam)
                + switches_down(dev_server, labels["va"], screen) - a_down0, "", "0")

        # Lifted: B back on the top layers (the server's layers, then the decoded camera).
        unshape()
        t2 = time.time()
        print(f"lifted at {time.strftime('%H:%M:%S', time.gmtime(t2))}.{int(t2 % 1 * 1000):03d} UTC "
              "(the server log's clock)")
        server_back = {}

        def back_on_top():
            c, sc = layers("vb")
            for key, done in (("camera", c == 2), ("share", sc == 1)):
                if done and key not in server_back:
                    server_back[key] = time.time() - t2
            ok, state = on_top("vb")
            return ok, state

        try:
            poll(back_on_top, 120, "B back on the top layers after the lift")
        except AssertionError:
            print(f"B after the lift: {report('vb')}")
            raise
        figures("lift_camera_back_s", round(server_back.get("camera", time.time() - t2), 2), "s", "<= 10")
        figures("lift_share_back_s", round(server_back.get("share", time.time() - t2), 2), "s", "<= 10")
        figures("lift_camera_decoded_at_top_s", round(time.time() - t2, 2), "s")

        # C, once B is done (lo's gso_max_segs 1 changes what all of lo carries: see `lose`), loses 5 %
        # of its datagrams until it has decoded 100 more frames of each video track and lost 5 packets
        # of each: it keeps decoding, repaired by NACK and RTX.
        lose(ports["vc"])
        c_server0 = repair_metrics(dev_server, labels["vc"])
        c_repair0 = view.js_async(REPAIR, "vc")

        def c_lost_and_decoded():
            now = view.js_async(REPAIR, "vc")
            grown = {t: {f: now[t][f] - c_repair0[t][f] for f in ("frames", "lost")} for t in (cam, screen)}
            return all(g["frames"] > 100 and g["lost"] >= 5 for g in grown.values()), grown

        poll(c_lost_and_decoded, 180, "C to decode 100 frames of each track through its loss and lose 5 packets of each",
             1.0)
        c_port = view.js_async(SUBSCRIBER_PORT, "vc")
        c_repair1 = view.js_async(REPAIR, "vc")
        c_server1 = repair_metrics(dev_server, labels["vc"])
        rules = subprocess.run(["nft", "list", "table", "inet", "atrium_bw"], capture_output=True, text=True).stdout
        counted = [tuple(map(int, m)) for m in re.findall(r"counter packets (\d+) bytes (\d+)", rules)]
        repair = {t: {f: c_repair1[t][f] - c_repair0[t][f] for f in c_repair1[t]} for t in (cam, screen)}
        server = {k: int(c_server1[k] - c_server0[k]) for k in c_server1}
        print(f"C: port {ports['vc']} at the start, {c_port} now; to it / dropped (packets, bytes): {counted}; "
              f"repaired: browser {repair}; server {server}")
        assert c_port == ports["vc"], f"C's port changed from {ports['vc']} to {c_port}: its loss rule missed"
        assert len(counted) == 2 and counted[1][0] > 0, f"nothing dropped on the way to C: {counted}"
        # NACKs answered: C asked again for what it lost on each video track and got it resent.
        for t in (cam, screen):
            assert repair[t]["nacks"] > 0 and repair[t]["rtx"] > 0, (t, repair, server, counted)
        assert server["retransmissions_total"] > 0, server
        figures("loss5pct_resent_per_dropped", round(server["retransmissions_total"] / counted[1][0], 2))
    finally:
        unshape()
        stop_losing()


# Video bytes a viewer received so far (all its inbound video streams).
VIDEO_BYTES = """
const [name] = arguments;
let bytes = 0;
(await window.peers[name].subscriber.getStats()).forEach((s) => {
  if (s.type === "inbound-rtp" && s.kind === "video") bytes += s.bytesReceived || 0;
});
return bytes;
"""


def test_a_step_down_behind_a_short_queue_keeps_the_picture_moving(dev_server, browsers, artifacts, figures):
    """A viewer on the top camera layer whose link falls below what that layer needs (six tenths of
    it) with a queue of 200 ms at the link's rate (a common real link: the outside test's 600 kbit/s
    with 15 kB, scaled to this canvas's rates): it steps down (the server's layer for it goes below
    the top) and decodes the smaller picture with its frames growing. The figures for `make bench`:
    the longest gap between decoded frames from the narrowing on (target: a frame interval and a
    round trip, about 0.3 s here, where the stream left used to wait behind a full pacer for
    seconds), the loss, and the time to the step down."""
    room = "short-queue"
    pub, view = publisher_and_viewers(dev_server, browsers, room)
    cam = publish_canvas(pub, "alice")["trackId"]
    keep_resolution(pub, "alice", cam)
    pid = connect(view, room, "vb")
    wait_remote(view, "vb", cam)
    port = poll(lambda: (view.js_async(SUBSCRIBER_PORT, "vb") is not None, view.js_async(SUBSCRIBER_PORT, "vb")),
                60, "vb's port")
    label = f"{pid}/sub"

    def on_top():
        s = inbound(view, "vb").get(cam)
        return consumer_layer(dev_server, label, cam) == 2 and size_is(s, 1280, 720), s

    poll(on_top, 120, "vb on the top layer at 1280x720")
    b0, t0 = view.js_async(VIDEO_BYTES, "vb"), time.time()
    time.sleep(3)
    top = (view.js_async(VIDEO_BYTES, "vb") - b0) * 8 / (time.time() - t0)
    rate = max(50_000, int(0.6 * top))
    limit = max(4000, int(rate / 8 * 0.2))
    try:
        loss0 = view.js_async(LOSS, "vb")
        view.js(GAP_SAMPLER, "vb", cam, "start")
        shape(port, f"{rate // 1000}kbit", limit=limit)
        t0 = time.time()

        def stepped_down():
            layer = consumer_layer(dev_server, label, cam)
            s = inbound(view, "vb").get(cam)
            return (layer is not None and layer < 2 and bool(s) and 0 < s["width"] < 1280), (layer, s)

        state = poll(stepped_down, 120, "vb below the top layer, decoding a smaller picture")
        figures("short_queue_step_down_s", round(time.time() - t0, 2), "s")
        frames0 = inbound(view, "vb")[cam]["frames"]
        time.sleep(3)
        gaps = view.js(GAP_SAMPLER, "vb", cam, "stop")
        frames1 = inbound(view, "vb")[cam]["frames"]
        loss1 = view.js_async(LOSS, "vb")
        assert frames1 > frames0, f"vb stopped decoding after the step down: {frames0} -> {frames1}"
        lost = loss1["lost"] - loss0["lost"]
        received = loss1["received"] - loss0["received"]
        print(f"top layer {top / 1000:.0f} kbit/s; link {rate // 1000} kbit/s with a {limit} B queue: stepped down "
              f"to {state}; longest gap {gaps['longest']:.3f} s; lost {lost} of {lost + received}; "
              f"bottleneck: {bottleneck_stats()}")
        figures("short_queue_longest_gap_s", round(gaps["longest"], 2), "s", "<= 0.3 (a frame and a round trip)")
        figures("short_queue_loss_pct", round(100.0 * lost / max(1, lost + received), 2), "%")
        figures("short_queue_page_timer_lag_s", round(gaps["lag"], 2), "s")
    finally:
        unshape()
