"""What end-to-end encryption costs (docs/e2ee.md), for `make bench` (bench/browser_figures.py) only
(`BENCH_ONLY` in e2e/gate.py). One Chromium publishes a canvas camera (no
simulcast, one stream) to another, first in a plain room, then in an e2ee room; over the same window
each time: the sender's and the receiver's Chromium CPU per frame (the process trees' CPU time over
frames encoded and decoded, from getStats) and the server's CPU per forwarded packet. Targets: the
server's figure unchanged (it forwards ciphertext as it forwards plain frames); the browsers' cost is
reported, not targeted.
"""
import json
import os
import time

from metrics_text import sample_of
from test_simulcast import CONNECT, PUBLISH_CANVAS, inbound, open_page, wait_remote

WINDOW = 10.0   # seconds measured
WARM = 5.0      # seconds before

OUTBOUND = """
const [name] = arguments;
const peer = window.peers[name];
let frames = 0;
(await peer.publisher.getStats()).forEach((s) => { if (s.type === "outbound-rtp" && s.kind === "video") frames += s.framesEncoded || 0; });
return frames;
"""

TICKS = os.sysconf("SC_CLK_TCK")


def tree_cpu(root):
    """CPU seconds (user + system) of `root` and every process under it."""
    parents = {}
    times = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        times[int(entry)] = (int(fields[11]) + int(fields[12])) / TICKS
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += times.get(pid, 0.0)
        todo += [p for p, pp in parents.items() if pp == pid]
    return total


def server_packets(server):
    _, _, body, _ = server.request("GET", "/metrics", token=None)
    return sample_of(body.decode(), "atrium_media_packets_total", direction="out")


def measure(server, pub, view, room, options):
    pub.js_async(CONNECT, room, "alice", "participant", options)
    track = pub.js_async(PUBLISH_CANVAS, "alice", {"simulcast": False})["trackId"]
    view.js_async(CONNECT, room, "bob", "participant", options)
    wait_remote(view, "bob", track)
    time.sleep(WARM)
    pub_pid = pub.driver.service.process.pid
    view_pid = view.driver.service.process.pid
    c0 = (tree_cpu(pub_pid), tree_cpu(view_pid), tree_cpu(server.proc.pid))
    f0 = (pub.js_async(OUTBOUND, "alice"), inbound(view, "bob").get(track, {}).get("frames", 0), server_packets(server))
    time.sleep(WINDOW)
    c1 = (tree_cpu(pub_pid), tree_cpu(view_pid), tree_cpu(server.proc.pid))
    f1 = (pub.js_async(OUTBOUND, "alice"), inbound(view, "bob").get(track, {}).get("frames", 0), server_packets(server))
    for b, name in ((pub, "alice"), (view, "bob")):
        b.js_async("await window.peers[arguments[0]].leave(); return true;", name)
    frames_out, frames_in, packets = (f1[i] - f0[i] for i in range(3))
    return {
        "sender_ms_per_frame": 1000 * (c1[0] - c0[0]) / max(frames_out, 1),
        "receiver_ms_per_frame": 1000 * (c1[1] - c0[1]) / max(frames_in, 1),
        "server_us_per_packet": 1e6 * (c1[2] - c0[2]) / max(packets, 1),
        "frames": (frames_out, frames_in), "packets": packets,
    }


def test_e2ee_cost(dev_server, browsers, figures):
    base = f"http://127.0.0.1:{dev_server.port}"
    pub, view = browsers("pub"), browsers("view")
    for b in (pub, view):
        open_page(b, base)
    plain = measure(dev_server, pub, view, "cost-plain", {})
    dev_server.request("POST", "/v1/rooms", {"name": "cost-e2ee", "e2ee": True})
    for b in (pub, view):
        open_page(b, base)
    secret = measure(dev_server, pub, view, "cost-e2ee", {"e2ee": {"passphrase": "bench"}})
    print(json.dumps({"plain": plain, "e2ee": secret}))
    for key, unit in (("sender_ms_per_frame", "ms"), ("receiver_ms_per_frame", "ms"), ("server_us_per_packet", "us")):
        figures(f"{key}_plain", round(plain[key], 3), unit, "")
        figures(f"{key}_e2ee", round(secret[key], 3), unit, "server: as plain" if key.startswith("server") else "")
    figures("server_cost_ratio_e2ee_to_plain",
            round(secret["server_us_per_packet"] / max(plain["server_us_per_packet"], 1e-9), 2), "x", "about 1")
