"""Cluster benchmark (docs/cluster.md): what relaying signaling through a node that does not run the
room costs, and how many relayed signaling messages one Redis carries.

A real redis-server and two Atrium nodes on 127.0.0.1 (e2e/integration/cluster_fixture.py). One room
is made live (its owner is whichever node placement chose); then:

1. Join latency, from before the TCP connect to the `join` result, for `--joins` participants joining
   one at a time through the owner and as many through the other node (relayed over Redis pub/sub):
   p50, p90, p99, max for each, and the difference of the medians.
2. Relayed message rate: `--clients` participants connected through the non-owner each send
   `--rate` pings a second (under the endpoint's per-connection limit) for `--seconds`; every ping and its answer cross Redis once each
   (entry -> owner inbox, owner -> entry inbox). Printed: answered pings per second, Redis
   messages (PUBLISH) per second, and Redis's own count of commands processed per second over the
   run (INFO stats), with the CPU time of each node and of redis-server.

A benchmark, not a test: it asserts nothing about speed. Usage:
    python3 bench/cluster_relay.py [--joins 200] [--clients 100] [--rate 40] [--seconds 10]
ATRIUM_BIN selects the binary (default .build/release/atrium if built, else .build/debug/atrium).
"""
import argparse
import asyncio
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if "ATRIUM_BIN" not in os.environ:
    release = os.path.join(ROOT, ".build", "release", "atrium")
    os.environ["ATRIUM_BIN"] = release if os.path.exists(release) else os.path.join(ROOT, ".build", "debug", "atrium")
sys.path.insert(0, os.path.join(ROOT, "e2e", "integration"))

import websockets  # noqa: E402

from cluster_fixture import Cluster, RedisServer  # noqa: E402
from signal_client import mint, signal_url  # noqa: E402


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


async def join_once(node, token):
    t0 = time.perf_counter()
    async with websockets.connect(signal_url(node, token), ping_interval=None) as ws:
        json.loads(await ws.recv())  # welcome
        await ws.send(json.dumps({"type": "join", "id": 1, "protocol": 1}))
        while True:
            m = json.loads(await ws.recv())
            if m.get("id") == 1:
                assert m["type"] == "result", m
                break
        elapsed = time.perf_counter() - t0
        await ws.send(json.dumps({"type": "leave", "id": 2}))
    return elapsed


async def pinger(node, token, rate, until, counts):
    """One participant sending `rate` pings a second (below the endpoint's 50 messages a second per
    connection) and counting the answers, until `until`."""
    async with websockets.connect(signal_url(node, token), ping_interval=None, max_queue=None) as ws:
        json.loads(await ws.recv())
        await ws.send(json.dumps({"type": "join", "id": 0, "protocol": 1}))
        while json.loads(await ws.recv()).get("id") != 0:
            pass

        async def send():
            next_id = 1
            start = time.perf_counter()
            while time.perf_counter() < until:
                await ws.send(json.dumps({"type": "ping", "id": next_id}))
                next_id += 1
                delay = start + next_id / rate - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)

        sender = asyncio.create_task(send())
        try:
            while time.perf_counter() < until:
                try:
                    m = json.loads(await asyncio.wait_for(ws.recv(), max(0.01, until - time.perf_counter())))
                except asyncio.TimeoutError:
                    break
                if m.get("type") == "result" and isinstance(m.get("id"), int) and m["id"] > 0:
                    counts[0] += 1
        finally:
            sender.cancel()


def redis_commands(redis):
    info = redis.cli("INFO", "stats") or ""
    for line in info.splitlines():
        if line.startswith("total_commands_processed:"):
            return int(line.split(":")[1])
    return 0


async def main(args):
    redis = RedisServer().start()
    cluster = Cluster(redis, 2)
    try:
        cluster.wait_nodes(2)
        n1, n2 = cluster.nodes
        # Make the room live and find its owner.
        probe_token = mint(n1, "bench", "probe")
        async with websockets.connect(signal_url(n1, probe_token), ping_interval=None) as ws:
            await ws.recv()
            await ws.send(json.dumps({"type": "join", "id": 1, "protocol": 1}))
            room_id = json.loads(await ws.recv())["data"]["room"]["id"]
            owner = cluster.node(cluster.owner(room_id))
            other = n2 if owner is n1 else n1
            # Keep the room live through the run.
            latencies = {"owner": [], "relayed": []}
            for i in range(args.joins):
                for label, node in (("owner", owner), ("relayed", other)):
                    latencies[label].append(await join_once(node, mint(node, "bench", f"{label}-{i}")))
            print(f"Cluster join latency, {args.joins} sequential joins each (ms), room owned by {owner.node_id}:")
            print(f"  {'path':<26}{'p50':>8}{'p90':>8}{'p99':>8}{'max':>8}")
            for label, name in (("owner", "through the owner"), ("relayed", "through the other node")):
                v = [x * 1000 for x in latencies[label]]
                print(f"  {name:<26}{pct(v, 50):8.2f}{pct(v, 90):8.2f}{pct(v, 99):8.2f}{max(v):8.2f}")
            diff = (statistics.median(latencies["relayed"]) - statistics.median(latencies["owner"])) * 1000
            print(f"  relay cost (difference of medians): {diff:.2f} ms")

            tokens = [mint(other, "bench", f"pinger-{i}") for i in range(args.clients)]
            counts = [0]
            cpu0 = {n.node_id: cpu_seconds(n.proc.pid) for n in cluster.nodes}
            rcpu0 = cpu_seconds(redis.proc.pid)
            cmd0 = redis_commands(redis)
            t0 = time.perf_counter()
            until = t0 + args.seconds
            await asyncio.gather(*(pinger(other, t, args.rate, until, counts) for t in tokens))
            elapsed = time.perf_counter() - t0
            cmd1 = redis_commands(redis)
            print(f"Relayed signaling: {args.clients} clients through {other.node_id}, {args.rate} pings/s each, "
                  f"{elapsed:.1f} s (offered {args.clients * args.rate} pings/s)")
            print(f"  answered pings/s: {counts[0] / elapsed:,.0f}")
            print(f"  relayed messages/s through Redis (ping + answer): {2 * counts[0] / elapsed:,.0f}")
            print(f"  Redis commands processed/s (INFO stats, all commands): {(cmd1 - cmd0) / elapsed:,.0f}")
            for n in cluster.nodes:
                used = cpu_seconds(n.proc.pid) - cpu0[n.node_id]
                role = "owner" if n is owner else "entry"
                print(f"  CPU {n.node_id} ({role}): {used:.2f} s ({100 * used / elapsed:.0f} % of a core)")
            used = cpu_seconds(redis.proc.pid) - rcpu0
            print(f"  CPU redis-server: {used:.2f} s ({100 * used / elapsed:.0f} % of a core)")
    finally:
        cluster.stop()
        redis.stop()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--joins", type=int, default=200)
    ap.add_argument("--clients", type=int, default=100)
    ap.add_argument("--rate", type=int, default=40)
    ap.add_argument("--seconds", type=float, default=10)
    asyncio.run(main(ap.parse_args()))
