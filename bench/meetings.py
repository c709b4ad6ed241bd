"""Meetings: R rooms of P participants, as most meetings are (a server runs hundreds of rooms of 2 to 8),
on Atrium (all cores), Janus (Debian's package, VideoRoom with simulcast) and the pion SFU
(bench/pion_sfu: rooms, simulcast, one layer per subscriber) in turn per point, with the same clients;
then a saturation run per server on one core.

Every participant publishes a simulcast camera in three layers (rids q, h, f, 30 fps each: 1 packet
of 625 bytes, 2 of 1,050 and 5 of 1,200 per frame, about 150 kbit/s, 500 kbit/s and 1.4 Mbit/s) and a
microphone (50 packets/s of 120 bytes); in every K-th room (`--share-every`, default 3) the last
participant also shares a screen (15 fps x 6 packets of 1,100 bytes). Each participant subscribes to
everyone else in its room: the low layer of each tile's camera, the high layer of one "active
speaker" (participant 0; participant 0 itself gets participant 1's high layer), every microphone and
the share. The publisher sends every layer all the time (no server here turns unwanted layers off).

The clients are native (`atrium-viewers`, Sources/atrium-viewers, driven through
e2e/integration/native_peer.py): one process holds every participant's publisher connection, another
every participant's subscriber connection, each on one thread, with real ICE, DTLS-SRTP and SRTP.
Every packet ends with a stamp (publisher id, stream, the publisher's own sequence number, the send
time on CLOCK_MONOTONIC); each layer is a stream of its own, so the stamps also say which layer a
subscriber got. Per point and server, over `--seconds` after two key-frame intervals of steady
sending:

- server CPU (its threads' time on a CPU to the nanosecond, `server_procs.window_cpu`) per delivered
  packet, and Atrium over each anchor;
- RSS per participant: (server RSS with the rooms up - RSS before any join) / (R x P);
- join latency p50/p99: from a participant's first request to the first media packet its subscriber
  connection received (the kernel's receive time), for every participant but the first of each room
  (who has nobody to receive until the second joins);
- loss (the publishers' sequence numbers in the stamps), latency through the server p50/p99 (receive
  minus the stamp's send time), whether every participant got exactly the layers it asked for;
- the clients' CPU: a client above 90 % of a core was the limit, and the table says so.

The saturation run (P = `--saturation-participants`, default 4) adds rooms to one running server, its
threads pinned to one CPU and the clients to the others (Atrium with `--media-workers 1`), until the
loss passes 0.1 % or a client is the limit, and prints how many rooms one core held and which side
stopped it.

A benchmark, not a test: it asserts nothing; the targets are printed beside the figures. Usage:
    python3 bench/meetings.py [--quick] [--points 10x2,10x4,5x8] [--skip janus] [--skip pion]
ATRIUM_BIN (default .build/release/atrium if built) and atrium-viewers next to it.
"""
import argparse
import asyncio
import os
import platform
import random
import shutil
import tempfile
import time

import server_procs  # noqa: E402  (first: the harness's import path and ATRIUM_BIN's default)
server_procs.use_integration_harness()

from native_peer import (RID_EXTENSION, AtriumViewer, NativePeers, answered_mid_extension,   # noqa: E402
                         connect_fields, simulcast_offer, transport, viewer_answer, viewers_binary)
from server_procs import (PionProcess, pin, pinning, pion_missing, pion_version, prioritize,   # noqa: E402
                          rss_kib)
from side_by_side import Table, measured_runs, over_runs, percentile   # noqa: E402
from janus_peer import JanusError, JanusProcess, janus_version, missing as janus_missing   # noqa: E402

POINTS = [(10, 2), (10, 4), (5, 8)]
QUICK_POINTS = [(2, 2), (2, 4)]
CLIENT_LIMIT = 0.9          # a client above this share of one core was the limit
LOSS_LIMIT = 0.001
KEY_FRAME_INTERVAL = 3.0    # the publisher's (PublisherStream.keyFrameInterval)
MACHINE_WAIT = 0.1          # a server whose threads waited for a CPU this share of a window while using
                            # under 90 % of its CPUs was held back by other work (as the viewer sweep judges)

# The camera's layers, smallest first: (rid, stamp source, fps, packets per frame, bytes, width, height).
LAYERS = [("q", 0, 30, 1, 625, 320, 180), ("h", 1, 30, 2, 1050, 640, 360), ("f", 2, 30, 5, 1200, 1280, 720)]
MIC = (3, 50, 1, 120)               # stamp source, packets/s, packets per "frame", bytes
SCREEN = (4, 15, 6, 1100)
LOW, HIGH = 0, 2                    # the layers subscribers ask for: their stamp source, index in LAYERS
                                    # and Janus substream alike


def rate(source):
    """Packets per second of a stream, by its stamp source."""
    for _, s, fps, packets, *_ in LAYERS:
        if s == source:
            return fps * packets
    return {MIC[0]: MIC[1] * MIC[2], SCREEN[0]: SCREEN[1] * SCREEN[2]}[source]


# -- the meeting's shape --------------------------------------------------------------------------

class Participant:
    """One participant: `pub` and `sub` are its two peers' ids in the client processes, `stamp_id`
    the publisher id in its stamps."""

    def __init__(self, room, index, stamp_id):
        self.room, self.index, self.stamp_id = room, index, stamp_id
        self.pub, self.sub = f"p{room.index}-{index}", f"s{room.index}-{index}"
        self.shares = room.shared and index == room.size - 1
        self.started = None         # time.monotonic_ns() of its first request
        self.state = {}             # the server's handles for it

    def speaker(self):
        """Whose camera it watches in the high layer: the room's speaker (participant 0), or for the
        speaker itself participant 1."""
        return 1 if self.index == 0 else 0

    def layer_of(self, other):
        return HIGH if other.index == self.speaker() else LOW

    def expected(self):
        """The (publisher, source) streams it should receive."""
        out = set()
        for o in self.room.participants:
            if o is self:
                continue
            out |= {(o.stamp_id, self.layer_of(o)), (o.stamp_id, MIC[0])}
            if o.shares:
                out.add((o.stamp_id, SCREEN[0]))
        return out

    def streams(self, ssrcs, mid_ext, rid_ext):
        """The publish request's streams: the camera's layers (mid "0"), the microphone ("1"), the
        share ("2")."""
        out = []
        for (rid, source, fps, packets, size, _, _), ssrc in zip(LAYERS, ssrcs["camera"]):
            s = {"source": source, "kind": "video", "ssrc": ssrc, "pt": 96, "fps": fps, "packets": packets,
                 "size": size, "mid": "0"}
            if mid_ext is not None:
                s["midExt"] = mid_ext
            if rid_ext is not None:
                s.update(rid=rid, ridExt=rid_ext)
            out.append(s)
        for mid, (source, fps, packets, size), kind, pt, key in (("1", MIC, "audio", 111, "microphone"),
                                                                 ("2", SCREEN, "video", 96, "screen_share")):
            if key == "screen_share" and not self.shares:
                continue
            s = {"source": source, "kind": kind, "ssrc": ssrcs[key], "pt": pt, "fps": fps, "packets": packets,
                 "size": size, "mid": mid}
            if mid_ext is not None:
                s["midExt"] = mid_ext
            out.append(s)
        return out

    def offer(self, local):
        """Its publisher offer (simulcast camera, microphone, maybe a share) and the SSRCs it sends."""
        ssrcs = {"camera": [random.getrandbits(31) | 1 for _ in LAYERS], "microphone": random.getrandbits(31) | 1,
                 "screen_share": random.getrandbits(31) | 1}
        sections = [("video", f"{self.pub}-camera", None, [layer[0] for layer in LAYERS]),
                    ("audio", f"{self.pub}-microphone", ssrcs["microphone"], None)]
        if self.shares:
            sections.append(("video", f"{self.pub}-screen", ssrcs["screen_share"], None))
        return simulcast_offer(local, sections), ssrcs


class Room:
    def __init__(self, index, size, shared, first_stamp_id):
        self.index, self.size, self.shared = index, size, shared
        self.name = f"meet{index}"
        self.participants = []
        for i in range(size):
            self.participants.append(Participant(self, i, first_stamp_id + i))


def make_rooms(first, count, size, share_every):
    return [Room(r, size, r % share_every == 0, 1 + r * size) for r in range(first, first + count)]


# -- the servers ------------------------------------------------------------------------------------

def loopback(sdp, what):
    """The SDP's transport, after checking that it announces candidates on 127.0.0.1 only (the
    benchmark's traffic stays on the loopback)."""
    from media_forward import loopback_candidates_only
    loopback_candidates_only(sdp, what)
    return transport(sdp)


async def publish_streams(pub_peers, p, answer, ssrcs):
    """Connects the participant's publisher peer to the server's answer and starts its streams."""
    await pub_peers.call("connect", id=p.pub, **connect_fields(loopback(answer, "an answer"), viewer=False))
    await pub_peers.call("publish", id=p.pub, publisher=p.stamp_id,
                         streams=p.streams(ssrcs, answered_mid_extension(answer),
                                           answered_mid_extension(answer, RID_EXTENSION)))


class AtriumMeetings:
    """Atrium, each participant a signaling client that joins without auto-subscription, publishes
    its camera with declared layers (q, h, f) and microphone (and share) in one `publish_offer`, and
    subscribes to every track of the others as it is published: quality `low` for a tile, `high`
    for the speaker's camera. Its subscriber connection answers every `subscriber_offer`."""

    def __init__(self, workdir, workers=None):
        from conftest import Server
        self.name = "Atrium"
        args = ["--dev", "--store", "memory", "--auto-create-rooms", "any", "--media-bind", "127.0.0.1"]
        if workers is not None:
            args += ["--media-workers", str(workers)]
        self.server = Server(os.path.join(workdir, f"atrium-{time.time_ns()}"), *args)
        self.clients, self.viewers, self.tasks = [], [], []

    @property
    def pid(self):
        return self.server.proc.pid

    async def start(self, pub_peers, sub_peers):
        self.server.start()
        self.pub_peers, self.sub_peers = pub_peers, sub_peers

    async def join(self, p):
        from signal_client import joined
        c = await joined(self.server, p.pub, room=p.room.name, autoSubscribe=False)
        c.start_keepalive(5)
        self.clients.append(c)
        self.viewers.append(AtriumViewer(c, self.sub_peers, p.sub))
        local = await self.pub_peers.call("open", id=p.pub)
        offer, ssrcs = p.offer(local)
        tracks = [{"mid": "0", "source": "camera", "name": p.pub, "width": 1280, "height": 720,
                   "layers": [{"rid": rid, "width": w, "height": h} for rid, _, _, _, _, w, h in LAYERS]},
                  {"mid": "1", "source": "microphone", "name": p.pub}]
        if p.shares:
            tracks.append({"mid": "2", "source": "screen_share", "name": p.pub, "width": 1920, "height": 1080})
        result = await c.request("publish_offer", timeout=15, sdp=offer, tracks=tracks)
        if result.get("rejected"):
            raise RuntimeError(f"Atrium rejected {result['rejected']}")
        await publish_streams(self.pub_peers, p, result["sdp"], ssrcs)
        self.tasks.append(asyncio.get_running_loop().create_task(self._follow(c, p)))

    async def _follow(self, c, p):
        """Subscribes to every track of the others, those already published and those to come."""
        by_name = {o.pub: o for o in p.room.participants}
        tracks = [t for o in c.snapshot["participants"] for t in o["tracks"]]
        while not c.is_closed:
            for t in tracks:
                owner = by_name.get(t.get("name"))
                if owner is None or owner is p:
                    continue
                quality = "high" if t["source"] != "camera" or p.layer_of(owner) == HIGH else "low"
                await c.request("subscribe", trackId=t["id"], quality=quality)
            try:
                tracks = [(await c.expect("track_published", timeout=3600))["track"]]
            except AssertionError:
                tracks = []

    async def stop(self):
        for t in self.tasks:
            t.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        for v in self.viewers:
            await v.close()
        self.server.stop()


class PionMeetings(PionProcess):
    """The pion SFU: a participant's offer published in its room, its subscriber connection offered
    the others' tracks (the chosen layer of each camera), and every earlier participant's connection
    offered its tracks in turn (a new offer on the same connection)."""
    name = "pion"

    async def start(self, pub_peers, sub_peers):
        self.pub_peers, self.sub_peers = pub_peers, sub_peers
        await self.launch()

    async def join(self, p):
        local = await self.pub_peers.call("open", id=p.pub)
        offer, ssrcs = p.offer(local)
        published = await self.post("/publish", {"room": p.room.name, "sdp": offer})
        p.state["pion"] = published["id"]
        await publish_streams(self.pub_peers, p, published["sdp"], ssrcs)
        others = [o for o in p.room.participants if o is not p and "pion" in o.state]
        if others:
            await self._subscribe(p, others)
        for o in others:
            if "pion_sub" in o.state:
                offered = await self.post("/update", {"id": o.state["pion_sub"], "publishers": [p.state["pion"]],
                                                      "rids": self._rids(o, [p])})
                await self.post("/answer", {"id": offered["id"], "sdp": viewer_answer(offered["sdp"], o.state["local"])})
            else:
                await self._subscribe(o, [p])

    @staticmethod
    def _rids(p, publishers):
        return {str(o.state["pion"]): LAYERS[p.layer_of(o)][0] for o in publishers}

    async def _subscribe(self, p, publishers):
        """Opens the subscriber connection of `p` carrying `publishers`' tracks."""
        offered = await self.post("/subscribe", {
            "room": p.room.name, "exclude": p.state["pion"], "rids": self._rids(p, publishers)})
        local = p.state["local"] = await self.sub_peers.call("open", id=p.sub)
        p.state["pion_sub"] = offered["id"]
        await self.post("/answer", {"id": offered["id"], "sdp": viewer_answer(offered["sdp"], local)})
        await self.sub_peers.call("connect", id=p.sub, **connect_fields(loopback(offered["sdp"], "an offer"),
                                                                         viewer=True))


class JanusMeetings:
    """Janus's VideoRoom over its HTTP API: a room per meeting; each participant a publisher handle
    (its simulcast offer) and one subscriber handle for every other feed of the room, added with
    `update` as feeds appear, each camera's substream set with `configure` (0 the low layer, 2 the
    high one)."""
    name = "Janus"

    def __init__(self, workdir):
        self.janus = JanusProcess(os.path.join(workdir, f"janus-{time.time_ns()}"))
        self.session = None

    @property
    def pid(self):
        return self.janus.proc.pid

    async def start(self, pub_peers, sub_peers):
        from media_forward import JanusSession
        self.pub_peers, self.sub_peers = pub_peers, sub_peers
        self.janus.start()
        self.session = JanusSession(self.janus.port)
        await self.session.create()
        self.admin = await self.session.attach()
        self.rooms = set()

    async def _event(self, handle, *want, timeout=30):
        """The handle's next plugin event whose data has one of the keys `want` ("jsep": one with a
        JSEP); others, such as the room's `publishers` notices, are skipped."""
        while True:
            data, jsep = await self.session.event(handle, timeout=timeout)
            if any(w in data for w in want) or ("jsep" in want and jsep):
                return data, jsep

    async def join(self, p):
        s, room = self.session, 1000 + p.room.index
        if room not in self.rooms:
            created = await s.message(self.admin, {
                "request": "create", "room": room, "publishers": p.room.size, "bitrate": 10_000_000,
                "videocodec": "vp8", "audiocodec": "opus", "permanent": False})
            if created.get("videoroom") != "created":
                raise JanusError(f"create room: {created}")
            self.rooms.add(room)
        h = await s.attach()
        await s.message(h, {"request": "join", "ptype": "publisher", "room": room, "display": p.pub})
        joined, _ = await self._event(h, "id")
        p.state["feed"] = joined["id"]
        local = await self.pub_peers.call("open", id=p.pub)
        offer, ssrcs = p.offer(local)
        descriptions = [{"mid": "0", "description": "camera"}, {"mid": "1", "description": "microphone"}]
        # rid_order: the offer lists its rids low first (Janus assumes high first otherwise).
        await s.message(h, {"request": "publish", "descriptions": descriptions},
                        jsep={"type": "offer", "sdp": offer, "trickle": False, "rid_order": "lmh"})
        _, answer = await self._event(h, "jsep")
        await publish_streams(self.pub_peers, p, answer["sdp"], ssrcs)
        # A feed can be subscribed to once its connection is up (before, a join naming it is refused
        # with "No such feed").
        await self.session.event(h, kind="webrtcup", timeout=30)
        others = [o for o in p.room.participants if o is not p and "feed" in o.state]
        if others:
            await self._subscribe(p, others)
        for o in others:
            await self._subscribe(o, [p])

    async def _subscribe(self, p, publishers):
        """Adds `publishers`' feeds to p's subscriber handle (joining it the first time), answers the
        offer and sets each new camera's substream."""
        s, room = self.session, 1000 + p.room.index
        feeds = [{"feed": o.state["feed"]} for o in publishers]
        first = "janus_sub" not in p.state
        if first:
            h = p.state["janus_sub"] = await s.attach()
            await s.message(h, {"request": "join", "ptype": "subscriber", "room": room, "streams": feeds})
        else:
            h = p.state["janus_sub"]
            await s.message(h, {"request": "update", "subscribe": feeds})
        data, offer = await self._event(h, "jsep")
        if first:
            p.state["local"] = await self.sub_peers.call("open", id=p.sub)
        await s.message(h, {"request": "start"},
                        jsep={"type": "answer", "sdp": viewer_answer(offer["sdp"], p.state["local"]), "trickle": False})
        if first:
            await self.sub_peers.call("connect", id=p.sub, **connect_fields(loopback(offer["sdp"], "an offer"),
                                                                             viewer=True))
        try:
            await self._event(h, "started", "configured", timeout=10)
        except JanusError:
            pass        # an update's answer is not always confirmed
        by_feed = {o.state["feed"]: o for o in publishers}
        streams = [{"mid": st["mid"], "substream": p.layer_of(by_feed[st["feed_id"]])}
                   for st in data.get("streams", []) if st.get("type") == "video" and st.get("feed_id") in by_feed]
        if streams:
            await s.message(h, {"request": "configure", "streams": streams})

    async def stop(self):
        if self.session is not None:
            await self.session.destroy()
        self.janus.stop()


# -- measuring ------------------------------------------------------------------------------------

async def join_rooms(server, rooms, concurrency):
    """Joins the rooms' participants: the rooms `concurrency` at a time, each room's participants one
    after the other. Marks when each started."""
    gate = asyncio.Semaphore(concurrency)

    async def one(room):
        async with gate:
            for p in room.participants:
                p.started = time.monotonic_ns()
                await server.join(p)

    await asyncio.gather(*(one(r) for r in rooms))


async def receiving(sub_peers, participants, timeout):
    """Waits until every participant receives every stream it asked for; returns how many do."""
    deadline = time.monotonic() + timeout
    while True:
        stats = await sub_peers.call("stats")
        ok = sum(1 for p in participants if p.expected() <= got(stats, p))
        if ok == len(participants) or time.monotonic() > deadline:
            return ok
        await asyncio.sleep(0.3)


def got(stats, p, since=None):
    """The (publisher, source) streams p's subscriber peer received (since the `since` stats: only
    those that advanced)."""
    mine = stats["peers"].get(p.sub, {}).get("sources", [])
    before = {}
    if since is not None:
        before = {(s["publisher"], s["source"]): s["packets"] for s in since["peers"].get(p.sub, {}).get("sources", [])}
    return {(s["publisher"], s["source"]) for s in mine if s["packets"] > before.get((s["publisher"], s["source"]), 0)}


def totals(stats, participants):
    packets = lost = 0
    for p in participants:
        for s in stats["peers"].get(p.sub, {}).get("sources", []):
            packets += s["packets"]
            lost += s["lost"]
    return packets, lost


def join_latencies(stats, participants):
    """Milliseconds from each participant's first request to its first media packet, but the first
    of each room; None for one that got nothing."""
    out = []
    for p in participants:
        if p.index == 0:
            continue
        first = stats["peers"].get(p.sub, {}).get("firstMedia")
        out.append(None if first is None else (first - p.started) / 1e6)
    return out


async def window(run, pub_peers, sub_peers, participants, seconds):
    """Figures over `seconds` of the running meetings."""
    pids = {"server": run.pid, "subscribers": sub_peers.pid, "publishers": pub_peers.pid}
    s0 = await sub_peers.call("stats")          # also resets the latency histogram
    p0 = await pub_peers.call("stats")
    m = await server_procs.machine_window(run.pid, pids, seconds)
    s1 = await sub_peers.call("stats")
    p1 = await pub_peers.call("stats")
    elapsed, cpu, udp0, udp1 = m["elapsed"], m["cpu"], m["udp0"], m["udp1"]
    packets0, lost0 = totals(s0, participants)
    packets1, lost1 = totals(s1, participants)
    delivered, lost = packets1 - packets0, lost1 - lost0

    def sent(stats):
        return sum(x["packets"] for pid in stats["peers"].values() for x in pid["sent"])

    right = sum(1 for p in participants if got(s1, p, since=s0) == p.expected())
    # Peers whose connection is not up (a publisher that never connected sends nothing).
    down = {"publishers": sum(1 for p in participants if p1["peers"].get(p.pub, {}).get("state") != "connected"),
            "subscribers": sum(1 for p in participants if s1["peers"].get(p.sub, {}).get("state") != "connected")}
    expected = sum(rate(source) for p in participants for _, source in p.expected())
    return {
        "elapsed": elapsed, "cpu": cpu, "delivered": delivered, "lost": lost,
        "pps": delivered / elapsed, "expected_pps": expected, "sent_pps": (sent(p1) - sent(p0)) / elapsed,
        "intended_pps": sum(rate(source) for p in participants for source in
                            [layer[1] for layer in LAYERS] + [MIC[0]] + ([SCREEN[0]] if p.shares else [])),
        "loss": lost / (delivered + lost) if delivered + lost else None,
        "us_per_packet": 1e6 * cpu / delivered if delivered else None,
        "subscribers_cpu": (s1["cpu"] - s0["cpu"]) / elapsed, "publishers_cpu": (p1["cpu"] - p0["cpu"]) / elapsed,
        "p50": s1["latency"]["p50"], "p99": s1["latency"]["p99"],
        "right_layers": right, "participants": len(participants), "down": down,
        "drops": {k: udp1[pid][0] - udp0[pid][0] for k, pid in pids.items()},
        "waited": m["waited"],
        "server_cores": len(os.sched_getaffinity(run.pid)),
    }


def client_limit(r):
    """Why a client, not the server, limited a window ("" when none did): a client above
    CLIENT_LIMIT of a core, publishers that sent under 95 % of their intended rate, or datagrams the
    clients' own sockets dropped."""
    notes = []
    drops = r["drops"]["subscribers"] + r["drops"]["publishers"]
    if drops > 0:
        notes.append(f"clients' sockets dropped {drops} datagrams")
    if r["sent_pps"] < 0.95 * r["intended_pps"]:
        notes.append(f"publishers sent {r['sent_pps']:.0f}/{r['intended_pps']} pps (their thread waited for a CPU "
                     f"{100 * r['waited']['publishers']:.0f} % of the window)")
    if r["subscribers_cpu"] > CLIENT_LIMIT:
        notes.append(f"subscribers {100 * r['subscribers_cpu']:.0f} %")
    if r["publishers_cpu"] > CLIENT_LIMIT:
        notes.append(f"publishers {100 * r['publishers_cpu']:.0f} %")
    return ", ".join(notes)


def server_behind(r):
    """Why the server fell behind ("" when it did not): it delivered under 95 % of what the
    subscribers asked for (its socket backlog grows: the loss comes later)."""
    if r["pps"] < 0.95 * r["expected_pps"]:
        return f"delivered {r['pps']:.0f} of {r['expected_pps']} packets/s"
    return ""


def not_connected(r):
    """The peers whose connection to the server is not up ("" when all are)."""
    d = r["down"]
    if not d["publishers"] and not d["subscribers"]:
        return ""
    return f"connections not up: {d['publishers']} publishers, {d['subscribers']} subscribers"


def failed(r):
    return ((r["loss"] or 0) > LOSS_LIMIT or bool(server_behind(r)) or bool(client_limit(r))
            or bool(not_connected(r)))


async def scenario(make_run, rooms_at, args, pinned=None):
    """One server, one set of clients: for each entry of `rooms_at` (the rooms to add, cumulative),
    those rooms joined, two key-frame intervals of steady sending, then one measured window over every
    room up so far. `pinned`: (server CPUs, client CPUs). Returns the windows, and stops at the first
    that fails when there are several (the saturation run)."""
    run = make_run()
    pub_peers = await NativePeers.spawn()
    sub_peers = await NativePeers.spawn()
    results = []
    try:
        await run.start(pub_peers, sub_peers)
        for pid in (run.pid, sub_peers.pid, pub_peers.pid):
            if args.nice:
                prioritize(pid, args.nice)
        if pinned:
            pin(run.pid, pinned[0])
            pin(sub_peers.pid, pinned[1])
            pin(pub_peers.pid, pinned[1])
        await asyncio.sleep(1)
        rss_before = rss_kib(run.pid)
        rooms = []
        for new in rooms_at:
            t0 = time.monotonic()
            await join_rooms(run, new, args.concurrency)
            if pinned:      # threads the server started for the new rooms
                pin(run.pid, pinned[0])
            rooms += new
            everyone = [p for room in rooms for p in room.participants]
            complete = await receiving(sub_peers, everyone, args.start_timeout)
            joined_in = time.monotonic() - t0
            await asyncio.sleep(2 * KEY_FRAME_INTERVAL)
            rss = rss_kib(run.pid)
            stats = await sub_peers.call("stats")
            joins = join_latencies(stats, [p for room in new for p in room.participants])
            r = await window(run, pub_peers, sub_peers, everyone, args.seconds)
            r.update(name=run.name, rooms=len(rooms), size=rooms[0].size, complete=complete,
                     rss_per_participant=(rss - rss_before) / len(everyone), joined_in=joined_in,
                     join_p50=percentile([j for j in joins if j is not None], 50),
                     join_p99=percentile([j for j in joins if j is not None], 99),
                     join_missing=sum(1 for j in joins if j is None), pinned=pinned)
            results.append(r)
            if len(rooms_at) > 1:
                print(f"  {run.name} {len(rooms)} rooms x {rooms[0].size}: delivered {r['pps']:.0f} of "
                      f"{r['expected_pps']} packets/s, loss {100 * (r['loss'] or 0):.3f} %, server CPU "
                      f"{100 * r['cpu'] / r['elapsed']:.0f} %, subscribers {100 * r['subscribers_cpu']:.0f} %, "
                      f"publishers {100 * r['publishers_cpu']:.0f} %, server socket drops {r['drops']['server']}, "
                      f"server's threads waited for a CPU {100 * r['waited']['server']:.0f} % (summed over them); "
                      f"{server_behind(r) or 'server kept up'}; {client_limit(r) or 'clients kept up'}"
                      f"{'; ' + not_connected(r) if not_connected(r) else ''}; {complete} of {len(everyone)} got "
                      f"every stream before the window", flush=True)
                if failed(r):
                    break
        return results
    except Exception as e:
        print(f"  {run.name}: failed: {e!r}", flush=True)
        results.append({"name": run.name, "error": repr(e)})
        return results
    finally:
        await run.stop()
        await sub_peers.close()
        await pub_peers.close()


# -- report ---------------------------------------------------------------------------------------

def print_point(results):
    ok = [r for r in results if "error" not in r]
    for r in results:
        if "error" in r:
            print(f"  {r['name']}: no figures ({r['error']})")
    if not ok:
        return
    t = Table(ok, min_column=12)
    t.row("server CPU per delivered packet (us)", [r["us_per_packet"] for r in ok], "{:.2f}", ratio=True)
    t.row("server CPU (% of one core)", [100 * r["cpu"] / r["elapsed"] for r in ok], "{:.1f}")
    t.row("delivered / expected (packets/s)", [f"{r['pps']:.0f}/{r['expected_pps']}" for r in ok])
    t.row("loss (%)", [None if r["loss"] is None else 100 * r["loss"] for r in ok], "{:.3f}")
    t.row("RSS per participant (KiB)", [r["rss_per_participant"] for r in ok], "{:.0f}", ratio=True)
    t.row("join latency p50 (ms)", [r["join_p50"] for r in ok], "{:.0f}", ratio=True)
    t.row("join latency p99 (ms)", [r["join_p99"] for r in ok], "{:.0f}", ratio=True)
    t.row("latency p50 (us)", [r["p50"] for r in ok], "{:.0f}", ratio=True)
    t.row("latency p99 (us)", [r["p99"] for r in ok], "{:.0f}", ratio=True)
    t.row("subscribers' CPU (% of one core)", [100 * r["subscribers_cpu"] for r in ok], "{:.0f}")
    t.row("publishers' CPU (% of one core)", [100 * r["publishers_cpu"] for r in ok], "{:.0f}")
    t.row("got exactly the layers asked for", [f"{r['right_layers']}/{r['participants']}" for r in ok])
    t.row("connections not up", [not_connected(r) or "none" for r in ok])
    t.row("client was the limit", [client_limit(r) or "no" for r in ok])
    t.print()
    targets(ok)


def targets(ok):
    """The targets beside the figures (nothing asserted)."""
    atrium = next((r for r in ok if r["name"] == "Atrium"), None)
    anchors = [r for r in ok if r["name"] != "Atrium"]
    if atrium is None or not anchors:
        return
    cpu = [r["us_per_packet"] for r in anchors if r["us_per_packet"]]
    rss = [r["rss_per_participant"] for r in anchors]
    notes = []
    if cpu and atrium["us_per_packet"]:
        cheaper = min(cpu)
        notes.append(f"CPU per packet {atrium['us_per_packet']:.2f} us vs 1/3 of the cheaper anchor {cheaper / 3:.2f}: "
                     f"{'met' if atrium['us_per_packet'] <= cheaper / 3 else 'NOT met'}")
    notes.append(f"RSS per participant {atrium['rss_per_participant']:.0f} KiB vs anchors "
                 f"{', '.join(f'{x:.0f}' for x in rss)} and 100 KiB: "
                 f"{'met' if atrium['rss_per_participant'] <= min(rss + [100]) else 'NOT met'}")
    print("  targets: " + "; ".join(notes))


def print_saturation(sat):
    rows = []
    for name, steps in sat:
        good = [r for r in steps if "error" not in r and not failed(r)]
        bad = next((r for r in steps if "error" in r or failed(r)), None)
        best = good[-1] if good else None
        if bad is None:
            why = "not reached: no loss up to the most rooms tried (raise --saturation-max)"
        elif "error" in bad:
            why = f"not found, a run failed: {bad['error']}"
        elif not_connected(bad):
            why = f"reached at {bad['rooms']} rooms: {not_connected(bad)}"
        elif (client_limit(bad) and max(bad["subscribers_cpu"], bad["publishers_cpu"]) <= CLIENT_LIMIT
              and max(bad["waited"]["subscribers"], bad["waited"]["publishers"]) > MACHINE_WAIT):
            why = (f"reached by the machine, at {bad['rooms']} rooms: {client_limit(bad)}, the clients under "
                   f"{100 * CLIENT_LIMIT:.0f} % of a core but held back by other work on their CPU")
        elif client_limit(bad):
            why = f"reached by a client, at {bad['rooms']} rooms: {client_limit(bad)}"
        elif bad["waited"]["server"] > MACHINE_WAIT and bad["cpu"] / bad["elapsed"] < 0.9 * bad["server_cores"]:
            why = (f"reached by the machine, at {bad['rooms']} rooms: loss {100 * (bad['loss'] or 0):.2f} % while the server's "
                   f"threads waited for a CPU {100 * bad['waited']['server']:.0f} % of the window (server CPU "
                   f"{100 * bad['cpu'] / bad['elapsed']:.0f} %: other work shares its core)")
        else:
            why = (f"reached by the server, at {bad['rooms']} rooms: loss {100 * (bad['loss'] or 0):.2f} % "
                   f"{'(' + server_behind(bad) + ') ' if server_behind(bad) else ''}with the clients keeping "
                   f"up (server CPU {100 * bad['cpu'] / bad['elapsed']:.0f} %, {bad['drops']['server']} datagrams "
                   f"dropped on its sockets)")
        pinned = next((r["pinned"] for r in steps if r.get("pinned")), None)
        where = (f"server {','.join(map(str, sorted(pinned[0])))}, clients {','.join(map(str, sorted(pinned[1])))}"
                 if pinned else "not pinned")
        rows.append({"name": name, "best": best, "why": why, "where": where})
    t = Table(rows, min_column=14)
    t.row("rooms held, loss <= 0.1 %", [r["best"] and r["best"]["rooms"] for r in rows], "{}", ratio=True)
    t.row("participants there", [r["best"] and r["best"]["rooms"] * r["best"]["size"] for r in rows], "{}")
    t.row("delivered there (packets/s)", [r["best"] and r["best"]["pps"] for r in rows], "{:.0f}", ratio=True)
    t.row("server CPU there (cores)", [r["best"] and r["best"]["cpu"] / r["best"]["elapsed"] for r in rows], "{:.2f}")
    t.row("server CPU per delivered packet there (us)", [r["best"] and r["best"]["us_per_packet"] for r in rows],
          "{:.2f}", ratio=True)
    t.row("rooms per core of server CPU",
          [r["best"] and r["best"]["cpu"] and r["best"]["rooms"] * r["best"]["elapsed"] / r["best"]["cpu"]
           for r in rows], "{:.0f}", ratio=True)
    t.row("CPUs (Atrium with --media-workers 1)", [r["where"] for r in rows])
    t.print()
    for r in rows:
        print(f"  {r['name']}: limit {r['why']}")


async def main_async(args):
    workdir = tempfile.mkdtemp(prefix="atrium-meetings-")
    makers = []
    if "atrium" not in args.skip:
        makers.append(lambda: AtriumMeetings(workdir))
    if "pion" not in args.skip:
        makers.append(PionMeetings)
    if "janus" not in args.skip:
        makers.append(lambda: JanusMeetings(workdir))
    try:
        for rooms, size in args.points:
            print(f"\n== {rooms} rooms x {size} participants (a share in one room of every {args.share_every}) ==",
                  flush=True)
            async def measure():
                results = []
                for make in makers:
                    results += await asyncio.wait_for(
                        scenario(make, [make_rooms(0, rooms, size, args.share_every)], args), 900)
                print_point(results)
                return results
            runs = await measured_runs(args.runs, measure)
            over_runs(runs, "rss_per_participant", "RSS per participant (KiB)", rss_cap=100)
        if args.saturation_rooms:
            size = args.saturation_participants
            pinned = pinning() if args.pin else None
            print(f"\n== saturation: rooms of {size}, added {args.saturation_rooms} at a time up to "
                  f"{args.saturation_max}, server on one core ==", flush=True)
            sat = []
            for make in makers:
                if make is makers[0] and "atrium" not in args.skip:
                    make = lambda: AtriumMeetings(workdir, workers=1)   # noqa: E731
                steps_at, first = [], 0
                while first < args.saturation_max:
                    count = min(args.saturation_rooms if first else args.saturation_first, args.saturation_max - first)
                    steps_at.append(make_rooms(first, count, size, args.share_every))
                    first += count
                steps = await asyncio.wait_for(scenario(make, steps_at, args, pinned=pinned), 1800)
                sat.append((steps[0]["name"], steps))
            print_saturation(sat)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="2x2 and 2x4, a saturation run of 4, 12, 20 ... rooms (8 more a step) up to 44")
    ap.add_argument("--points", type=lambda s: [] if s == "none" else [tuple(int(x) for x in p.split("x"))
                                                                        for p in s.split(",")],
                    default=None, help="comma-separated RxP (default 10x2,10x4,5x8; none: only the saturation run)")
    ap.add_argument("--share-every", type=int, default=3, help="a screen share in every K-th room")
    ap.add_argument("--seconds", type=float, default=8, help="measured window per point")
    ap.add_argument("--runs", type=int, default=1,
                    help="measure each point this many times (the servers in turn each time), then print the "
                         "medians and ranges and judge the targets on the medians")
    ap.add_argument("--start-timeout", type=float, default=30)
    ap.add_argument("--concurrency", type=int, default=4, help="rooms joining at once")
    ap.add_argument("--saturation-participants", type=int, default=4)
    ap.add_argument("--saturation-first", type=int, default=None, help="rooms of the first saturation step")
    ap.add_argument("--saturation-rooms", type=int, default=None, help="rooms added per saturation step (0: none)")
    ap.add_argument("--saturation-max", type=int, default=None, help="the most rooms tried")
    ap.add_argument("--nice", type=int, default=-10 if os.geteuid() == 0 else 0,
                    help="nice value of the servers and clients (default -10 as root)")
    ap.add_argument("--no-pin", dest="pin", action="store_false",
                    help="run the saturation unpinned (default: server on one CPU, clients on the others)")
    ap.add_argument("--skip", action="append", default=[], choices=["atrium", "pion", "janus"])
    args = ap.parse_args()
    if args.points is None:
        args.points = QUICK_POINTS if args.quick else POINTS
    if args.saturation_rooms is None:
        args.saturation_rooms = 8 if args.quick else 4
    if args.saturation_first is None:
        args.saturation_first = 4
    if args.saturation_max is None:
        args.saturation_max = 44 if args.quick else 160
    if args.quick:
        args.seconds = min(args.seconds, 4)
    notes = []
    if "janus" not in args.skip and janus_missing(["http"]):
        notes.append(f"Janus left out: {janus_missing(['http'])}")
        args.skip.append("janus")
    if "pion" not in args.skip and pion_missing():
        notes.append(f"pion left out: {pion_missing()}")
        args.skip.append("pion")
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
                 "?")
    print(f"machine: {os.cpu_count()} cores ({model}), Linux {platform.release()}, load average "
          f"{' '.join(open('/proc/loadavg').read().split()[:3])}")
    janus = "Janus skipped" if "janus" in args.skip else janus_version()
    pion = "pion skipped" if "pion" in args.skip else f"pion_sfu on pion {pion_version()}"
    print(f"servers: {os.environ['ATRIUM_BIN']}; {pion}; {janus}; clients: {viewers_binary()}")
    for n in notes:
        print(n)
    print("each participant: camera layers q/h/f 30 fps x 1/2/5 packets (625/1050/1200 bytes: 150/500/1440 kbit/s), "
          "microphone 50 packets/s (120 bytes); a share 15 fps x 6 packets (1100 bytes); subscribers get the low "
          "layer of tiles, the high layer of the speaker")
    server_procs.run_niced(args.nice, main_async(args))


if __name__ == "__main__":
    main()
