"""WHIP: time from the publisher's POST to the first frame a viewer decodes.

GStreamer's webrtcbin (e2e/integration/gst_whip.py, a 1280x720 VP8 picture, a key frame at least
every 2 s) publishes into a room with one POST; an aiortc viewer already in the room is offered the
share and decodes it. The figure is from just before the POST (the publisher's CLOCK_MONOTONIC
reading) to the viewer's first decoded frame (the same clock), over `--runs` runs, each with a new
publisher. It runs in a private network namespace (libnice gathers no loopback candidate: a veth
address inside it carries the publisher's media). Target: none given by the issue beyond "measured";
a page viewer (Chromium) would add its own decoder start-up.

    sudo python3 bench/whip_first_frame.py [--runs 5]
"""
import argparse
import asyncio
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INTEGRATION = os.path.join(ROOT, "e2e", "integration")
sys.path.insert(0, INTEGRATION)
if "ATRIUM_BIN" not in os.environ:
    release = os.path.join(ROOT, ".build", "release", "atrium")
    os.environ["ATRIUM_BIN"] = release if os.path.exists(release) else os.path.join(ROOT, ".build", "debug", "atrium")

VETH = "10.9.2.1"


def inner(runs):
    spec = importlib.util.spec_from_file_location("atrium_harness", os.path.join(INTEGRATION, "conftest.py"))
    harness = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(harness)
    from media_peer import Subscriber
    from signal_client import joined, mint
    from whip_peer import GstWhip

    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run(["ip", "link", "add", "wb0", "type", "veth", "peer", "name", "wb1"], check=True)
    subprocess.run(["ip", "addr", "add", f"{VETH}/24", "dev", "wb0"], check=True)
    for d in ("wb0", "wb1"):
        subprocess.run(["ip", "link", "set", d, "up"], check=True)
    server = harness.Server(os.path.join(tempfile.mkdtemp(prefix="atrium-whip-bench-"), "data"), "--dev", "--store",
                            "memory", "--auto-create-rooms", "any", "--udp-port", "0", "--media-bind", "0.0.0.0",
                            "--media-announce", f"127.0.0.1,{VETH}").start()

    async def one(n):
        room = f"whip-bench-{n}"
        viewer = await joined(server, "viewer", room=room)
        sub = Subscriber(viewer)
        pub = await GstWhip.start(f"http://127.0.0.1:{server.port}/v1/rooms/{room}/whip", mint(server, room, "obs"))
        try:
            e = await pub.event()
            assert e["status"] == 201, e
            started = await viewer.expect("share_started", timeout=20)
            track = started["share"]["trackId"]
            await sub.wait_frames([track], 1, timeout=30)
            return (sub.by_track(track).first_frame_at - pub.posted_at) * 1000
        finally:
            if pub.proc.returncode is None:
                await pub.stop()
            await pub.close()
            await sub.close()
            await viewer.close()

    try:
        times = [asyncio.run(one(n)) for n in range(runs)]
    finally:
        server.stop()
    print(f"WHIP POST to the viewer's first decoded frame ({os.environ['ATRIUM_BIN']}), {runs} runs:")
    print("  " + ", ".join(f"{t:.0f} ms" for t in times))
    print(f"  median {statistics.median(times):.0f} ms, max {max(times):.0f} ms")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.inside:
        inner(args.runs)
        return
    # A private network namespace of its own.
    r = subprocess.run(["unshare", "--net", "--", sys.executable, os.path.abspath(__file__), "--inside",
                        "--runs", str(args.runs)], env=os.environ)
    sys.exit(r.returncode)


if __name__ == "__main__":
    main()
