"""Data beside media: how many messages the hub carries in a large room, and the pointer's latency.

1. Fan-out over signaling: one room of `--participants` (200) WebSocket participants; `--senders` of
   them send `send_data` messages (topic `bench`, the send time in the payload) at a total rate that
   steps through `--rates` messages a second, `--seconds` each (each sender within the per-participant
   budget of 30 a second). Per step: messages sent and delivered (every other participant gets each
   one), deliveries per second, delivery latency p50/p99 (send to receipt, one clock: the clients
   share this process), the server's CPU (/proc/PID/stat) and this client process's CPU (when it is
   near 100 % of a core, the client, not the server, was the limit).
2. The pointer over data channels: one aiortc sender and `--viewers` aiortc receivers, each with a
   lossy channel; the sender sends 30 positions a second for `--seconds`; latency p50/p99 sender to
   receiver, and the messages lost. The same stream over signaling (`send_data`) beside it.

Janus is not run beside it: its TextRoom plugin carries messages on data channels only, so the same
fan-out would need 200 WebRTC peers on Janus's side and 200 aiortc peers here, which this 2-core
machine cannot drive; the figures stand alone. A benchmark, not a test: it asserts nothing. Usage:
    python3 bench/data_fanout.py [--participants 200] [--senders 20] [--rates 100,300,600]
                                 [--seconds 5] [--viewers 5] [--runs 3]
It starts its own server on 127.0.0.1 (ATRIUM_BIN, default .build/release/atrium if built).
"""
import argparse
import asyncio
import importlib.util
import json
import os
import resource
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INTEGRATION = os.path.join(ROOT, "e2e", "integration")
sys.path.insert(0, INTEGRATION)
if "ATRIUM_BIN" not in os.environ:
    release = os.path.join(ROOT, ".build", "release", "atrium")
    os.environ["ATRIUM_BIN"] = release if os.path.exists(release) else os.path.join(ROOT, ".build", "debug", "atrium")

_spec = importlib.util.spec_from_file_location("atrium_harness", os.path.join(INTEGRATION, "conftest.py"))
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)

from data_peer import DataPeer  # noqa: E402
from signal_client import close_all, joined  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


def server_cpu(pid):
    """The process's user + system CPU seconds so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def own_cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def pct(values, p):
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


async def fanout(server, args, room):
    clients = []
    for i in range(args.participants):
        clients.append(await joined(server, f"p{i}", room=room))
    latencies = []
    delivered = 0

    # Count deliveries as they are buffered: drain every client's event list in a background task.
    stop = asyncio.Event()

    async def drain(c):
        nonlocal delivered
        while not stop.is_set():
            c._arrived.clear()  # noqa: SLF001
            got = [m for m in c.events if m.get("type") == "data" and m.get("topic") == "bench"]
            if got:
                now = time.monotonic()
                c.events[:] = [m for m in c.events if not (m.get("type") == "data" and m.get("topic") == "bench")]
                for m in got:
                    latencies.append(now - json.loads(m["payload"])["t"])
                delivered += len(got)
            else:
                c.events.clear()
            try:
                await asyncio.wait_for(c._arrived.wait(), 0.5)  # noqa: SLF001
            except asyncio.TimeoutError:
                pass

    drains = [asyncio.create_task(drain(c)) for c in clients]
    senders = clients[: args.senders]
    results = []
    try:
        for rate in args.rates:
            latencies.clear()
            delivered = 0
            per_sender = rate / len(senders)
            sent = 0
            cpu0, own0, t0 = server_cpu(server.proc.pid), own_cpu(), time.monotonic()
            end = t0 + args.seconds
            n = 0
            while time.monotonic() < end:
                tick = time.monotonic()
                for s in senders:
                    await s.send_json({"type": "send_data", "topic": "bench",
                                       "payload": json.dumps({"t": time.monotonic(), "n": n})})
                    sent += 1
                n += 1
                await asyncio.sleep(max(0.0, 1 / per_sender - (time.monotonic() - tick)))
            await asyncio.sleep(1.0)  # the last deliveries
            elapsed = time.monotonic() - t0
            results.append({
                "rate": rate, "sent": sent, "expected": sent * (args.participants - 1), "delivered": delivered,
                "per_second": delivered / elapsed, "p50_ms": pct(latencies, 50) * 1000,
                "p99_ms": pct(latencies, 99) * 1000,
                "server_cpu": (server_cpu(server.proc.pid) - cpu0) / elapsed * 100,
                "client_cpu": (own_cpu() - own0) / elapsed * 100,
            })
    finally:
        stop.set()
        for d in drains:
            d.cancel()
        await close_all(*clients)
    return results


async def pointer(server, args, room):
    sender = await joined(server, "sharer", room=room)
    viewers = [await joined(server, f"v{i}", room=room) for i in range(args.viewers)]
    peers = []
    try:
        s = await DataPeer.start(sender)
        peers.append(s)
        for v in viewers:
            peers.append(await DataPeer.start(v))
        sent_at = {}
        count = int(30 * args.seconds)
        for seq in range(count):
            sent_at[seq] = time.monotonic()
            s.send("lossy", "pointer", json.dumps({"seq": seq, "x": 0.5, "y": 0.5}))
            await asyncio.sleep(1 / 30)
        await asyncio.sleep(1.0)
        channel = []
        lost = 0
        for p in peers[1:]:
            got = {json.loads(m["payload"])["seq"]: t for m, t in zip(p.received["lossy"], p.arrived["lossy"])}
            lost += count - len(got)
            channel += [t - sent_at[q] for q, t in got.items()]
        return {"count": count, "viewers": len(viewers), "lost": lost,
                "p50_ms": pct(channel, 50) * 1000, "p99_ms": pct(channel, 99) * 1000}
    finally:
        for p in peers:
            await p.close()
        await close_all(sender, *viewers)


async def pointer_signaling(server, args, room):
    """Latency of the same 30-a-second stream over signaling (send_data), measured on the WebSocket."""
    sender = await joined(server, "sharer", room=room)
    viewer = await joined(server, "viewer", room=room)
    try:
        count = int(30 * args.seconds)
        sent_at = {}
        latencies = []

        async def receive():
            # Timestamped as each arrives, while the sender sends.
            for _ in range(count):
                m = await viewer.expect("data", timeout=10)
                latencies.append(time.monotonic() - sent_at[int(m["payload"])])

        receiver = asyncio.create_task(receive())
        for seq in range(count):
            sent_at[seq] = time.monotonic()
            await sender.send_json({"type": "send_data", "topic": "pointer", "payload": str(seq)})
            await asyncio.sleep(1 / 30)
        try:
            await asyncio.wait_for(receiver, 10)
        except (asyncio.TimeoutError, AssertionError):
            pass
        got = len(latencies)
        return {"p50_ms": pct(latencies, 50) * 1000, "p99_ms": pct(latencies, 99) * 1000, "lost": count - got}
    finally:
        await close_all(sender, viewer)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--participants", type=int, default=200)
    ap.add_argument("--senders", type=int, default=20)
    ap.add_argument("--rates", default="100,300,600")
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--viewers", type=int, default=5)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    args.rates = [int(r) for r in args.rates.split(",")]
    work = tempfile.mkdtemp(prefix="atrium-data-bench-")
    # Many sockets from this one process.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))
    print(f"data beside media: {os.environ['ATRIUM_BIN']}, {args.participants} participants, "
          f"{args.senders} senders, {args.runs} runs")
    fan = []
    pointers = []
    for run in range(args.runs):
        server = harness.Server(os.path.join(work, f"d{run}"), *harness.MEDIA_BASE_ARGS).start()
        try:
            fan.append(asyncio.run(fanout(server, args, f"fan{run}")))
            p = asyncio.run(pointer(server, args, f"ptr{run}"))
            p["signaling"] = asyncio.run(pointer_signaling(server, args, f"sig{run}"))
            pointers.append(p)
        finally:
            server.stop()
    print("\n1. fan-out over signaling (send_data), per run")
    print(f"{'rate/s':>7} {'sent':>6} {'delivered/expected':>20} {'deliveries/s':>13} {'p50 ms':>8} {'p99 ms':>8}"
          f" {'server CPU %':>13} {'client CPU %':>13}")
    for run in fan:
        for r in run:
            limit = "  (client the limit)" if r["client_cpu"] >= 80 else ""
            print(f"{r['rate']:>7} {r['sent']:>6} {r['delivered']:>10}/{r['expected']:<9} {r['per_second']:>13.0f}"
                  f" {r['p50_ms']:>8.1f} {r['p99_ms']:>8.1f} {r['server_cpu']:>13.1f} {r['client_cpu']:>13.1f}{limit}")
    print("\n2. pointer, 30 positions a second, sender to each viewer")
    print(f"{'path':>22} {'p50 ms':>8} {'p99 ms':>8} {'lost':>6}")
    for p in pointers:
        print(f"{'lossy data channel':>22} {p['p50_ms']:>8.1f} {p['p99_ms']:>8.1f} {p['lost']:>6}"
              f"   ({p['viewers']} viewers x {p['count']})")
        sg = p["signaling"]
        print(f"{'signaling (send_data)':>22} {sg['p50_ms']:>8.1f} {sg['p99_ms']:>8.1f} {sg['lost']:>6}")
    if pointers:
        print(f"\npointer p99 over runs (data channel): median {statistics.median(p['p99_ms'] for p in pointers):.1f} ms")


if __name__ == "__main__":
    main()
