"""Viewer sweep: one publisher (camera, screen share, microphone) and N viewers, N = 1, 5, 10, 20,
40, 80, 160, Atrium (all cores with the server's defaults: a room stays on one worker up to 200
transports, `--spread` spreads its viewers evenly over the workers instead; and `--media-workers 1`), Janus (Debian's package, VideoRoom over its HTTP API, bench/janus_peer.py)
and a minimal pion SFU (bench/pion_sfu: one goroutine per published track writing to every
subscriber's track, as pion's examples and LiveKit's stack forward) in turn for each N, with the same
clients; then a saturation run.

The clients are native and cheap (`atrium-viewers`, Sources/atrium-viewers, driven through
e2e/integration/native_peer.py): the publisher sends pre-made RTP, VP8-looking camera and screen
packets (a key frame on request and every 3 s) and Opus-sized microphone packets, each ending with a
stamp (publisher id, source, the publisher's own sequence number, the send time on CLOCK_MONOTONIC);
the N viewers run in one process on one thread, doing real ICE checks, DTLS-SRTP and SRTP, and
decrypt and count every packet without decoding it. Per N, over `--seconds` after a warm-up:

- server CPU (its threads' time on a CPU to the nanosecond, `server_procs.window_cpu`) per delivered
  packet, and Atrium over each anchor (Janus, pion);
- delivered packet rate (the viewers' count), loss (by the publisher's sequence numbers in the
  stamps, so a server's rewritten RTP sequence numbers cannot hide it);
- RSS per viewer: (server RSS with N viewers - RSS with the publisher alone, read after two of its
  key-frame intervals and after one /metrics read, as the windows make) / N;
- latency through the server, p50/p99: when the packet reached the viewer's socket (the kernel's
  receive timestamp) minus the stamp's send time, on the same clock (it includes the publisher's
  socket path, so it is an upper bound of what the server adds, but not how long the viewer took to
  read it: the viewers let datagrams gather 4 ms between polls to read them in batches);
- the clients' CPU: a client above 90 % of a core was the limit, and the report says so;
- the machine's floor (after the servers; `--no-floor` leaves it out): bench/relay_floor.c, a plain C
  relay (epoll, recvmmsg, sendmmsg with UDP GSO; no ICE, DTLS, SRTP or RTP) of the same packet
  pattern to N receivers that gather 4 ms between polls as the viewers do, measured the same way:
  its CPU per delivered packet, what each server spends above it, and Atrium's above-floor cost over
  the cheaper anchor's (context: the target is judged on the whole figure). At few viewers the
  wakeups and loopback deliveries that any relay pays are most of a figure.

From N = 1,000 the sweep prints the large room's target beside the RSS per viewer (100 KiB per
participant); `--hidden-viewers` joins Atrium's viewers hidden, as a large audience would be, so
that this harness's one process is not handed every viewer's presence events (N^2 in all).

The saturation run (N = `--saturation-viewers`) raises the publisher's video packets per frame until
the viewers lose more than 0.1 % or a client is the limit, then halves the gap between the last good
and the first failed step (`--refine` times), and prints per server the highest delivered rate below
the loss bound, the server CPU there, the forwarded packets per second per core of server CPU, and
which side stopped it (the server: loss with every client keeping up; a client: see `client_limit`).
"Atrium 1w" runs pinned (`--pin`, on by default with two or more usable cores): the server's threads
on the first usable CPU, both clients on the others, so that one worker can use a whole core of its
own and its per-core ceiling, not the clients, is what the run finds.

A benchmark, not a test: it asserts nothing about speed. Usage:
    python3 bench/viewers_sweep.py [--quick] [--seconds 8] [--skip janus]
ATRIUM_BIN (default .build/release/atrium if built) and atrium-viewers next to it.
"""
import argparse
import asyncio
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from asyncio.subprocess import PIPE

import server_procs  # noqa: E402  (first: the harness's import path and ATRIUM_BIN's default)
server_procs.use_integration_harness()

from native_peer import (AtriumViewer, NativePeers, SOURCES, answered_mid_extension, atrium_publish,   # noqa: E402
                         connect_fields, new_ssrcs, publisher_offer, publisher_streams, transport,
                         viewer_answer, viewers_binary, wait_connected)
from side_by_side import Table, _median, measured_runs, median_range, over_runs   # noqa: E402
from server_procs import (PionProcess, pin, pinning, pion_missing, pion_version, prioritize,   # noqa: E402,F401
                          rss_kib, usable_cores)
from janus_peer import JanusError, JanusProcess, janus_version, missing as janus_missing   # noqa: E402

SWEEP = [1, 5, 10, 20, 40, 80, 160]
QUICK = [1, 5]
PUBLISHER_ID = 7
LARGE_ROOM = 1000         # from this N the sweep prints the large room's memory target
LARGE_ROOM_KIB = 100
CLIENT_LIMIT = 0.9        # a client above this share of one core was the limit
LOSS_LIMIT = 0.001
FLOOR_RECEIVERS = 4096    # bench/relay_floor.c's MAX_RECEIVERS
MACHINE_WAIT = 0.1        # a server whose threads waited for a CPU this share of a window (summed over
                          # its threads) while using under 90 % of its CPUs was held back by other work


def totals(stats, ids):
    """Packets received and lost (by the stamps' sequence numbers) over the viewers `ids`."""
    packets = lost = 0
    for i in ids:
        for s in stats["peers"][i]["sources"]:
            packets += s["packets"]
            lost += s["lost"]
    return packets, lost


# -- one server with a publisher, viewers added on demand ------------------------------------------

class AtriumRun:
    """Atrium with `workers` media workers (None: the default, every core). `spread`: with several
    workers the room spreads its viewers evenly over them (`--media-room-spread` is the room's
    transports over the workers, rounded up; docs/media-workers.md); else the server's default keeps
    a room on one worker up to 200 transports."""

    def __init__(self, workdir, workers, n, pinned=False, spread=False, hidden=False):
        from conftest import Server
        self.hidden = hidden
        self.name = ("Atrium" if workers is None else f"Atrium {workers}w") + (" pinned" if pinned else "")
        args = ["--dev", "--store", "memory", "--auto-create-rooms", "any", "--media-bind", "127.0.0.1"]
        if workers is not None:
            args += ["--media-workers", str(workers)]
        elif spread and usable_cores() > 1:
            args += ["--media-room-spread", str(max(2, -(-(n + 1) // usable_cores())))]
        self.server = Server(os.path.join(workdir, f"atrium-{workers}-{time.time_ns()}"), *args)
        self.clients, self.viewers = [], []

    @property
    def pid(self):
        return self.server.proc.pid

    async def start(self, pub_peers, view_peers):
        from signal_client import joined
        self.server.start()
        self.pub_peers, self.view_peers = pub_peers, view_peers
        self._joined = joined
        c = await joined(self.server, "publisher", room="sweep")
        c.start_keepalive(5)
        self.clients.append(c)
        await atrium_publish(c, pub_peers, "pub", PUBLISHER_ID)

    async def add_viewer(self, peer_id):
        token = None
        if self.hidden:
            from signal_client import mint_jwt
            token = mint_jwt(self.server, peer_id, {"room": "sweep", "roomJoin": True, "canSubscribe": True,
                                                    "canPublish": False, "role": "viewer", "hidden": True})
        c = await self._joined(self.server, peer_id, room="sweep", role="viewer", token=token)
        c.start_keepalive(5)
        self.viewers.append(AtriumViewer(c, self.view_peers, peer_id))

    async def stop(self):
        for v in self.viewers:
            await v.close()
        for c in self.clients:
            await c.close()
        self.server.stop()


class PionRun(PionProcess):
    """The pion SFU (bench/pion_sfu/main.go) over its small HTTP API: the publisher's offer answered,
    each viewer offered every track and answering."""
    name = "pion"

    async def start(self, pub_peers, view_peers):
        self.view_peers = view_peers
        await self.launch()
        local = await pub_peers.call("open", id="pub")
        ssrcs = new_ssrcs()
        answer = (await self.post("/publish", {"sdp": publisher_offer(local, ssrcs)}))["sdp"]
        await pub_peers.call("connect", id="pub", **connect_fields(transport(answer), viewer=False))
        await pub_peers.call("publish", id="pub", publisher=PUBLISHER_ID,
                             streams=publisher_streams(ssrcs, answered_mid_extension(answer)))

    async def add_viewer(self, peer_id):
        offered = await self.post("/subscribe", {})
        local = await self.view_peers.call("open", id=peer_id)
        await self.post("/answer", {"id": offered["id"], "sdp": viewer_answer(offered["sdp"], local)})
        await self.view_peers.call("connect", id=peer_id, **connect_fields(transport(offered["sdp"]), viewer=True))


class JanusRun:
    name = "Janus"

    def __init__(self, workdir):
        from media_forward import JanusSession
        self.janus = JanusProcess(os.path.join(workdir, f"janus-{time.time_ns()}"))
        self._session_class = JanusSession
        self.session = None

    @property
    def pid(self):
        return self.janus.proc.pid

    async def start(self, pub_peers, view_peers):
        self.janus.start()
        self.view_peers = view_peers
        s = self.session = self._session_class(self.janus.port)
        await s.create()
        admin = await s.attach()
        self.room = 1234
        created = await s.message(admin, {"request": "create", "room": self.room, "publishers": 1,
                                          "bitrate": 10_000_000, "videocodec": "vp8", "audiocodec": "opus",
                                          "permanent": False})
        if created.get("videoroom") != "created":
            raise JanusError(f"create room: {created}")
        local = await pub_peers.call("open", id="pub")
        ssrcs = new_ssrcs()
        pub = await s.attach()
        await s.message(pub, {"request": "join", "ptype": "publisher", "room": self.room, "display": "pub"})
        joined, _ = await s.event(pub)
        self.feed = joined["id"]
        await s.message(pub, {"request": "publish",
                              "descriptions": [{"mid": str(i), "description": src} for i, (_, src, _, _) in
                                               enumerate(SOURCES)]},
                        jsep={"type": "offer", "sdp": publisher_offer(local, ssrcs), "trickle": False})
        _, answer = await s.event(pub)
        if answer is None:
            raise JanusError("publish: no answer")
        await pub_peers.call("connect", id="pub", **connect_fields(transport(answer["sdp"]), viewer=False))
        await pub_peers.call("publish", id="pub", publisher=PUBLISHER_ID,
                             streams=publisher_streams(ssrcs, answered_mid_extension(answer["sdp"])))

    async def add_viewer(self, peer_id):
        s = self.session
        h = await s.attach()
        await s.message(h, {"request": "join", "ptype": "subscriber", "room": self.room,
                            "streams": [{"feed": self.feed}]})
        _, jsep = await s.event(h)
        if jsep is None:
            raise JanusError("subscriber join: no offer")
        local = await self.view_peers.call("open", id=peer_id)
        await s.message(h, {"request": "start"},
                        jsep={"type": "answer", "sdp": viewer_answer(jsep["sdp"], local), "trickle": False})
        await self.view_peers.call("connect", id=peer_id, **connect_fields(transport(jsep["sdp"]), viewer=True))
        await s.event(h)        # "started"

    async def stop(self):
        if self.session is not None:
            await self.session.destroy()
        self.janus.stop()


# -- measuring ------------------------------------------------------------------------------------

def intended_rate(scale):
    """What the publisher is asked to send at a packet scale, packets/s (as PublisherStream rounds)."""
    return 30 * max(1, round(4 * scale)) + 15 * max(1, round(6 * scale)) + 50


async def window(run, pub_peers, view_peers, ids, seconds, scale=1.0):
    """Figures over `seconds` of the running scenario."""
    pids = {"server": run.pid, "viewers": view_peers.pid, "publisher": pub_peers.pid}
    gso0 = await segmented(run)
    s0 = await view_peers.call("stats")          # also resets the latency histogram
    p0 = await pub_peers.call("stats")
    m = await server_procs.machine_window(run.pid, pids, seconds)
    s1 = await view_peers.call("stats")
    p1 = await pub_peers.call("stats")
    gso1 = await segmented(run)
    packets0, lost0 = totals(s0, ids)
    packets1, lost1 = totals(s1, ids)
    elapsed, cpu, udp0, udp1 = m["elapsed"], m["cpu"], m["udp0"], m["udp1"]
    delivered, lost = packets1 - packets0, lost1 - lost0
    sent = sum(x["packets"] for x in p1["peers"]["pub"]["sent"]) - sum(x["packets"] for x in p0["peers"]["pub"]["sent"])
    return {
        "elapsed": elapsed, "cpu": cpu, "delivered": delivered, "lost": lost,
        "pps": delivered / elapsed, "sent_pps": sent / elapsed,
        "loss": lost / (delivered + lost) if delivered + lost else None,
        "us_per_packet": 1e6 * cpu / delivered if delivered else None,
        "viewers_cpu": (s1["cpu"] - s0["cpu"]) / elapsed, "publisher_cpu": (p1["cpu"] - p0["cpu"]) / elapsed,
        "p50": s1["latency"]["p50"], "p99": s1["latency"]["p99"], "rss": rss_kib(run.pid),
        "intended_pps": intended_rate(scale),
        # Atrium: the share of its datagrams out that left inside UDP GSO messages (a run of same-size
        # packets to one viewer), and datagrams per system-call entry.
        "gso": (gso1[0] - gso0[0]) / (gso1[2] - gso0[2]) if gso0 and gso1 and gso1[2] > gso0[2] else None,
        "per_message": (gso1[2] - gso0[2]) / (gso1[1] - gso0[1]) if gso0 and gso1 and gso1[1] > gso0[1] else None,
        "gso_refused": gso1[3] if gso1 else None,
        # Datagrams the kernel dropped on each side's sockets (full receive buffers), and the bytes
        # waiting in the viewers' sockets at the start and the end: a growing backlog means the
        # viewers fell behind, and their figures are lower bounds.
        "drops": {k: udp1[pid][0] - udp0[pid][0] for k, pid in pids.items()},
        "backlog": (udp0[view_peers.pid][1], udp1[view_peers.pid][1]),
        "server_backlog": (udp0[run.pid][1], udp1[run.pid][1]),
        "server_cores": len(os.sched_getaffinity(run.pid)),
        # Every viewer should get every packet the publisher sent.
        "expected_pps": len(ids) * sent / elapsed,
        # Share of the window each process was runnable but got no CPU: the machine, not the
        # process, held it back (other work on a shared 2-core VM).
        "waited": m["waited"],
    }


async def segmented(run):
    """Atrium's counters of datagrams sent inside UDP GSO messages, messages handed to the kernel and
    packets out (summed over its workers), from /metrics; None for Janus."""
    if not isinstance(run, AtriumRun):
        return None
    from test_media import metrics_text, sample_of
    text = await metrics_text(run.server)
    return (sample_of(text, "atrium_media_udp_segmented_datagrams_total"),
            sample_of(text, "atrium_media_udp_messages_total"),
            sample_of(text, "atrium_media_packets_total", direction="out"),
            sample_of(text, "atrium_media_udp_segmentation_fallbacks_total"))


# -- the machine's floor ---------------------------------------------------------------------------

def build_floor(workdir):
    """bench/relay_floor.c compiled into `workdir`; None when it could not be (said why)."""
    binary = os.path.join(workdir, "relay_floor")
    try:
        subprocess.run(["gcc", "-O2", "-o", binary, os.path.join(server_procs.ROOT, "bench", "relay_floor.c")],
                       check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"the floor is not measured: relay_floor did not build ({getattr(e, 'stderr', '') or e})")
        return None
    return binary


async def floor_window(binary, n, args):
    """The machine's floor at `n` viewers: bench/relay_floor.c relaying the publisher's packet pattern
    (without its key frames) to `n` receivers in one process, measured as the servers are (after the
    warm-up, over `args.seconds`, the same nice): {"name": "floor", "us_per_packet": its CPU per
    delivered packet}."""
    if n > FLOOR_RECEIVERS:
        return {"name": "floor", "error": f"over {FLOOR_RECEIVERS} receivers"}
    procs = []
    try:
        for attempt in range(5):
            base = random.randrange(20000, 60000 - n)   # receivers base .. base + n - 1, the relay base + n
            procs = [await asyncio.create_subprocess_exec(binary, "recv", str(base), str(n), stdin=PIPE, stdout=PIPE),
                     await asyncio.create_subprocess_exec(binary, "relay", str(base + n), str(base), str(n))]
            await asyncio.sleep(0.2)
            codes = [p.returncode for p in procs]
            if all(c is None for c in codes):
                break
            await stop_floor(procs)
            procs = []
            if any(c not in (None, 3) for c in codes):     # 3: a port was taken, another base
                return {"name": "floor", "error": f"relay_floor exited with {codes} (see its stderr)"}
        if not procs:
            return {"name": "floor", "error": "no free ports"}
        procs.append(await asyncio.create_subprocess_exec(
            binary, "send", str(base + n), "30", "4", "15", "6", "50"))
        receiver, relay = procs[0], procs[1]
        if args.nice:
            for p in procs:
                prioritize(p.pid, args.nice)
        await asyncio.sleep(max(args.warmup, 2))

        async def count():
            receiver.stdin.write(b"count\n")
            await receiver.stdin.drain()
            line = await asyncio.wait_for(receiver.stdout.readline(), 10)
            if not line:
                raise RuntimeError(f"the receiver exited ({receiver.returncode})")
            return int(line)
        count0 = await count()
        m = await server_procs.machine_window(relay.pid, {"relay": relay.pid}, args.seconds)
        delivered = await count() - count0
        return {"name": "floor", "us_per_packet": 1e6 * m["cpu"] / delivered if delivered else None,
                "pps": delivered / m["elapsed"]}
    finally:
        await stop_floor(procs)


async def stop_floor(procs):
    for p in procs:
        if p.returncode is None:
            p.kill()
        await p.wait()


def print_floor(results):
    """The floor's line under a run's table: its CPU per delivered packet, each server's above it, and
    Atrium's share of the cheaper anchor's cost above the floor."""
    floor = next((r for r in results if r["name"] == "floor"), None)
    if floor is None:
        return
    if floor.get("us_per_packet") is None:
        print(f"  floor: not measured ({floor.get('error', 'nothing delivered')})")
        return
    f = floor["us_per_packet"]
    servers = [r for r in results if r["name"] != "floor" and r.get("us_per_packet")]
    above = ", ".join(f"{r['name']} {r['us_per_packet'] - f:.2f}" for r in servers)
    ratio = above_floor(results)
    print(f"  floor (a plain C relay of the same packets, bench/relay_floor.c): {f:.2f} us per delivered packet "
          f"({floor['pps']:.0f} packets/s); above it (us): {above}"
          + (f"; Atrium / cheaper anchor above the floor {ratio:.2f}" if ratio is not None else ""))


def above_floor(results):
    """Atrium's CPU per delivered packet above the floor over the cheaper anchor's above it, or None."""
    by = {r["name"]: r.get("us_per_packet") for r in results if "error" not in r}
    f, atrium = by.get("floor"), by.get("Atrium")
    anchors = [by[n] for n in Table.ANCHORS if by.get(n)]
    if f is None or atrium is None or not anchors or min(anchors) <= f:
        return None
    return (atrium - f) / (min(anchors) - f)


def floor_over_runs(runs):
    """The floor's median and range over the runs, and the above-floor ratio's."""
    floors = [r["us_per_packet"] for results in runs for r in results
              if r["name"] == "floor" and r.get("us_per_packet") is not None]
    ratios = [x for x in (above_floor(results) for results in runs) if x is not None]
    if len(runs) < 2 or not floors:
        return
    line = f"  the floor over {len(runs)} runs: {median_range(floors)} us per packet"
    if ratios:
        line += f"; Atrium / cheaper anchor above the floor {median_range(ratios)} (context, not a target)"
    print(line)


async def receiving(view_peers, ids, timeout):
    """Waits until every viewer connected and got packets of every source."""
    await wait_connected(view_peers, ids, timeout)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stats = await view_peers.call("stats")
        if all(len(stats["peers"][i]["sources"]) == len(SOURCES) for i in ids):
            return True
        await asyncio.sleep(0.2)
    return False


def server_behind(r):
    """Why the server fell behind in a window ("" when it did not): it delivered under 95 % of what
    the publisher sent times the viewers (its socket backlog grew: the loss comes later)."""
    if r["expected_pps"] and r["pps"] < 0.95 * r["expected_pps"]:
        start, end = r["server_backlog"]
        return (f"server behind: delivered {r['pps']:.0f} of {r['expected_pps']:.0f} packets/s, its socket "
                f"backlog {start >> 10}->{end >> 10} KiB")
    return ""


def failed(r):
    """Whether a saturation step went past the limit: loss over LOSS_LIMIT, the server behind, or a
    client was the limit."""
    return (r["loss"] or 0) > LOSS_LIMIT or bool(server_behind(r)) or bool(client_limit(r))


async def drained(run, view_peers, timeout=10):
    """Waits (up to `timeout` s) until the server's and the viewers' sockets hold little, so that a
    step after a failed one does not count the failed one's backlog as delivered."""
    from media_forward import udp_sockets
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        udp = udp_sockets([run.pid, view_peers.pid])
        if udp[run.pid][1] < 256 << 10 and udp[view_peers.pid][1] < 1 << 20:
            return
        await asyncio.sleep(0.25)


# The publisher's key frames come every 3 s: two intervals and a second.
STEADY_AFTER = 7.0


def refined(good, bad):
    """The scale halfway between a good and a failed step, or None when no packet rate lies between
    them (the publisher rounds packets per frame to integers)."""
    mid = round((good + bad) / 2, 2)
    if intended_rate(mid) in (intended_rate(good), intended_rate(bad)):
        return None
    return mid


async def scenario(make_run, n, args, scales=None, pinned=None):
    """One server: the publisher, then `n` viewers; one measured window (or, with `scales`, one per
    packet scale until loss passes LOSS_LIMIT or a client is the limit, then `args.refine` steps
    halving the gap between the last good and the first failed scale). `pinned`: (server CPUs,
    client CPUs) to pin the processes to."""
    run = make_run(n)
    pub_peers = await NativePeers.spawn()
    view_peers = await NativePeers.spawn()
    try:
        await run.start(pub_peers, view_peers)
        if args.nice:
            for pid in (run.pid, view_peers.pid, pub_peers.pid):
                prioritize(pid, args.nice)
        if pinned:
            pin(run.pid, pinned[0])
            pin(view_peers.pid, pinned[1])
            pin(pub_peers.pid, pinned[1])
        await wait_connected(pub_peers, ["pub"], 20)
        # The publisher alone in its steady state: what a stream holds (retransmission buffers, the
        # key-frame cache of each stream) grows over its first key-frame intervals, and read earlier
        # that growth counted as the viewers'.
        await asyncio.sleep(STEADY_AFTER)
        # This harness reads Atrium's /metrics around each window (the GSO figures): the heap that
        # rendering grows and keeps (about 140 KiB, under glibc's trim threshold) is the probe's, not
        # the viewers', so it is in the baseline too.
        await segmented(run)
        rss_alone = rss_kib(run.pid)
        ids = [f"v{i}" for i in range(n)]
        for i in ids:
            await run.add_viewer(i)
        complete = await receiving(view_peers, ids, args.start_timeout)
        # Setting up many viewers leaves queues behind (key frames, handshakes): longer warm-ups for more.
        await asyncio.sleep(max(args.warmup, n / 40))
        if scales is None:
            r = await window(run, pub_peers, view_peers, ids, args.seconds)
            r.update(name=run.name, n=n, complete=complete, rss_per_viewer=(r["rss"] - rss_alone) / n)
            return r
        steps = []

        async def step(scale, settle):
            await pub_peers.call("scale", value=scale)
            await asyncio.sleep(settle)
            await drained(run, view_peers)
            r = await window(run, pub_peers, view_peers, ids, args.saturation_seconds, scale)
            r.update(scale=scale)
            steps.append(r)
            viewers_us = 1e6 * r["viewers_cpu"] / r["pps"] if r["pps"] else 0
            print(f"  {run.name} x{scale:g}: publisher sent {r['sent_pps']:.0f} of {r['intended_pps']} packets/s, "
                  f"{r['pps']:.0f} delivered, loss {100 * (r['loss'] or 0):.3f} %, server CPU "
                  f"{100 * r['cpu'] / r['elapsed']:.0f} %, viewers {100 * r['viewers_cpu']:.0f} % "
                  f"({viewers_us:.2f} us/packet), publisher "
                  f"{100 * r['publisher_cpu']:.0f} %, UDP drops server/viewers {r['drops']['server']}/"
                  f"{r['drops']['viewers']}, waited for a CPU server/viewers {100 * r['waited']['server']:.0f}/"
                  f"{100 * r['waited']['viewers']:.0f} %; {server_behind(r) or 'server kept up'}; "
                  f"{client_limit(r) or 'clients kept up'}", flush=True)
            return not failed(r)

        good = bad = None
        for scale in scales:
            if not await step(scale, 1):
                bad = scale
                break
            good = scale
        for _ in range(args.refine if good is not None and bad is not None else 0):
            mid = refined(good, bad)
            if mid is None:
                break
            # After a failed step the sockets' backlog drains first.
            if await step(mid, 2):
                good = mid
            else:
                bad = mid
        return {"name": run.name, "steps": steps, "pinned": pinned}
    finally:
        await run.stop()
        await view_peers.close()
        await pub_peers.close()


# -- report ---------------------------------------------------------------------------------------

def backlog_limit(r):
    """How much the viewers' socket backlog may grow over a window before they count as behind: 25 ms
    of the delivered traffic (2 KiB of kernel memory per 1,100-byte datagram in /proc/net/udp's
    rx_queue), at least 256 KiB. Less is one scheduling delay of the viewers' thread caught by the
    snapshot, not a shortfall; a real shortfall grows the backlog through the whole window."""
    return max(256 << 10, int(0.025 * r["pps"] * 2048))


def client_limit(r):
    """Why a client, not the server, limited a window ("" when none did): a client above
    CLIENT_LIMIT of a core, a publisher that sent under 95 % of its intended rate (its process did
    not get the CPU), or viewers whose socket backlog grew by more than `backlog_limit` (with how long they
    waited for a CPU: on a shared machine other work can hold a client back at low CPU use), or
    datagrams the clients' own sockets dropped (their loss, not the server's)."""
    notes = []
    if r["drops"]["viewers"] > 0 or r["drops"]["publisher"] > 0:
        notes.append(f"clients' sockets dropped {r['drops']['viewers'] + r['drops']['publisher']} datagrams")
    if r["sent_pps"] < 0.95 * r["intended_pps"]:
        notes.append(f"publisher sent {r['sent_pps']:.0f}/{r['intended_pps']} pps")
    start, end = r["backlog"]
    if end - start > backlog_limit(r):
        notes.append(f"viewers behind +{(end - start) >> 10} KiB, {100 * r['waited']['viewers']:.0f} % waiting")
    if r["viewers_cpu"] > CLIENT_LIMIT:
        notes.append(f"viewers {100 * r['viewers_cpu']:.0f} %")
    if r["publisher_cpu"] > CLIENT_LIMIT:
        notes.append(f"publisher {100 * r['publisher_cpu']:.0f} %")
    return ", ".join(notes)


def large_room_target(runs, n):
    """RSS per viewer against the 100 KiB per participant targeted at 1,000 participants (the median
    over the runs; nothing asserted)."""
    rss = [r["rss_per_viewer"] for results in runs for r in results if r["name"] == "Atrium" and "error" not in r]
    if rss:
        median = _median(rss)
        print(f"  target at {n:,} participants: RSS per viewer {median:.0f} KiB vs {LARGE_ROOM_KIB} KiB: "
              f"{'met' if median <= LARGE_ROOM_KIB else 'NOT met'}")


def print_n(results):
    t = Table(results, min_column=12)
    t.row("server CPU per delivered packet (us)", [r["us_per_packet"] for r in results], "{:.2f}", ratio=True)
    t.row("server CPU (% of one core)", [100 * r["cpu"] / r["elapsed"] for r in results], "{:.1f}")
    t.row("delivered (packets/s)", [r["pps"] for r in results], "{:.0f}", ratio=True)
    t.row("publisher sent (packets/s)", [r["sent_pps"] for r in results], "{:.0f}")
    t.row("loss (%)", [None if r["loss"] is None else 100 * r["loss"] for r in results], "{:.3f}")
    t.row("RSS per viewer (KiB)", [r["rss_per_viewer"] for r in results], "{:.0f}", ratio=True)
    t.row("latency p50 (us)", [r["p50"] for r in results], "{:.0f}", ratio=True)
    t.row("latency p99 (us)", [r["p99"] for r in results], "{:.0f}", ratio=True)
    t.row("viewers' CPU (% of one core)", [100 * r["viewers_cpu"] for r in results], "{:.0f}")
    t.row("publisher's CPU (% of one core)", [100 * r["publisher_cpu"] for r in results], "{:.0f}")
    t.row("UDP drops: server's / viewers' sockets", [f"{r['drops']['server']}/{r['drops']['viewers']}" for r in results])
    t.row("viewers' socket backlog, start/end (KiB)", [f"{r['backlog'][0] >> 10}/{r['backlog'][1] >> 10}"
                                                        for r in results])
    t.row("waited for a CPU: server / viewers / publisher (%)",
          ["/".join(f"{100 * r['waited'][k]:.0f}" for k in ("server", "viewers", "publisher")) for r in results])
    t.row("every viewer got every source", ["yes" if r["complete"] else "NO" for r in results])
    t.row("client was the limit", [client_limit(r) or "no" for r in results])
    t.print()


def print_saturation(sat):
    rows = []
    for s in sat:
        ok = [r for r in s["steps"] if not failed(r)]
        best = max(ok, key=lambda r: r["pps"], default=None)
        bad = [r for r in s["steps"] if failed(r)]
        first_bad = min(bad, key=lambda r: r["scale"], default=None)
        if first_bad is None:
            why = "not reached: no loss up to the highest scale tried" if s["steps"] else "no step"
        elif client_limit(first_bad):
            why = f"a client, at x{first_bad['scale']:g}: {client_limit(first_bad)}"
        elif (first_bad["waited"]["server"] > MACHINE_WAIT
              and first_bad["cpu"] / first_bad["elapsed"] < 0.9 * first_bad["server_cores"]):
            why = (f"the machine, at x{first_bad['scale']:g}: loss {100 * first_bad['loss']:.2f} % "
                   f"{'(' + server_behind(first_bad) + ') ' if server_behind(first_bad) else ''}while the "
                   f"server's threads waited for a CPU {100 * first_bad['waited']['server']:.0f} % of the window "
                   f"(server CPU {100 * first_bad['cpu'] / first_bad['elapsed']:.0f} %, viewers "
                   f"{100 * first_bad['viewers_cpu']:.0f} %: they share the cores, with other work)")
        else:
            why = (f"the server, at x{first_bad['scale']:g}: loss {100 * first_bad['loss']:.2f} % "
                   f"{'(' + server_behind(first_bad) + ') ' if server_behind(first_bad) else ''}with the clients "
                   f"keeping up (server CPU {100 * first_bad['cpu'] / first_bad['elapsed']:.0f} %, "
                   f"{first_bad['drops']['server']} datagrams dropped on its sockets)")
        pinned = s.get("pinned")
        where = (f"server on CPU {','.join(map(str, sorted(pinned[0])))}, clients on "
                 f"{','.join(map(str, sorted(pinned[1])))}" if pinned else "not pinned")
        rows.append({"name": s["name"], "best": best, "why": why, "where": where})
    t = Table(rows, min_column=14)
    t.row("highest delivered rate, loss <= 0.1 % (packets/s)", [r["best"] and r["best"]["pps"] for r in rows],
          "{:.0f}", ratio=True)
    t.row("server CPU there (cores)", [r["best"] and r["best"]["cpu"] / r["best"]["elapsed"] for r in rows], "{:.2f}")
    t.row("forwarded packets/s per core of server CPU",
          [r["best"] and r["best"]["cpu"] and r["best"]["pps"] * r["best"]["elapsed"] / r["best"]["cpu"] for r in rows],
          "{:.0f}", ratio=True)
    t.row("datagrams out in UDP GSO messages there (%)",
          [r["best"] and r["best"].get("gso") is not None and 100 * r["best"]["gso"] for r in rows], "{:.0f}")
    t.row("datagrams per sendmmsg entry there", [r["best"] and r["best"].get("per_message") for r in rows], "{:.1f}")
    t.row("workers whose kernel refused GSO", [r["best"] and r["best"].get("gso_refused") for r in rows], "{:.0f}")
    t.row("viewers' CPU there (% of one core)", [r["best"] and 100 * r["best"]["viewers_cpu"] for r in rows], "{:.0f}")
    t.row("publisher scale there", [r["best"] and f"x{r['best']['scale']:g}" for r in rows])
    t.row("CPUs", [r["where"] for r in rows])
    t.print()
    for r in rows:
        print(f"  {r['name']}: limit {r['why']}")


async def main_async(args):
    workdir = tempfile.mkdtemp(prefix="atrium-viewers-sweep-")
    makers = [("atrium", lambda n: AtriumRun(workdir, None, n, spread=args.spread, hidden=args.hidden_viewers))]
    if args.one_worker:
        makers.append(("atrium", lambda n: AtriumRun(workdir, 1, n, hidden=args.hidden_viewers)))
    makers.append(("pion", lambda n: PionRun()))
    makers.append(("janus", lambda n: JanusRun(workdir)))
    # The saturation run: "Atrium 1w" pinned (the server on one CPU, the clients on the others).
    pinned = pinning() if args.pin else None
    sat_makers = [("atrium", "atrium", lambda n: AtriumRun(workdir, None, n, spread=args.spread,
                                                              hidden=args.hidden_viewers), None)]
    if args.one_worker:
        sat_makers.append(("atrium", "atrium-1w", lambda n: AtriumRun(workdir, 1, n, pinned=bool(pinned),
                                                                      hidden=args.hidden_viewers), pinned))
    sat_makers.append(("pion", "pion", lambda n: PionRun(), None))
    sat_makers.append(("janus", "janus", lambda n: JanusRun(workdir), None))
    sat_makers = [(m, p) for k, name, m, p in sat_makers
                  if k not in args.skip and (not args.saturation_only or name in args.saturation_only)]
    makers = [m for k, m in makers if k not in args.skip]
    floor = build_floor(workdir) if args.floor and args.viewers else None
    try:
        for n in args.viewers:
            print(f"\n== {n} viewer(s) ==", flush=True)
            async def measure():
                results = [await asyncio.wait_for(scenario(make, n, args), args.start_timeout * 3 + 120)
                           for make in makers]
                print_n(results)
                if floor:
                    # Context only: whatever goes wrong with it is said, and the servers' figures stay.
                    try:
                        results.append(await asyncio.wait_for(floor_window(floor, n, args),
                                                              max(args.warmup, 2) + args.seconds + 60))
                    except (OSError, RuntimeError, ValueError, asyncio.TimeoutError) as e:
                        results.append({"name": "floor", "error": f"{type(e).__name__}: {e}"})
                    print_floor(results)
                return results
            runs = await measured_runs(args.runs, measure)
            over_runs(runs, "rss_per_viewer", "RSS per viewer (KiB)")
            floor_over_runs(runs)
            if n >= LARGE_ROOM:
                large_room_target(runs, n)
        if args.saturation_viewers:
            n = args.saturation_viewers
            print(f"\n== saturation: {n} viewers, publisher's video packets per frame x{args.scales} ==", flush=True)
            sat = []
            for make, pinned in sat_makers:
                sat.append(await asyncio.wait_for(scenario(make, n, args, scales=args.scales, pinned=pinned), 900))
            print_saturation(sat)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="N = 1 and 5, a short saturation run")
    ap.add_argument("--viewers", type=lambda s: [] if s == "none" else [int(x) for x in s.split(",")], default=None,
                    help="comma-separated N (default 1,5,10,20,40,80,160; none: only the saturation run)")
    ap.add_argument("--seconds", type=float, default=8, help="measured window per N")
    ap.add_argument("--runs", type=int, default=1,
                    help="measure each N this many times (the servers in turn each time), then print the medians "
                         "and ranges and judge the targets on the medians")
    ap.add_argument("--warmup", type=float, default=2)
    ap.add_argument("--start-timeout", type=float, default=40)
    ap.add_argument("--saturation-viewers", type=int, default=None, help="N of the saturation run (0: none)")
    ap.add_argument("--saturation-seconds", type=float, default=4)
    ap.add_argument("--scales", type=lambda s: [float(x) for x in s.split(",")], default=None,
                    help="video packets-per-frame multipliers of the saturation run")
    ap.add_argument("--refine", type=int, default=None,
                    help="steps halving the gap between the last good and the first failed scale (default 3, quick 1)")
    ap.add_argument("--nice", type=int, default=-10 if os.geteuid() == 0 else 0,
                    help="nice value of the server and both clients (default -10 as root, else 0: unchanged), so "
                         "that other work on a shared machine does not hold them back")
    ap.add_argument("--no-pin", dest="pin", action="store_false",
                    help="run the 1-worker saturation unpinned (default: server on one CPU, clients on the others)")
    ap.add_argument("--spread", action="store_true",
                    help="spread the room's viewers evenly over Atrium's workers (default: the server's own rule)")
    ap.add_argument("--no-one-worker", dest="one_worker", action="store_false",
                    help="leave out Atrium with --media-workers 1")
    ap.add_argument("--saturation-only", action="append", default=[], choices=["atrium", "atrium-1w", "pion", "janus"],
                    help="run only these servers' saturation (repeatable)")
    ap.add_argument("--skip", action="append", default=[], choices=["atrium", "pion", "janus"])
    ap.add_argument("--hidden-viewers", action="store_true",
                    help="Atrium's viewers join hidden, announced to nobody (a large audience): else the "
                         "harness's one process takes every viewer's presence events, N^2 in all")
    ap.add_argument("--no-floor", dest="floor", action="store_false",
                    help="leave out the machine's floor (a plain C relay of the same packets, bench/relay_floor.c)")
    args = ap.parse_args()
    if args.viewers is None:
        args.viewers = QUICK if args.quick else SWEEP
    if args.saturation_viewers is None:
        args.saturation_viewers = 5 if args.quick else 40
    if args.scales is None:
        args.scales = [1, 4, 16] if args.quick else [1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96]
    if args.refine is None:
        args.refine = 1 if args.quick else 3
    if args.quick:
        args.seconds = min(args.seconds, 4)
        args.saturation_seconds = min(args.saturation_seconds, 3)
    if "janus" not in args.skip and janus_missing(["http"]):
        sys.exit(janus_missing(["http"]))
    if "pion" not in args.skip and pion_missing():
        sys.exit(pion_missing())
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"machine: {os.cpu_count()} cores ({model}), Linux {platform.release()}, load average "
          f"{' '.join(open('/proc/loadavg').read().split()[:3])}")
    janus = "Janus skipped" if "janus" in args.skip else janus_version()
    pion = "pion skipped" if "pion" in args.skip else f"pion_sfu on pion {pion_version()}"
    print(f"servers: {os.environ['ATRIUM_BIN']}; {pion}; {janus}; clients: {viewers_binary()}; nice {args.nice} "
          f"for the servers and clients (and this session's scheduler autogroup)")
    print("publisher: camera 30 fps x 4 packets, screen 15 fps x 6 packets (1100 bytes), microphone 50 packets/s "
          "(120 bytes): 260 packets/s before scaling; latency = viewer receive - publisher send (CLOCK_MONOTONIC)")
    server_procs.run_niced(args.nice, main_async(args))


if __name__ == "__main__":
    main()
