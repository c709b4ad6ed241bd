"""The native publisher's CPU per frame (encode and send: `atrium share`, libvpx VP8 1280x720 at
15 fps, cpu-used 8, real time, 1.5 Mbit/s, with SRTP and its sending loop) against ffmpeg's libvpx
encoding the same picture with the same settings and nothing else, over several runs.

`atrium share` publishes into a server (release build, this machine); its CPU time over the run,
divided by the frames it reports sent, is the figure. ffmpeg encodes the same number of frames of
the same stripes picture from raw I420 (`-re`, paced like the publisher) to a null output. The
receiving half of the issue's benchmark (the native viewer) is not built yet.

    python3 bench/native_publisher.py [--runs 3] [--seconds 20]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "e2e", "integration"))
if "ATRIUM_BIN" not in os.environ:
    release = os.path.join(ROOT, ".build", "release", "atrium")
    os.environ["ATRIUM_BIN"] = release if os.path.exists(release) else os.path.join(ROOT, ".build", "debug", "atrium")

from conftest import MEDIA_ARGS, Server  # noqa: E402
from signal_client import mint  # noqa: E402

W, H, FPS = 1280, 720, 15


def stripes_i420():
    """The pattern's picture as raw I420 (NativePublisher's StripesPattern)."""
    y = bytearray([41]) * (W * H)
    u = bytearray([240]) * (W * H // 4)
    v = bytearray([110]) * (W * H // 4)
    for row in range(H):
        for col in range(0, W, 128):
            y[row * W + col:row * W + col + 32] = b"\xeb" * 32
    for row in range(H // 2):
        for col in range(0, W // 2, 64):
            u[row * (W // 2) + col:row * (W // 2) + col + 16] = b"\x80" * 16
            v[row * (W // 2) + col:row * (W // 2) + col + 16] = b"\x80" * 16
    return bytes(y + u + v)


def native_run(server, n, seconds):
    token = mint(server, f"native-bench-{n}", "bot")
    t0 = os.times()
    out = subprocess.run([os.environ["ATRIUM_BIN"], "share", "--url", f"ws://127.0.0.1:{server.port}", "--token",
                          token, "--fps", str(FPS), "--seconds", str(seconds)], capture_output=True, text=True,
                         timeout=seconds + 60)
    t1 = os.times()
    cpu = (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)
    stop = next(json.loads(l) for l in out.stdout.splitlines() if '"stopping"' in l)
    return 1000 * cpu / max(1, stop["framesSent"]), stop["framesSent"]


def ffmpeg_run(frames, path):
    t0 = os.times()
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-re", "-f", "rawvideo", "-pix_fmt", "yuv420p",
                    "-s", f"{W}x{H}", "-r", str(FPS), "-stream_loop", str(frames - 1), "-i", path,
                    "-frames:v", str(frames), "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8",
                    "-b:v", "1500k", "-g", "60", "-threads", "1", "-f", "null", "-"], check=True, timeout=600)
    t1 = os.times()
    cpu = (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)
    return 1000 * cpu / frames


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=20)
    args = ap.parse_args()
    d = tempfile.mkdtemp(prefix="atrium-native-bench-")
    raw = os.path.join(d, "stripes.yuv")
    with open(raw, "wb") as f:
        f.write(stripes_i420())
    server = Server(os.path.join(d, "data"), *MEDIA_ARGS).start()
    rows = []
    try:
        for n in range(args.runs):
            native, frames = native_run(server, n, args.seconds)
            alone = ffmpeg_run(frames, raw)
            rows.append((native, alone))
            print(f"run {n + 1}: atrium share {native:.2f} ms CPU per frame ({frames} frames), "
                  f"ffmpeg libvpx alone {alone:.2f} ms", flush=True)
    finally:
        server.stop()
    nat = statistics.median(r[0] for r in rows)
    alo = statistics.median(r[1] for r in rows)
    print(f"\nnative publisher, VP8 {W}x{H} at {FPS} fps (encode, packetize, SRTP, send), {args.runs} runs of "
          f"{args.seconds:.0f} s, {os.environ['ATRIUM_BIN']}:")
    print(f"  atrium share       median {nat:6.2f} ms CPU per frame")
    print(f"  ffmpeg libvpx alone median {alo:6.2f} ms CPU per frame (same settings, no network)")
    print(f"  ratio {nat / alo:.2f} (target: about 1; the rest is Opus, SRTP and the sending loop)")


if __name__ == "__main__":
    main()
