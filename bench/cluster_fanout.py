"""One room across nodes (docs/cluster.md): what a relay hop costs and what the links carry.

A real redis-server and three release nodes on 127.0.0.1 with `--edge-after E`; one native publisher
(camera, screen share, microphone: pre-made RTP with stamps, as bench/viewers_sweep.py) and N native
viewers (`atrium-viewers`), all signaling through the room's owner. The first E - 1 viewers' media is
on the owner (the publisher holds one transport), the rest on the two edges, each fed once by a relay
link. The viewers on the owner run in one `atrium-viewers` process, the first as many on edges in
another (the probes: the same count in a process as lightly loaded, so that the latency difference
is the hop's, not the clients'), and the rest in a third. Per N, over `--seconds` after a warm-up:

- latency p50/p99, microseconds (the stamp's send time to the viewer socket's receive time) on the
  owner and through an edge: their difference is what one hop adds;
- CPU per delivered packet: the owner's (its process CPU over the packets it sent, to its viewers
  and into its links) and each edge's (over the packets it sent to its viewers);
- each relay link's traffic (packets/s and kbit/s) beside the publisher's packet rate: it does not
  grow with the viewers;
- loss per group.

Then the same viewer counts on one node and on three (`--sweep`): the loss each has, and the first
viewer count past 0.1 %, or that none was reached. On this two-core machine every process shares
the two cores: a client above 90 % of a core was the limit, and the report says so.

A benchmark, not a test: it asserts nothing. Usage:
    python3 bench/cluster_fanout.py [--viewers 4,16,48] [--sweep 20,40,80] [--seconds 8] [--runs 2]
ATRIUM_BIN (default .build/release/atrium if built) and atrium-viewers next to it; redis-server.
"""
import argparse
import asyncio
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "e2e", "integration"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
if not os.environ.get("ATRIUM_BIN"):
    os.environ["ATRIUM_BIN"] = next(
        (p for p in (os.path.join(ROOT, ".build/release/atrium"), os.path.join(ROOT, ".build/debug/atrium"))
         if os.path.exists(p)), os.path.join(ROOT, ".build/debug/atrium"))

from cluster_fixture import Cluster, RedisServer   # noqa: E402
from native_peer import AtriumViewer, NativePeers, atrium_publish, wait_connected   # noqa: E402
from signal_client import joined   # noqa: E402
from server_procs import cpu_seconds   # noqa: E402
from viewers_sweep import PUBLISHER_ID, receiving, totals   # noqa: E402

CLIENT_LIMIT = 0.9
LOSS_LIMIT = 0.001


class Setup:
    """`nodes` nodes (one: no edges) with `--edge-after edge_after`, a publisher on the room's owner."""

    def __init__(self, nodes, edge_after, scale=1.0):
        self.scale = scale
        self.redis = RedisServer().start()
        extra = ("--edge-after", str(edge_after)) if nodes > 1 else ()
        self.cluster = Cluster(self.redis, nodes, extra=extra)
        self.cluster.wait_nodes(nodes)
        self.edge_after = edge_after if nodes > 1 else 0
        self.clients = []

    async def start(self):
        probe = await joined(self.cluster.nodes[0], "probe", room="fanout")
        room = probe.snapshot["room"]["id"]
        await probe.leave()
        self.owner = self.cluster.node(self.cluster.owner(room))
        self.edges = [n for n in self.cluster.nodes if n is not self.owner]
        self.pub = await NativePeers.spawn()
        self.direct = await NativePeers.spawn()
        self.far = await NativePeers.spawn()
        self.bulk = await NativePeers.spawn()
        c = await joined(self.owner, "publisher", room="fanout")
        c.start_keepalive(5)
        self.clients.append(c)
        await atrium_publish(c, self.pub, "pub", PUBLISHER_ID)
        await wait_connected(self.pub, ["pub"], 20)
        if self.scale != 1:
            await self.pub.call("scale", value=self.scale)
        self.groups = {"owner": (self.direct, []), "edge": (self.far, []), "bulk": (self.bulk, [])}
        self.viewers = []

    async def add_viewers(self, n):
        for i in range(n):
            on_owner = self.edge_after == 0 or 1 + len(self.groups["owner"][1]) < self.edge_after
            probes = max(1, self.edge_after - 1)
            group = "owner" if on_owner else "edge" if len(self.groups["edge"][1]) < probes else "bulk"
            peers, ids = self.groups[group]
            c = await joined(self.owner, f"v{len(self.viewers)}", room="fanout", role="viewer")
            c.start_keepalive(5)
            self.clients.append(c)
            ids.append(f"v{len(self.viewers)}")
            self.viewers.append(AtriumViewer(c, peers, ids[-1]))
        for peers, ids in self.groups.values():
            if ids and not await receiving(peers, ids, 15):
                print(f"  (not every viewer received every source within 60 s: {len(ids)} viewers)")

    async def stop(self):
        for v in self.viewers:
            await v.close()
        for c in self.clients:
            await c.close()
        for p in (self.pub, self.direct, self.far, self.bulk):
            await p.close()
        self.cluster.stop()
        self.redis.stop()


def link_figures(node):
    """The owner's relay links: (packets, bytes) sent over all, and how many links."""
    return (node.metric("atrium_relay_link_packets_total", direction="out"),
            node.metric("atrium_relay_link_bytes_total", direction="out"),
            node.metric("atrium_relay_link_up", side="owner"))


async def window(s, seconds):
    nodes = [s.owner] + s.edges
    stats0 = {g: await p.call("stats") for g, (p, ids) in s.groups.items() if ids}
    pub0 = await s.pub.call("stats")
    cpu0 = {n.node_id: cpu_seconds(n.proc.pid) for n in nodes}
    out0 = {n.node_id: n.metric("atrium_media_packets_total", direction="out") for n in nodes}
    link0 = link_figures(s.owner)
    t0 = time.monotonic()
    await asyncio.sleep(seconds)
    elapsed = time.monotonic() - t0
    cpu1 = {n.node_id: cpu_seconds(n.proc.pid) for n in nodes}
    # The nodes copy their figures out about once a second.
    await asyncio.sleep(1.2)
    out1 = {n.node_id: n.metric("atrium_media_packets_total", direction="out") for n in nodes}
    link1 = link_figures(s.owner)
    stats1 = {g: await p.call("stats") for g, (p, ids) in s.groups.items() if ids}
    pub1 = await s.pub.call("stats")
    r = {"elapsed": elapsed, "groups": {}, "nodes": {}}
    for g, (peers, ids) in s.groups.items():
        if not ids:
            continue
        p0, l0 = totals(stats0[g], ids)
        p1, l1 = totals(stats1[g], ids)
        r["groups"][g] = {"viewers": len(ids), "delivered": p1 - p0, "lost": l1 - l0,
                          "loss": (l1 - l0) / max(1, p1 - p0 + l1 - l0),
                          "p50": stats1[g]["latency"]["p50"], "p99": stats1[g]["latency"]["p99"],
                          "client_cpu": (stats1[g]["cpu"] - stats0[g]["cpu"]) / elapsed}
    for n in nodes:
        sent = out1[n.node_id] - out0[n.node_id]
        cpu = cpu1[n.node_id] - cpu0[n.node_id]
        r["nodes"][n.node_id] = {"owner": n is s.owner, "sent": sent, "cpu": cpu / elapsed,
                                 "us_per_packet": 1e6 * cpu / sent if sent else None}
    links = max(1, link1[2])
    r["links"] = link1[2]
    r["link_pps"] = (link1[0] - link0[0]) / elapsed / links
    r["link_kbps"] = 8 * (link1[1] - link0[1]) / elapsed / 1000 / links
    sent = sum(x["packets"] for x in pub1["peers"]["pub"]["sent"]) - sum(
        x["packets"] for x in pub0["peers"]["pub"]["sent"])
    r["publisher_pps"] = sent / elapsed
    r["publisher_cpu"] = (pub1["cpu"] - pub0["cpu"]) / elapsed
    return r


async def run_one(nodes, edge_after, n, args, scale=1.0):
    s = Setup(nodes, edge_after, scale)
    try:
        await s.start()
        await s.add_viewers(n)
        await asyncio.sleep(args.warmup)
        return await window(s, args.seconds)
    finally:
        await s.stop()


def limit(r):
    busy = [g for g, x in r["groups"].items() if x["client_cpu"] > CLIENT_LIMIT]
    if r["publisher_cpu"] > CLIENT_LIMIT:
        busy.append("publisher")
    return f"client limit: {', '.join(busy)}" if busy else ""


def fmt(v, f="{:.1f}"):
    return "-" if v is None else f.format(v)


async def main_async(args):
    print(f"cluster fan-out: 3 nodes, --edge-after {args.edge_after}, {args.seconds} s windows, "
          f"{args.runs} runs; atrium {os.environ['ATRIUM_BIN']}")
    print("\nper hop (viewers on the owner against viewers on an edge)")
    print(f"{'viewers':>8} {'run':>4} {'owner p50/p99 us':>18} {'edge p50/p99 us':>18} {'hop adds p50/p99':>18} "
          f"{'owner us/pkt':>13} {'edge us/pkt':>12} {'link pkt/s':>11} {'link kbit/s':>12} {'pub pkt/s':>10} "
          f"{'loss':>8}  note")
    added = []
    for n in args.viewers:
        for run in range(args.runs):
            r = await run_one(3, args.edge_after, n, args)
            o, e = r["groups"].get("owner"), r["groups"].get("edge")
            owner = next(x for x in r["nodes"].values() if x["owner"])
            edges = [x for x in r["nodes"].values() if not x["owner"] and x["sent"]]
            edge_us = statistics.mean(x["us_per_packet"] for x in edges) if edges else None
            hop = (e["p50"] - o["p50"], e["p99"] - o["p99"]) if o and e and o["p50"] is not None else None
            if hop:
                added.append(hop)
            loss = max(x["loss"] for x in r["groups"].values())
            print(f"{n:>8} {run + 1:>4} {fmt(o and o['p50'], '{:.0f}') + '/' + fmt(o and o['p99'], '{:.0f}'):>18} "
                  f"{fmt(e and e['p50'], '{:.0f}') + '/' + fmt(e and e['p99'], '{:.0f}'):>18} "
                  f"{(fmt(hop[0], '{:+.0f}') + '/' + fmt(hop[1], '{:+.0f}')) if hop else '-':>18} "
                  f"{fmt(owner['us_per_packet']):>13} {fmt(edge_us):>12} {r['link_pps']:>11.0f} "
                  f"{r['link_kbps']:>12.0f} {r['publisher_pps']:>10.0f} {loss:>8.4%}  {limit(r)}")
    if added:
        print(f"one hop adds, median over runs: p50 {statistics.median(h[0] for h in added):+.0f} us, "
              f"p99 {statistics.median(h[1] for h in added):+.0f} us (target: under 1 ms on one host)")

    print(f"\none node against three: loss by viewer count, the publisher's packets x{args.scale} "
          "(target: the three-node room past 0.1 % later)")
    print(f"{'viewers':>8} {'nodes':>6} {'loss':>9} {'servers cpu':>12} {'clients cpu':>12}  note")
    first = {1: None, 3: None}
    for n in args.sweep:
        for nodes in (1, 3):
            losses, notes = [], []
            for _ in range(args.runs):
                r = await run_one(nodes, args.edge_after, n, args, args.scale)
                losses.append(max(x["loss"] for x in r["groups"].values()))
                cpu = sum(x["client_cpu"] for x in r["groups"].values())
                servers = sum(x["cpu"] for x in r["nodes"].values())
                notes.append(limit(r))
            loss = statistics.median(losses)
            if loss > LOSS_LIMIT and first[nodes] is None:
                first[nodes] = n
            print(f"{n:>8} {nodes:>6} {loss:>9.4%} {servers:>12.2f} {cpu:>12.2f}  {'; '.join(x for x in notes if x)}")
    for nodes in (1, 3):
        print(f"{nodes} node(s): loss past 0.1 % first at " + (
            f"{first[nodes]} viewers" if first[nodes] else f"none of {args.sweep} viewers"))
    print("(every node and client shares this machine's cores: the servers' and clients' CPU above, in cores)")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--viewers", default="4,16,48")
    p.add_argument("--sweep", default="80,160,320")
    p.add_argument("--edge-after", type=int, default=3)
    p.add_argument("--seconds", type=float, default=8)
    p.add_argument("--warmup", type=float, default=3)
    p.add_argument("--runs", type=int, default=2)
    p.add_argument("--scale", type=float, default=4,
                   help="the publisher's video packets per frame, times (the sweep: more load per viewer)")
    args = p.parse_args()
    args.viewers = [int(x) for x in args.viewers.split(",") if x]
    args.sweep = [int(x) for x in args.sweep.split(",") if x]
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
