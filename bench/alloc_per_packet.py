"""Heap allocations per forwarded packet in the media server (`make bench`).

Builds bench/malloc_count.c (a malloc-counting LD_PRELOAD), starts the server with it, has one aiortc
publisher (camera, screen, microphone) send to three subscribers through it, and reads the allocation
count and the server's forwarded-packet counter at the start and the end of a steady window. Prints
allocations per forwarded packet: the Swift packet path allocates nothing; what remains is the SRTP
library's (Debian's libsrtp2 uses NSS, which allocates per operation) and the control traffic's
(STUN consent, RTCP, the signaling thread). All traffic on 127.0.0.1.
"""
import argparse
import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "e2e", "integration"))
from media_peer import Publisher, Subscriber   # noqa: E402
from signal_client import connect              # noqa: E402


class Target:
    """What signal_client.connect needs of a server."""
    def __init__(self, port, key, secret):
        self.port, self.key, self.secret = port, key, secret


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def measure(binary, seconds, subscribers):
    work = tempfile.mkdtemp(prefix="atrium-alloc-")
    shim = os.path.join(work, "malloc_count.so")
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", shim, os.path.join(ROOT, "bench", "malloc_count.c"), "-ldl"],
                   check=True)
    port = free_port()
    err_path = os.path.join(work, "stderr.log")
    server = subprocess.Popen([binary, "serve", "--dev", "--store", "memory", "--port", str(port), "--udp-port", "0",
                               "--data-dir", os.path.join(work, "data"), "--auto-create-rooms", "any"],
                              stdout=subprocess.DEVNULL, stderr=open(err_path, "w"),
                              env=dict(os.environ, LD_PRELOAD=shim))
    opened = []
    try:
        key_file = os.path.join(work, "data", "dev-key.json")
        for _ in range(100):
            if os.path.exists(key_file) and "msg=listening" in open(err_path).read():
                break
            time.sleep(0.05)
        creds = json.load(open(key_file))
        target = Target(port, creds["key"], creds["secret"])
        alice = await connect(target, "alice", room="alloc")
        await alice.join()
        opened.append(alice)
        for i in range(subscribers):
            c = await connect(target, f"sub{i}", room="alloc")
            await c.join()
            opened.append(c)
            opened.append(Subscriber(c))
        pub = await Publisher.start(alice, ["camera", "screen_share", "microphone"])
        opened.append(pub)
        await asyncio.sleep(5)     # every subscriber receiving, key frames through

        def sample():
            body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read().decode()
            forwarded = int(re.search(r'atrium_media_packets_total\{direction="out"\} (\d+)', body).group(1))
            server.send_signal(signal.SIGUSR2)
            time.sleep(0.2)
            mallocs = int(re.findall(r"MALLOCS (\d+)", open(err_path).read())[-1])
            return forwarded, mallocs

        f0, m0 = await asyncio.to_thread(sample)
        await asyncio.sleep(seconds)
        f1, m1 = await asyncio.to_thread(sample)
        return f1 - f0, m1 - m0
    finally:
        for x in reversed(opened):
            try:
                await asyncio.wait_for(x.close(), 10)
            except Exception:
                pass
        server.terminate()
        server.wait(10)
        subprocess.run(["rm", "-rf", work])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--subscribers", type=int, default=3)
    args = ap.parse_args()
    binary = os.environ.get("ATRIUM_BIN", os.path.join(ROOT, ".build", "release", "atrium"))
    forwarded, mallocs = asyncio.run(measure(binary, args.seconds, args.subscribers))
    print(f"allocations per forwarded packet ({binary}, 1 publisher, {args.subscribers} subscribers, "
          f"{args.seconds:.0f} s): {mallocs} allocations / {forwarded} packets = {mallocs / max(1, forwarded):.2f}")


if __name__ == "__main__":
    main()
