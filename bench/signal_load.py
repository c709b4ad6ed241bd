"""Signaling load benchmark: joins N WebSocket participants across R rooms on 127.0.0.1 and prints join
latency (connect + auth + join result) p50/p99, throughput and the server's RSS.

A benchmark, not a test: it asserts nothing about speed. Usage:
    python3 bench/signal_load.py [--participants 1000] [--rooms 100] [--concurrency 100]
It starts its own server (ATRIUM_BIN, default .build/release/atrium if built, else .build/debug/atrium) and stops it.
"""
import argparse
import asyncio
import base64
import hashlib
import hmac
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import tempfile
import time

import websockets

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def b64(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=")


def token(key, secret, room, identity):
    now = int(time.time())
    head = b64(b'{"alg":"HS256","typ":"JWT"}')
    body = b64(json.dumps({"iss": key, "sub": identity, "iat": now, "exp": now + 3600, "grants": {
        "room": room, "roomJoin": True, "roomCreate": True, "canPublish": True, "canSubscribe": True,
        "role": "participant"}}).encode())
    sig = b64(hmac.new(secret.encode(), head + b"." + body, hashlib.sha256).digest())
    return (head + b"." + body + b"." + sig).decode()


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def run(args, port, key, secret):
    latencies = []
    conns = []
    sem = asyncio.Semaphore(args.concurrency)

    async def join(i):
        async with sem:
            t0 = time.perf_counter()
            ws = await websockets.connect(f"ws://127.0.0.1:{port}/v1/signal?access_token="
                                          + token(key, secret, f"load-{i % args.rooms}", f"user-{i}"),
                                          max_queue=None, ping_interval=None)
            await ws.recv()  # welcome
            await ws.send(json.dumps({"type": "join", "id": 1, "protocol": 1, "autoSubscribe": True}))
            while True:
                msg = json.loads(await ws.recv())
                if msg.get("type") in ("result", "error") and msg.get("id") == 1:
                    break
            if msg["type"] == "error":
                raise RuntimeError(msg)
            latencies.append(time.perf_counter() - t0)
            conns.append(ws)

    async def drain(ws):
        try:
            async for _ in ws:
                pass
        except websockets.ConnectionClosed:
            pass

    t0 = time.perf_counter()
    await asyncio.gather(*(join(i) for i in range(args.participants)))
    elapsed = time.perf_counter() - t0
    drains = [asyncio.create_task(drain(ws)) for ws in conns]
    await asyncio.sleep(0.5)
    return latencies, elapsed, conns, drains


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--participants", type=int, default=1000)
    ap.add_argument("--rooms", type=int, default=100)
    ap.add_argument("--concurrency", type=int, default=100)
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))
    binary = os.environ.get("ATRIUM_BIN") or next(
        p for p in (os.path.join(ROOT, ".build/release/atrium"), os.path.join(ROOT, ".build/debug/atrium")) if os.path.exists(p))
    data = tempfile.mkdtemp(prefix="atrium-bench-")
    key, secret = "bench", "b" * 40
    err = open(os.path.join(data, "stderr.log"), "w+")
    proc = subprocess.Popen([binary, "serve", "--port", "0", "--udp-port", "0", "--store", "memory", "--data-dir", data,
                             "--keys", f"{key}:{secret}", "--auto-create-rooms", "grant"],
                            stdout=subprocess.DEVNULL, stderr=err)
    port = None
    deadline = time.time() + 10
    while port is None and time.time() < deadline:
        m = re.search(r"msg=listening .*port=(\d+)", open(err.name).read())
        port = int(m.group(1)) if m else None
        time.sleep(0.05)
    try:
        base_rss = rss_kib(proc.pid)
        latencies, elapsed, conns, drains = asyncio.run(run(args, port, key, secret))
        latencies.sort()
        p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000
        rss = rss_kib(proc.pid)
        print(f"binary: {binary}")
        print(f"participants joined: {len(latencies)} in {args.rooms} rooms, concurrency {args.concurrency}")
        print(f"join latency ms: p50 {p(0.50):.2f}  p90 {p(0.90):.2f}  p99 {p(0.99):.2f}  max {latencies[-1]*1000:.2f}")
        print(f"joins per second: {len(latencies) / elapsed:.0f} (wall {elapsed:.2f} s)")
        print(f"server RSS: {rss / 1024:.1f} MiB ({base_rss / 1024:.1f} MiB idle, "
              f"{(rss - base_rss) / max(1, len(latencies)):.1f} KiB per participant)")
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
