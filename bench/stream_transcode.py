"""Live streaming: CPU per transcoded stream (a VP8 1280x720 share to H.264/AAC over RTMP) against
ffmpeg alone on the same input.

An aiortc sharer sends its busy screen (media_peer.BusyScreenTrack: VP8, 1280x720, 30 fps, noise in
every frame so the encoder spends its budget) into a room; the server streams the share to nginx
(libnginx-mod-rtmp) and records it (a copy, WebM) at the same time. Over `--seconds`, the stream's
ffmpeg and the server are sampled from /proc. Then ffmpeg alone transcodes the recorded WebM, paced
in real time (`-re`), with the same encoder settings (docs/streaming.md) to the same nginx: the
difference is what the server's way of feeding ffmpeg (RTP on loopback, the lines' filler) costs.
CPU is in percent of one core. The sharer (aiortc's VP8 encoder) runs on the same 2 cores: when it
cannot keep 30 fps, the line says so (`sender fps`) and the client was the limit.

    python3 bench/stream_transcode.py [--runs 3] [--seconds 20]
"""
import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INTEGRATION = os.path.join(ROOT, "e2e", "integration")
sys.path.insert(0, INTEGRATION)
if "ATRIUM_BIN" not in os.environ:
    release = os.path.join(ROOT, ".build", "release", "atrium")
    os.environ["ATRIUM_BIN"] = release if os.path.exists(release) else os.path.join(ROOT, ".build", "debug", "atrium")

from conftest import MEDIA_ARGS, Server  # noqa: E402
from media_peer import Publisher  # noqa: E402
from signal_client import joined  # noqa: E402
from test_streaming import Nginx  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def stream_pid(sid):
    out = subprocess.run(["pgrep", "-f", f"{sid}/input-"], capture_output=True, text=True).stdout.split()
    return int(out[0]) if out else None


async def wait_state(server, path, states, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        status, _, _, body = server.request("GET", path)
        if status == 200 and body["state"] in states:
            return body
        assert time.monotonic() < deadline, body
        await asyncio.sleep(0.2)


async def one_run(server, nginx, n, seconds):
    room = f"bench-stream-{n}"
    alice = await joined(server, "alice", room=room)
    alice.start_keepalive(5)
    pub = await Publisher.start(alice, ["screen_share"], busy=["screen_share"], fps=30, vbr_vp8=True)
    try:
        share = (await alice.expect("share_started"))["share"]
        await asyncio.sleep(2)
        status, _, _, rec = server.request("POST", f"/v1/rooms/{room}/recordings", {"what": "share"})
        assert status == 201, rec
        status, _, _, st = server.request("POST", f"/v1/rooms/{room}/streams", {"rtmpUrl": nginx.url(f"bench{n}")})
        assert status == 201, st
        await wait_state(server, f"/v1/rooms/{room}/streams/{st['id']}", ["live"])
        await asyncio.sleep(3)      # past ffmpeg's start-up
        pid = stream_pid(st["id"])
        s0, f0, t0 = cpu_seconds(server.proc.pid), cpu_seconds(pid), time.monotonic()
        sent0 = (await pub.stats())["sent"]["screen_share"]
        await asyncio.sleep(seconds)
        s1, f1, t1 = cpu_seconds(server.proc.pid), cpu_seconds(pid), time.monotonic()
        sent1 = (await pub.stats())["sent"]["screen_share"]
        server.request("DELETE", f"/v1/rooms/{room}/streams/{st['id']}")
        server.request("DELETE", f"/v1/rooms/{room}/recordings/{rec['id']}")
        done = await wait_state(server, f"/v1/rooms/{room}/recordings/{rec['id']}", ["finished", "failed"])
        wall = t1 - t0
        fps = None
        return {"ffmpeg": 100 * (f1 - f0) / wall, "server": 100 * (s1 - s0) / wall, "file": done["path"],
                "packets_per_s": (sent1 - sent0) / wall, "fps": fps}
    finally:
        await pub.close()
        await alice.close()


def ffmpeg_alone(path, url):
    """ffmpeg transcoding the recorded input in real time with the stream's settings: its CPU %."""
    args = ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-re", "-i", path, "-map", "0:v:0",
            "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-pix_fmt", "yuv420p", "-r", "30",
            "-fps_mode", "cfr", "-g", "60", "-keyint_min", "60", "-sc_threshold", "0", "-b:v", "3000k",
            "-maxrate", "3000k", "-bufsize", "6000k", "-an", "-f", "flv", url]
    t0 = time.monotonic()
    before = os.times()
    subprocess.run(args, check=True, timeout=300)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return 100 * cpu / (time.monotonic() - t0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=20)
    args = ap.parse_args()
    d = tempfile.mkdtemp(prefix="atrium-stream-bench-")
    nginx = Nginx(os.path.join(d, "nginx"))
    server = Server(os.path.join(d, "data"), *MEDIA_ARGS).start()
    rows = []
    try:
        for n in range(args.runs):
            r = asyncio.run(one_run(server, nginx, n, args.seconds))
            r["alone"] = ffmpeg_alone(r["file"], nginx.url(f"alone{n}"))
            rows.append(r)
            print(f"run {n + 1}: stream ffmpeg {r['ffmpeg']:.0f} %, server {r['server']:.1f} %, "
                  f"ffmpeg alone {r['alone']:.0f} % of a core; sharer {r['packets_per_s']:.0f} RTP packets/s",
                  flush=True)
    finally:
        server.stop()
        nginx.stop()
    print(f"\nCPU per transcoded stream (VP8 1280x720 busy screen -> H.264 3 Mbit/s + AAC, RTMP), "
          f"{args.runs} runs of {args.seconds:.0f} s, {os.environ['ATRIUM_BIN']}:")
    for key, label in (("ffmpeg", "the stream's ffmpeg"), ("alone", "ffmpeg alone, same input"),
                       ("server", "the server (receiving the share, feeding ffmpeg)")):
        v = [r[key] for r in rows]
        print(f"  {label:52} median {statistics.median(v):6.1f} %  (runs: {', '.join(f'{x:.0f}' for x in v)})")
    ratio = statistics.median(r["ffmpeg"] / r["alone"] for r in rows if r["alone"] > 0)
    print(f"  stream ffmpeg / ffmpeg alone: {ratio:.2f} (target: about 1; the audio transcode is the stream's only extra)")


if __name__ == "__main__":
    main()
