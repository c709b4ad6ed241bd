"""The native client's CPU per frame at VP8 1280x720, 15 fps, over several runs, each beside ffmpeg's
libvpx doing the same work alone:

- publisher (`atrium share`: encode with cpu-used 8, real time, 1.5 Mbit/s; packetize, SRTP, send)
  against ffmpeg encoding the same stripes picture from raw I420 (`-re`, paced alike) to nothing;
- viewer (`atrium watch`: receive, SRTP, assemble, NACK, decode) against ffmpeg decoding the very
  frames the viewer received (its `--out` IVF file) to nothing.

Both run against a server (release build, this machine) in the same room; each process's own CPU
time (wait4) over the frames it reports is the figure.

    python3 bench/native_publisher.py [--runs 3] [--seconds 20]
"""
import argparse
import json
import os
import re
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


def finish(proc, timeout):
    """A child's exit, its own CPU seconds (wait4) and its stopping line."""
    deadline = time.time() + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.time() > deadline:
            proc.kill()
        time.sleep(0.1)
    proc.returncode = os.waitstatus_to_exitcode(status)
    out = proc.stdout.read()
    stop = next(json.loads(l) for l in out.splitlines() if '"stopping"' in l)
    return usage.ru_utime + usage.ru_stime, stop


def native_run(server, n, seconds, ivf):
    """`atrium share` and, a second later, `atrium watch` of it in the same room."""
    room = f"native-bench-{n}"
    url = f"ws://127.0.0.1:{server.port}"
    share = subprocess.Popen([os.environ["ATRIUM_BIN"], "share", "--url", url, "--token", mint(server, room, "bot"),
                              "--fps", str(FPS), "--seconds", str(seconds)], stdout=subprocess.PIPE, text=True)
    time.sleep(1)
    watch = subprocess.Popen([os.environ["ATRIUM_BIN"], "watch", "--url", url, "--token",
                              mint(server, room, "viewer"), "--seconds", str(seconds - 3), "--out", ivf],
                             stdout=subprocess.PIPE, text=True)
    watch_cpu, watched = finish(watch, seconds + 60)
    share_cpu, shared = finish(share, seconds + 60)
    return (1000 * share_cpu / max(1, shared["framesSent"]), shared["framesSent"],
            1000 * watch_cpu / max(1, watched["frames"]), watched["frames"])


def ffmpeg_run(frames, path):
    t0 = os.times()
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-re", "-f", "rawvideo", "-pix_fmt", "yuv420p",
                    "-s", f"{W}x{H}", "-r", str(FPS), "-stream_loop", str(frames - 1), "-i", path,
                    "-frames:v", str(frames), "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8",
                    "-b:v", "1500k", "-g", "60", "-threads", "1", "-f", "null", "-"], check=True, timeout=600)
    t1 = os.times()
    cpu = (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)
    return 1000 * cpu / frames


def ffmpeg_decode(ivf):
    """ffmpeg's libvpx decoding an IVF file to nothing: CPU ms per frame."""
    t0 = os.times()
    out = subprocess.run(["ffmpeg", "-hide_banner", "-threads", "1", "-c:v", "libvpx", "-i", ivf, "-f", "null", "-"],
                         check=True, timeout=600, capture_output=True, text=True)
    t1 = os.times()
    cpu = (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)
    frames = int(re.findall(r"frame=\s*(\d+)", out.stderr)[-1])
    return 1000 * cpu / max(1, frames)


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
            ivf = os.path.join(d, f"watched-{n}.ivf")
            native, frames, viewer, watched = native_run(server, n, args.seconds, ivf)
            alone = ffmpeg_run(frames, raw)
            decode = ffmpeg_decode(ivf)
            rows.append((native, alone, viewer, decode))
            print(f"run {n + 1}: atrium share {native:.2f} ms CPU per frame ({frames} frames), "
                  f"ffmpeg libvpx encode alone {alone:.2f} ms; atrium watch {viewer:.2f} ms ({watched} frames), "
                  f"ffmpeg libvpx decode alone {decode:.2f} ms", flush=True)
    finally:
        server.stop()
    nat = statistics.median(r[0] for r in rows)
    alo = statistics.median(r[1] for r in rows)
    print(f"\nnative publisher, VP8 {W}x{H} at {FPS} fps (encode, packetize, SRTP, send), {args.runs} runs of "
          f"{args.seconds:.0f} s, {os.environ['ATRIUM_BIN']}:")
    print(f"  atrium share       median {nat:6.2f} ms CPU per frame")
    print(f"  ffmpeg libvpx alone median {alo:6.2f} ms CPU per frame (same settings, no network)")
    print(f"  ratio {nat / alo:.2f} (target: about 1; the rest is Opus, SRTP and the sending loop)")
    vie = statistics.median(r[2] for r in rows)
    dec = statistics.median(r[3] for r in rows)
    print(f"native viewer, the same stream received (SRTP, assembly, NACK, decode, Opus decode):")
    print(f"  atrium watch        median {vie:6.2f} ms CPU per frame")
    print(f"  ffmpeg libvpx alone median {dec:6.2f} ms CPU per frame (decoding the frames the viewer received)")
    print(f"  ratio {vie / dec:.2f} (target: about 1; the rest is Opus at 50 packets a second, SRTP and the loop)")


if __name__ == "__main__":
    main()
