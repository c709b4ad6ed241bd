"""Media forwarding benchmark: one publisher, N subscribers, Atrium and Janus side by side in one run.

The same scenario runs against Atrium and then against Janus (Debian's `janus` package, VideoRoom
plugin, driven over its HTTP API: create a session, attach janus.plugin.videoroom, create a room,
join as publisher and publish with aiortc's offer, then each subscriber joins with "streams",
answers Janus's offer and sends "start"; events by long-polling GET). One aiortc publisher sends a
camera (640x360, 30 fps, VP8), a screen (1280x720, 15 fps, VP8), both pictures changing every frame,
and a microphone (Opus, 20 ms); N aiortc subscribers receive all three tracks. Once every subscriber
receives every track, and after a warm-up, the figures are taken over `--seconds`:

- the server process's CPU time (user + sys, /proc/PID/stat) and RSS (/proc/PID/status);
- what the subscribers received, counted in aiortc the same way for both servers: RTP packets
  (the delivered packet count behind CPU per packet and packet rate), packets lost, frames per
  track, the screen's bitrate; next to it Atrium's own count of packets sent
  (`atrium_media_packets_total{direction="out"}` on /metrics, refreshed about once a second);
- datagrams the kernel dropped on the server's and on the subscribers' sockets, and the client
  processes' CPU: whether a client, not the server, was the limit.

A benchmark, not a test: it asserts nothing about speed. Usage:
    python3 bench/media_forward.py [--subscribers 4] [--seconds 20] [--warmup 3]
It starts its own servers on 127.0.0.1 and stops them: ATRIUM_BIN (default .build/release/atrium if
built, else .build/debug/atrium), and `janus` from PATH configured from a temporary directory (only
the VideoRoom plugin and the HTTP transport on a free 127.0.0.1 port; ICE on `lo` only, no STUN;
bench/janus_peer.py, shared with bench/signal_load.py, starts it and tells what it takes to keep
Janus 1.1.2's candidates on 127.0.0.1). Every candidate either server announces is checked to be
127.0.0.1.

Cheap clients, identical input:
- The video is encoded once, before the servers start: `--clip-seconds` loops of each source
  (libvpx with aiortc's realtime CBR settings at `--video-bitrate`, one key frame per loop) that the
  publisher sends as pre-encoded frames (aiortc packetizes an `av.Packet` without encoding it). So the
  publisher costs little CPU and both servers get the same bitstream. A key frame request (PLI,
  FIR) restarts the loop at its key frame, as an encoder would answer it; REMB changes nothing.
- The publisher runs in a process of its own (this file run as `publisher-worker`, driven over its
  stdin/stdout as e2e/integration/media_peer.py does).
- The subscribers do not decode. aiortc's RTCRtpReceiver hands each encoded frame its jitter
  buffer completes to a decoder thread through a queue.Queue (`__decoder_queue`, read by
  `aiortc.rtcrtpreceiver.decoder_worker`); this file gives every receiver a `CountingQueue` instead,
  which counts the frame and its bytes and drops it (the thread only waits for the end of the
  track). RTP, SRTP, the jitter buffer, NACK and RTCP stay aiortc's own. The subscribers' UDP
  receive buffers are enlarged (`enlarge_receive_buffers`), and their backlog is watched.
"""
import argparse
import asyncio
import collections
import fractions
import http.client
import json
import os
import pickle
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import server_procs  # noqa: E402  (first: the harness's import path and ATRIUM_BIN's default)
server_procs.use_integration_harness()

import aioice.turn                # noqa: E402
import av                         # noqa: E402
import numpy as np                # noqa: E402
import aiortc                     # noqa: E402
from aiortc import RTCSessionDescription   # noqa: E402
# The test harness: importing it confines aioice to 127.0.0.1; its worker handle runs the publisher.
from media_peer import _Paced, _Worker, peer_connection    # noqa: E402
# Janus started on a configuration of our own, 127.0.0.1 only (shared with bench/signal_load.py).
from side_by_side import Table   # noqa: E402
from janus_peer import JanusError, JanusProcess, janus_version, missing as janus_missing   # noqa: E402

SOURCES = ["camera", "screen_share", "microphone"]
VIDEO = {"camera": {"width": 640, "height": 360, "fps": 30},
         "screen_share": {"width": 1280, "height": 720, "fps": 15}}
VIDEO_CLOCK = 90000
AUDIO_RATE = 48000
AUDIO_SAMPLES = 960          # 20 ms
CLK_TCK = os.sysconf("SC_CLK_TCK")


# aioice asks for 256 KiB of socket receive buffer (the kernel doubles it). A server that sends in
# batches (sendmmsg) fills that faster than a Python receiver wakes up, and the kernel drops the
# rest: the subscribers ask for more (`enlarge_receive_buffers`), so that they are not the bottleneck.
CLIENT_RCVBUF = 4 << 20
aioice.turn.UDP_SOCKET_BUFFER_SIZE = CLIENT_RCVBUF


def enlarge_receive_buffers(pc):
    """Raises the receive buffer of the peer connection's UDP sockets to CLIENT_RCVBUF beyond
    net.core.rmem_max where allowed (SO_RCVBUFFORCE needs CAP_NET_ADMIN), else as far as rmem_max
    lets SO_RCVBUF go; returns the smallest effective size, bytes (the kernel doubles requests)."""
    sizes = []
    for t in pc.getTransceivers():
        dtls = t.receiver.transport if t.receiver is not None else None
        connection = getattr(getattr(dtls, "transport", None), "_connection", None)
        for protocol in getattr(connection, "_protocols", []):
            sock = protocol.transport.get_extra_info("socket")
            if sock is None:
                continue
            try:
                sock.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33), CLIENT_RCVBUF)
            except OSError:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, CLIENT_RCVBUF)
            sizes.append(sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF))
    return min(sizes) if sizes else None


# -- the publisher's sources (in the worker process) -------------------------------------------------

class MovingPicture:
    """Pictures that change every frame: a textured background scrolling sideways (motion an
    encoder can predict) and a rectangle of fresh random 8x8 blocks moving around the picture
    (content it cannot predict), so the encoder has more to say than its bitrate allows."""

    def __init__(self, source, seed, spec=None):
        spec = spec or VIDEO[source]
        self.w, self.h = spec["width"], spec["height"]
        self._rng = np.random.default_rng(seed)
        # A yuv420p picture as one (h * 3/2, w) array: the luma rows, then the chroma planes.
        rows = self.h * 3 // 2
        blocks = self._rng.integers(16, 236, (-(-rows // 16), self.w // 16), dtype=np.uint8)
        self._base = np.kron(blocks, np.ones((16, 16), np.uint8))[:rows]
        self._n = 0

    def next(self):
        n, self._n = self._n, self._n + 1
        img = np.roll(self._base, 4 * n, axis=1)
        bw, bh = self.w // 4 // 16 * 16, self.h // 4 // 16 * 16
        x = (n * 24) % (self.w - bw)
        y = (n * 8) % (self.h - bh)
        noise = self._rng.integers(16, 236, (bh // 8, bw // 8), dtype=np.uint8)
        img[y:y + bh, x:x + bw] = np.kron(noise, np.ones((8, 8), np.uint8))
        return av.VideoFrame.from_ndarray(img, format="yuv420p")


def encode_clip(source, bitrate, seconds, spec=None):
    """`seconds` of MovingPicture encoded in VP8 as aiortc's encoder does it (libvpx, realtime,
    CBR at `bitrate`), with one key frame, at the start: a list of encoded frames (bytes).
    `spec` ({width, height, fps}) defaults to the source's in VIDEO."""
    spec = spec or VIDEO[source]
    fps, count = spec["fps"], int(seconds * spec["fps"])
    codec = av.CodecContext.create("libvpx", "w")
    codec.width, codec.height = spec["width"], spec["height"]
    codec.pix_fmt = "yuv420p"
    codec.time_base = fractions.Fraction(1, fps)
    codec.framerate = fractions.Fraction(fps, 1)
    codec.bit_rate = bitrate
    codec.gop_size = 3000             # no key frame but the first
    codec.qmin, codec.qmax = 2, 56
    codec.options = {"bufsize": str(bitrate), "cpu-used": "-6", "deadline": "realtime", "lag-in-frames": "0",
                     "minrate": str(bitrate), "maxrate": str(bitrate), "noise-sensitivity": "4",
                     "overshoot-pct": "15", "partitions": "0", "static-thresh": "1", "undershoot-pct": "100"}
    picture = MovingPicture(source, seed=len(source), spec=spec)
    frames = []
    for i in range(count):
        frame = picture.next()
        frame.pts = i
        frame.time_base = codec.time_base
        frames += [bytes(p) for p in codec.encode(frame)]
    frames += [bytes(p) for p in codec.encode(None)]
    return frames


def encode_clips(path, bitrate, seconds):
    """Encodes the camera's and the screen's clips once, for both servers' publishers."""
    clips = {source: encode_clip(source, bitrate, seconds) for source in VIDEO}
    with open(path, "wb") as f:
        pickle.dump(clips, f)
    return {source: 8 * sum(map(len, frames)) / seconds for source, frames in clips.items()}


class ClipTrack(_Paced):
    """A video source sending a pre-encoded clip in a loop, at its frame rate: aiortc only
    packetizes encoded frames (`av.Packet`) it is given. A key frame starts each loop, and a key
    frame request (PLI or FIR from the server) restarts the loop at once, as an encoder would send
    a key frame; the servers' REMB changes nothing."""

    kind = "video"

    def __init__(self, source, frames):
        super().__init__(VIDEO_CLOCK, VIDEO_CLOCK // VIDEO[source]["fps"])
        self._frames = frames
        self._n = 0
        self.key_frame_requests = 0

    def request_key_frame(self):
        self.key_frame_requests += 1
        self._n = 0

    async def recv(self):
        pts = await self._next_pts()
        packet = av.Packet(self._frames[self._n % len(self._frames)])
        self._n += 1
        packet.pts = pts
        packet.time_base = fractions.Fraction(1, VIDEO_CLOCK)
        return packet


class ToneTrack(_Paced):
    """The microphone: a 440 Hz tone, 20 ms mono frames at 48 kHz."""

    kind = "audio"

    def __init__(self):
        super().__init__(AUDIO_RATE, AUDIO_SAMPLES)
        t = np.arange(AUDIO_RATE) / AUDIO_RATE
        self._second = (np.sin(2 * np.pi * 440 * t) * 8000).astype(np.int16)

    async def recv(self):
        pts = await self._next_pts()
        start = pts % AUDIO_RATE
        frame = av.AudioFrame.from_ndarray(self._second[None, start:start + AUDIO_SAMPLES], format="s16",
                                           layout="mono")
        frame.sample_rate = AUDIO_RATE
        frame.pts = pts
        frame.time_base = fractions.Fraction(1, AUDIO_RATE)
        return frame


async def _serve_publisher(reader):
    """The worker's loop, one JSON request per stdin line, one reply per stdout line:
    `offer` -> {sdp, mids}; `answer` (sdp) -> {}; `stats` -> {connectionState, sent, pli, nack};
    `close`."""
    pc = peer_connection()
    transceivers = {}
    nacked = collections.Counter()      # source -> packets the server asked to be sent again

    def watch_feedback(source, sender, track):
        # aiortc's RTCRtpSender handles a PLI or FIR by calling self._send_keyframe() and a NACK by
        # awaiting self._retransmit(seq) per packet: instance attributes come first in the lookup.
        if isinstance(track, ClipTrack):
            sender._send_keyframe = track.request_key_frame
        retransmit = sender._retransmit

        async def counted(seq):
            nacked[source] += 1
            await retransmit(seq)
        sender._retransmit = counted

    async def handle(req):
        if req["op"] == "offer":
            with open(req["clips"], "rb") as f:
                clips = pickle.load(f)
            for source in SOURCES:
                track = ClipTrack(source, clips[source]) if source in VIDEO else ToneTrack()
                transceivers[source] = pc.addTransceiver(track, direction="sendonly")
                watch_feedback(source, transceivers[source].sender, track)
            await pc.setLocalDescription(await pc.createOffer())
            return {"sdp": pc.localDescription.sdp, "mids": {s: t.mid for s, t in transceivers.items()}}
        if req["op"] == "answer":
            await pc.setRemoteDescription(RTCSessionDescription(sdp=req["sdp"], type="answer"))
            return {}
        if req["op"] == "stats":
            sent = {}
            for source, t in transceivers.items():
                report = await t.sender.getStats()
                sent[source] = sum(s.packetsSent for s in report.values() if s.type == "outbound-rtp")
            pli = {s: t.sender.track.key_frame_requests for s, t in transceivers.items()
                   if isinstance(t.sender.track, ClipTrack)}
            return {"connectionState": pc.connectionState, "sent": sent, "pli": pli, "nack": dict(nacked)}
        raise ValueError(f"unknown op {req['op']!r}")

    try:
        await answer_requests(reader, handle)
    finally:
        await pc.close()


async def answer_requests(reader, handle):
    """A worker's loop: one JSON request per stdin line, `await handle(request)` answered on one
    stdout line ({"ok": result} or {"error": text}), until `close` or the end of stdin."""
    def reply(obj):
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    while True:
        line = await reader.readline()
        if not line:
            return
        req = json.loads(line)
        if req["op"] == "close":
            reply({"ok": {}})
            return
        try:
            reply({"ok": await handle(req)})
        except Exception as e:
            reply({"error": f"{type(e).__name__}: {e}"})


async def worker_main(max_seconds, serve=None):
    """Runs `serve(reader)` (default: this file's publisher) on stdin for at most `max_seconds`."""
    reader = asyncio.StreamReader(limit=1 << 20)
    await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    try:
        await asyncio.wait_for((serve or _serve_publisher)(reader), max_seconds)
    except asyncio.TimeoutError:
        pass


class PublisherWorker(_Worker):
    """The parent's handle on the publisher process (this file run as `publisher-worker`): the
    publisher's packetizing, SRTP and Opus encoding get a process, and an interpreter lock, of their
    own. It stops by itself after `max_seconds`, should the parent die without closing it."""

    @classmethod
    async def spawn(cls, max_seconds):
        return await super().spawn(script=__file__, max_seconds=max_seconds)


# -- cheap subscribers ------------------------------------------------------------------------------

class CountingQueue:
    """Stands in for an RTCRtpReceiver's decoder queue (a queue.Queue its decoder thread reads):
    `put` counts each encoded frame the jitter buffer completes, and its bytes, on the event loop's
    thread, and drops it; the decoder thread waits in `get` until the receiver stops (it puts
    None), then ends the track as it always does. Nothing is decoded, no thread wakes per frame."""

    def __init__(self):
        self.frames = 0
        self.bytes = 0
        self._stopped = threading.Event()

    def put(self, task):
        if task is None:
            self._stopped.set()
            return
        _codec, encoded_frame = task
        self.frames += 1
        self.bytes += len(encoded_frame.data)

    def get(self):
        self._stopped.wait()
        return None


def install_counting_receivers(queue_class=CountingQueue):
    """Gives every RTCRtpReceiver created from now on a CountingQueue (or `queue_class`, a subclass)
    as its decoder queue."""
    from aiortc.rtcrtpreceiver import RTCRtpReceiver
    init = RTCRtpReceiver.__init__

    def counting_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self._RTCRtpReceiver__decoder_queue = queue_class()

    RTCRtpReceiver.__init__ = counting_init


def receiver_snapshot(receiver):
    """{packets, lost, frames, bytes} of one receiver so far. Packets and losses are per SSRC from
    the statistics aiortc's getStats reports (read directly: getStats files every SSRC of a receiver
    under one id, so an RTX stream would hide the media stream); losses only on media SSRCs."""
    streams = receiver._RTCRtpReceiver__remote_streams
    rtx = receiver._RTCRtpReceiver__rtx_ssrc
    count = receiver._RTCRtpReceiver__decoder_queue
    return {"packets": sum(s.packets_received for s in streams.values()),
            "lost": sum(s.packets_lost for ssrc, s in streams.items() if ssrc not in rtx),
            "frames": count.frames, "bytes": count.bytes}


class Receiving:
    """One subscriber's peer connection and which source each of its mids carries; `sources`,
    the sources it is to receive."""

    def __init__(self, label, pc, source_of_mid, sources=SOURCES):
        self.label = label
        self.pc = pc
        self.source_of_mid = source_of_mid     # a callable: mid -> source (None if unknown)
        self.sources = sources
        self.rcvbuf = None

    def snapshot(self):
        out = {}
        for t in self.pc.getTransceivers():
            source = self.source_of_mid(t.mid)
            if source is not None and t.receiver is not None and t.receiver.track is not None:
                out[source] = receiver_snapshot(t.receiver)
        return out

    def receiving_all(self):
        if self.rcvbuf is None:
            self.rcvbuf = enlarge_receive_buffers(self.pc)
        snap = self.snapshot()
        return all(snap.get(s, {}).get("frames", 0) > 0 for s in self.sources)


# -- process figures --------------------------------------------------------------------------------

def cpu_seconds(pid):
    """user + sys CPU time of a process (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def rss_kib(pid, key="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def socket_inodes(pid):
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(int(link[8:-1]))
    except OSError:
        pass
    return inodes


def udp_sockets(pids):
    """{pid: (datagrams the kernel dropped on its UDP sockets for a full receive buffer, bytes
    waiting in their receive buffers now)}, from /proc/net/udp (`drops`, `rx_queue`; the bytes
    count the kernel's overhead too). Shows whose sockets did not keep up: drops lose packets, a
    growing backlog delays them past the end of the measured window."""
    by_inode = {}
    with open("/proc/net/udp") as f:
        next(f)
        for line in f:
            cols = line.split()
            by_inode[int(cols[9])] = (int(cols[12]), int(cols[4].split(":")[1], 16))
    out = {}
    for pid in pids:
        mine = [by_inode[i] for i in socket_inodes(pid) if i in by_inode]
        out[pid] = (sum(d for d, _ in mine), sum(q for _, q in mine))
    return out


def loopback_candidates_only(sdp, what):
    """Stops the run if a server announces an ICE candidate anywhere but 127.0.0.1."""
    others = {line.split()[4] for line in sdp.splitlines() if line.startswith("a=candidate:")} - {"127.0.0.1"}
    if others:
        raise RuntimeError(f"{what} announces candidates outside 127.0.0.1: {sorted(others)}")


# -- the measurement common to both servers ---------------------------------------------------------

async def measure(args, name, server_pid, pub_worker, receivers, extra_counter=None):
    """Waits until every subscriber receives every track, warms up, then measures `args.seconds`."""
    deadline = time.monotonic() + args.start_timeout
    while not all(r.receiving_all() for r in receivers) and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    not_receiving = {r.label: sorted(s for s in r.sources if r.snapshot().get(s, {}).get("frames", 0) == 0)
                     for r in receivers if not r.receiving_all()}
    await asyncio.sleep(args.warmup)

    me = os.getpid()
    wpid = pub_worker.proc.pid
    t0 = time.monotonic()
    cpu0, mine0, pubcpu0 = cpu_seconds(server_pid), cpu_seconds(me), cpu_seconds(wpid)
    snaps0 = [r.snapshot() for r in receivers]
    pub0 = await pub_worker.call("stats")
    counter0 = await extra_counter() if extra_counter else None
    pids = {"server": server_pid, "subscribers": me, "publisher": wpid}
    udp0 = udp_sockets(pids.values())

    await asyncio.sleep(args.seconds)

    cpu1, mine1, pubcpu1 = cpu_seconds(server_pid), cpu_seconds(me), cpu_seconds(wpid)
    t1 = time.monotonic()
    snaps1 = [r.snapshot() for r in receivers]
    pub_stats = await pub_worker.call("stats")
    counter1 = await extra_counter() if extra_counter else None
    udp1 = udp_sockets(pids.values())
    rss, hwm = rss_kib(server_pid), rss_kib(server_pid, "VmHWM")

    elapsed = t1 - t0
    subs = []
    for r, a, b in zip(receivers, snaps0, snaps1):
        per = {}
        for s in r.sources:
            x, y = a.get(s, {}), b.get(s, {})
            per[s] = {k: y.get(k, 0) - x.get(k, 0) for k in ("packets", "lost", "frames", "bytes")}
        subs.append({"label": r.label, "tracks": per,
                     "packets": sum(v["packets"] for v in per.values()),
                     "lost": sum(v["lost"] for v in per.values())})
    delivered = sum(s["packets"] for s in subs)
    return {
        "name": name, "elapsed": elapsed,
        "cpu": cpu1 - cpu0, "rss": rss, "hwm": hwm,
        "delivered": delivered,
        "server_counter": None if counter0 is None else counter1 - counter0,
        "sent": {s: n - pub0["sent"].get(s, 0) for s, n in pub_stats["sent"].items()},
        "pli": sum(pub_stats["pli"].values()) - sum(pub0["pli"].values()),
        "nack": sum(pub_stats["nack"].values()) - sum(pub0["nack"].values()),
        "pub_state": pub_stats["connectionState"],
        "subs": subs, "not_receiving": not_receiving,
        "drops": {k: udp1[pid][0] - udp0[pid][0] for k, pid in pids.items()},
        "backlog": {k: (udp0[pid][1], udp1[pid][1]) for k, pid in pids.items()},
        "rcvbuf": min((r.rcvbuf for r in receivers if r.rcvbuf), default=None),
        "client_cpu": {"publisher": pubcpu1 - pubcpu0, "subscribers": mine1 - mine0},
        "publisher_stats": (pub0, pub_stats),
    }


# -- Atrium -----------------------------------------------------------------------------------------

ATRIUM_ARGS = ("--dev", "--store", "memory", "--auto-create-rooms", "any",
               "--udp-port", "0", "--media-bind", "127.0.0.1")
_SAMPLE = re.compile(r'^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)')


async def atrium_metric(server, name, **labels):
    status, _, body, _ = await asyncio.to_thread(server.request, "GET", "/metrics")
    total = 0.0
    for line in body.decode().splitlines():
        m = _SAMPLE.match(line)
        if m and m.group(1) == name:
            got = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
            if all(got.get(k) == v for k, v in labels.items()):
                total += float(m.group(3))
    return total


class AtriumSubscriber:
    """A participant's subscriber connection: answers every `subscriber_offer` (docs/protocol.md,
    "Media negotiation"); each offer's `tracks` name the source of each mid."""

    def __init__(self, client):
        self.client = client
        self.pc = peer_connection()
        self.sources = {}       # mid -> source
        self.error = None
        self._task = asyncio.get_running_loop().create_task(self._answer_offers())

    async def _answer_offers(self):
        try:
            while not self.client.is_closed:
                try:
                    offer = await self.client.expect("subscriber_offer", timeout=60)
                except AssertionError:      # a quiet minute
                    continue
                loopback_candidates_only(offer["sdp"], "Atrium's subscriber offer")
                self.sources.update({t["mid"]: t["source"] for t in offer["tracks"]})
                await self.pc.setRemoteDescription(RTCSessionDescription(sdp=offer["sdp"], type="offer"))
                await self.pc.setLocalDescription(await self.pc.createAnswer())
                await self.client.request("subscriber_answer", revision=offer["revision"],
                                          sdp=self.pc.localDescription.sdp)
        except Exception as e:
            self.error = e

    async def close(self):
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        await self.pc.close()


async def run_atrium(args, workdir):
    from conftest import Server
    from signal_client import joined

    server = Server(os.path.join(workdir, "atrium-data"), *ATRIUM_ARGS).start()
    opened = []
    worker = None
    try:
        async def join(identity):
            c = await joined(server, identity, room="bench")
            c.start_keepalive(5)        # the run outlasts the server's 30 s idle timeout
            opened.append(c)
            return c

        pub_client = await join("publisher")
        worker = await PublisherWorker.spawn(run_timeout(args))
        offer = await worker.call("offer", clips=args.clips)
        tracks = [{"mid": offer["mids"][s], "source": s,
                   **({"width": VIDEO[s]["width"], "height": VIDEO[s]["height"]} if s in VIDEO else {})}
                  for s in SOURCES]
        result = await pub_client.request("publish_offer", timeout=15, sdp=offer["sdp"], tracks=tracks)
        if result["rejected"]:
            raise RuntimeError(f"Atrium rejected {result['rejected']}")
        loopback_candidates_only(result["sdp"], "Atrium's publisher answer")
        await worker.call("answer", sdp=result["sdp"])

        subscribers, receivers = [], []
        for i in range(args.subscribers):
            sub = AtriumSubscriber(await join(f"sub-{i}"))
            opened.append(sub)
            subscribers.append(sub)
            receivers.append(Receiving(f"sub-{i}", sub.pc, sub.sources.get))
        figures = await measure(args, "Atrium", server.proc.pid, worker, receivers,
                                lambda: atrium_metric(server, "atrium_media_packets_total", direction="out"))
        figures["errors"] = [f"sub-{i}: stopped answering offers: {s.error!r}"
                             for i, s in enumerate(subscribers) if s.error]
        # The send path since the server started: messages handed to the kernel against packets sent,
        # and how many went out inside UDP GSO messages (0 from a server without these metrics).
        figures["udp"] = (await atrium_metric(server, "atrium_media_udp_messages_total"),
                          await atrium_metric(server, "atrium_media_udp_segmented_datagrams_total"),
                          await atrium_metric(server, "atrium_media_packets_total", direction="out"))
        return figures
    finally:
        if worker is not None:
            await worker.close()
        for x in reversed(opened):
            try:
                await asyncio.wait_for(x.close(), 10)
            except Exception:
                pass
        server.stop()


def atrium_version():
    out = subprocess.run([os.environ["ATRIUM_BIN"], "version"], capture_output=True, text=True)
    return out.stdout.strip() or out.stderr.strip()


# -- Janus ------------------------------------------------------------------------------------------

JANUS_ROOM_BITRATE = 10_000_000     # the REMB the VideoRoom sends publishers: Atrium's default cap


class JanusSession:
    """A Janus API session over HTTP: requests are POSTs, events come from a long-poll GET loop
    (on a daemon thread) and are sorted by the handle that sent them."""

    def __init__(self, port):
        self.port = port
        self.session = None
        self.loop = asyncio.get_running_loop()
        self.events = collections.defaultdict(list)     # handle id -> events not yet taken
        self.arrived = asyncio.Event()
        self.stopping = False

    def _http(self, method, path, body=None, timeout=10):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            data = None if body is None else json.dumps(body).encode()
            conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
            r = conn.getresponse()
            raw = r.read()
        finally:
            conn.close()
        if r.status != 200:
            raise JanusError(f"{method} {path}: HTTP {r.status} {raw[:300]!r}")
        return json.loads(raw)

    async def post(self, path, body):
        body = {"transaction": uuid.uuid4().hex[:12], **body}
        reply = await asyncio.to_thread(self._http, "POST", path, body)
        if reply.get("janus") == "error":
            raise JanusError(f"{body}: {reply['error']}")
        return reply

    async def create(self):
        self.session = (await self.post("/janus", {"janus": "create"}))["data"]["id"]
        threading.Thread(target=self._poll, name="janus-longpoll", daemon=True).start()

    def _poll(self):
        while not self.stopping:
            try:
                evs = self._http("GET", f"/janus/{self.session}?maxev=10", timeout=40)
            except Exception:
                if self.stopping:
                    return
                time.sleep(0.2)
                continue
            for ev in evs if isinstance(evs, list) else [evs]:
                self.loop.call_soon_threadsafe(self._deliver, ev)

    def _deliver(self, ev):
        if ev.get("janus") == "keepalive":
            return
        self.events[ev.get("sender")].append(ev)
        self.arrived.set()

    async def attach(self):
        reply = await self.post(f"/janus/{self.session}", {"janus": "attach", "plugin": "janus.plugin.videoroom"})
        return reply["data"]["id"]

    async def create_room(self, handle, room, **settings):
        """Creates VideoRoom `room` (one publisher, VP8, our REMB cap, not permanent) with `settings`
        added (`audiocodec="opus"`)."""
        created = await self.message(handle, {
            "request": "create", "room": room, "publishers": 1, "bitrate": JANUS_ROOM_BITRATE,
            "videocodec": "vp8", "permanent": False, **settings})
        if created.get("videoroom") != "created":
            raise JanusError(f"create room: {created}")

    async def message(self, handle, body, jsep=None):
        """A plugin request. Synchronous ones (create) answer with `success` and their data;
        asynchronous ones (join, publish, start) with `ack`, their result comes as an event."""
        req = {"janus": "message", "body": body}
        if jsep:
            req["jsep"] = jsep
        reply = await self.post(f"/janus/{self.session}/{handle}", req)
        if reply.get("janus") == "success":
            data = reply["plugindata"]["data"]
            if data.get("videoroom") == "event" and "error" in data:
                raise JanusError(f"{body}: {data}")
            return data
        return None

    async def event(self, handle, kind="event", timeout=15):
        """The next message of type `kind` from `handle`: for "event", the plugin's (data, jsep),
        a plugin error raising; for others ("webrtcup", "media"), the message. A hangup raises."""
        deadline = time.monotonic() + timeout
        while True:
            queue = self.events[handle]
            for i, ev in enumerate(queue):
                if ev.get("janus") == "hangup":
                    raise JanusError(f"handle {handle}: hangup {ev}")
                if ev.get("janus") == kind:
                    del queue[i]
                    if kind != "event":
                        return ev
                    data = ev["plugindata"]["data"]
                    if "error" in data:
                        raise JanusError(f"handle {handle}: {data}")
                    return data, ev.get("jsep")
            left = deadline - time.monotonic()
            if left <= 0:
                raise JanusError(f"handle {handle}: no {kind} within {timeout}s; pending {queue}")
            self.arrived.clear()
            try:
                await asyncio.wait_for(self.arrived.wait(), left)
            except asyncio.TimeoutError:
                pass

    async def destroy(self):
        self.stopping = True
        if self.session is not None:
            try:
                await self.post(f"/janus/{self.session}", {"janus": "destroy"})
            except Exception:
                pass


async def end_janus_run(janus, session, worker, pcs, failed):
    """Closes a Janus run's peer connections (each within 10 s), publisher worker and session, stops
    Janus, and prints the end of its log when the run `failed`."""
    for pc in pcs:
        try:
            await asyncio.wait_for(pc.close(), 10)
        except Exception:
            pass
    if worker is not None:
        await worker.close()
    if session is not None:
        await session.destroy()
    janus.stop()
    if failed:
        print("janus log (end):\n" + "".join(janus.log().splitlines(True)[-40:]), file=sys.stderr)


async def run_janus(args, workdir):
    janus = JanusProcess(workdir).start()
    session = None
    pcs = []
    worker = None
    failed = True
    try:
        session = JanusSession(janus.port)
        await session.create()
        admin = await session.attach()
        room = 1234
        await session.create_room(admin, room, audiocodec="opus")

        worker = await PublisherWorker.spawn(run_timeout(args))
        offer = await worker.call("offer", clips=args.clips)
        feed_source = {mid: s for s, mid in offer["mids"].items()}
        pub = await session.attach()
        await session.message(pub, {"request": "join", "ptype": "publisher", "room": room, "display": "publisher"})
        joined, _ = await session.event(pub)
        feed = joined["id"]
        await session.message(
            pub, {"request": "publish", "descriptions": [{"mid": offer["mids"][s], "description": s} for s in SOURCES]},
            jsep={"type": "offer", "sdp": offer["sdp"], "trickle": False})
        configured, answer = await session.event(pub)
        if answer is None:
            raise JanusError(f"publish: no answer in {configured}")
        loopback_candidates_only(answer["sdp"], "Janus's publisher answer")
        await worker.call("answer", sdp=answer["sdp"])
        await session.event(pub, "webrtcup")      # a feed can be subscribed to once it is up

        receivers = []
        for i in range(args.subscribers):
            h = await session.attach()
            await session.message(h, {"request": "join", "ptype": "subscriber", "room": room,
                                      "streams": [{"feed": feed}]})
            attached, jsep = await session.event(h)
            if jsep is None:
                raise JanusError(f"subscriber join: no offer in {attached}")
            loopback_candidates_only(jsep["sdp"], "Janus's subscriber offer")
            source_of_mid = {st["mid"]: feed_source.get(st.get("feed_mid")) for st in attached.get("streams", [])}
            pc = peer_connection()
            pcs.append(pc)
            await pc.setRemoteDescription(RTCSessionDescription(sdp=jsep["sdp"], type="offer"))
            await pc.setLocalDescription(await pc.createAnswer())
            await session.message(h, {"request": "start"},
                                  jsep={"type": "answer", "sdp": pc.localDescription.sdp, "trickle": False})
            await session.event(h)      # "started"
            receivers.append(Receiving(f"sub-{i}", pc, source_of_mid.get))
        figures = await measure(args, "Janus", janus.proc.pid, worker, receivers)
        figures["errors"] = []
        failed = False
        return figures
    finally:
        await end_janus_run(janus, session, worker, pcs, failed)


# -- report -----------------------------------------------------------------------------------------

def per_core(cpu, seconds):
    return 100.0 * cpu / seconds if seconds else 0.0


def spread(values):
    lo, hi = min(values), max(values)
    return f"{lo}" if lo == hi else f"{lo}-{hi}"


def report(args, results, wall):
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print()
    print(f"machine: {os.cpu_count()} cores ({model}), Linux {platform.release()}, Python "
          f"{platform.python_version()}, load average before the run {args.loadavg}")
    print(f"versions: {atrium_version()} ({os.environ['ATRIUM_BIN']}); {janus_version()} (VideoRoom, HTTP API); "
          f"aiortc {aiortc.__version__}")
    clips = ", ".join(f"{s} {b / 1000:.0f} kbit/s" for s, b in args.clip_bitrates.items())
    rcvbufs = "/".join(str((r["rcvbuf"] or 0) >> 10) for r in results)
    print(f"scenario: 1 aiortc publisher: camera 640x360 30 fps and screen 1280x720 15 fps, VP8 loops of "
          f"{args.clip_seconds:g} s encoded once at a {args.video_bitrate / 1000:.0f} kbit/s target ({clips}; a "
          f"key frame per loop), microphone Opus 20 ms; {args.subscribers} aiortc subscribers counting frames "
          f"without decoding (UDP receive buffers {rcvbufs} KiB); "
          f"all on 127.0.0.1; measured {args.seconds:g} s after every subscriber received every track "
          f"and {args.warmup:g} s of warm-up")
    print()

    table = Table(results, min_column=14)
    row = table.row

    for r in results:
        t = r["elapsed"]
        r["pps"] = r["delivered"] / t
        r["us_per_packet"] = 1e6 * r["cpu"] / r["delivered"] if r["delivered"] else None
        r["screen_kbps"] = [8 * sub["tracks"]["screen_share"]["bytes"] / t / 1000 for sub in r["subs"]]
    row("server CPU, user+sys (s)", [r["cpu"] for r in results], "{:.2f}")
    row("server CPU (% of one core)", [per_core(r["cpu"], r["elapsed"]) for r in results], "{:.1f}")
    row("server CPU per delivered packet (us)", [r["us_per_packet"] for r in results], "{:.1f}", ratio=True)
    row("server RSS at the end (MiB)", [r["rss"] / 1024 for r in results], "{:.1f}", ratio=True)
    row("server peak RSS (MiB)", [r["hwm"] / 1024 for r in results], "{:.1f}")
    row("packets delivered (subscribers' count)", [r["delivered"] for r in results])
    row("delivered packet rate (packets/s)", [r["pps"] for r in results], "{:.0f}", ratio=True)
    row("server's own count of packets out (1/s)", [r["server_counter"] for r in results], "{:.0f}")
    row("kernel messages per packet out (GSO: several per message)",
        [r["udp"][0] / r["udp"][2] if r.get("udp") and r["udp"][0] and r["udp"][2] else None for r in results],
        "{:.2f}")
    row("packets out inside UDP GSO messages (%)",
        [100 * r["udp"][1] / r["udp"][2] if r.get("udp") and r["udp"][0] and r["udp"][2] else None
         for r in results], "{:.0f}")
    row("publisher sent, camera/screen/mic", ["/".join(str(r["sent"][s]) for s in SOURCES) for r in results])
    row("publisher got: key frame requests / NACKed", [f"{r['pli']}/{r['nack']}" for r in results])
    row("packets per subscriber", [spread([s["packets"] for s in r["subs"]]) for r in results])
    row("lost per subscriber", [spread([s["lost"] for s in r["subs"]]) for r in results])
    for src in SOURCES:
        row(f"frames per subscriber, {src}", [spread([s["tracks"][src]["frames"] for s in r["subs"]]) for r in results])
    row("screen bitrate at a subscriber (kbit/s)", [sum(r["screen_kbps"]) / len(r["screen_kbps"]) for r in results],
        "{:.0f}")
    row("UDP drops: server's / subscribers' sockets", [f"{r['drops']['server']}/{r['drops']['subscribers']}"
                                                        for r in results])
    row("subscribers' socket backlog, start/end (KiB)",
        ["/".join(str(b >> 10) for b in r["backlog"]["subscribers"]) for r in results])
    row("client CPU: publisher (% of one core)", [per_core(r["client_cpu"]["publisher"], r["elapsed"])
                                                  for r in results], "{:.1f}")
    row("client CPU: subscribers (% of one core)", [per_core(r["client_cpu"]["subscribers"], r["elapsed"])
                                                    for r in results], "{:.1f}")
    row("measured window (s)", [r["elapsed"] for r in results], "{:.2f}")

    table.print()
    print()
    for r in results:
        print(f"{r['name']}, each subscriber: packets / lost / frames camera,screen,mic / screen kbit/s")
        for sub, kbps in zip(r["subs"], r["screen_kbps"]):
            t = sub["tracks"]
            print(f"  {sub['label']}: {sub['packets']} / {sub['lost']} / "
                  f"{t['camera']['frames']},{t['screen_share']['frames']},{t['microphone']['frames']} / {kbps:.0f}")
        if r["not_receiving"]:
            print(f"  NOT RECEIVING after {args.start_timeout:g} s (tracks without a frame): {r['not_receiving']}")
        start, end = r["backlog"]["subscribers"]
        if end - start > 256 << 10:
            print(f"  WARNING: the subscribers fell behind ({(end - start) >> 10} KiB more waiting in their sockets at "
                  f"the end than at the start): the delivered figures are lower bounds. Rerun on a quieter "
                  f"machine or with fewer --subscribers.")
        if r["pub_state"] != "connected":
            print(f"  publisher connection: {r['pub_state']}")
        for e in r["errors"]:
            print(f"  error: {e}")
    print(f"\nwall time: {wall:.1f} s")


def run_timeout(args):
    """The longest one server's run may take, setup and teardown included."""
    return args.start_timeout + args.warmup + args.seconds + 120


async def main_async(args):
    install_counting_receivers()
    workdir = tempfile.mkdtemp(prefix="atrium-media-bench-")
    results = []
    args.loadavg = " ".join(open("/proc/loadavg").read().split()[:3])
    try:
        args.clips = os.path.join(workdir, "clips.pickle")
        print(f"encoding {args.clip_seconds:g} s clips of the camera and the screen ...", flush=True)
        args.clip_bitrates = await asyncio.to_thread(encode_clips, args.clips, args.video_bitrate, args.clip_seconds)
        for name, fn in (("Atrium", run_atrium), ("Janus", run_janus)):
            if name.lower() in args.skip:
                continue
            print(f"running {name} ...", flush=True)
            results.append(await asyncio.wait_for(fn(args, workdir), run_timeout(args)))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return results


def run_comparison(args, main_async, report):
    """Runs a benchmark of Atrium against Janus (`args.skip` leaves one out): checks that Janus can run,
    runs `main_async(args)` and hands its results and the wall time to `report`."""
    if "janus" not in args.skip and janus_missing(["http"]):
        sys.exit(janus_missing(["http"]))
    t0 = time.monotonic()
    results = asyncio.run(main_async(args))
    report(args, results, time.monotonic() - t0)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "publisher-worker":
        asyncio.run(worker_main(float(sys.argv[2])))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--subscribers", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=20, help="measured window")
    ap.add_argument("--warmup", type=float, default=3, help="seconds between all receiving and the window")
    ap.add_argument("--start-timeout", type=float, default=30,
                    help="seconds to wait for every subscriber to receive every track")
    ap.add_argument("--video-bitrate", type=int, default=1_500_000,
                    help="target of the VP8 encoder for each clip, bit/s (aiortc's highest)")
    ap.add_argument("--clip-seconds", type=float, default=3,
                    help="length of the pre-encoded video loops (a key frame starts each loop)")
    ap.add_argument("--skip", action="append", default=[], choices=["atrium", "janus"],
                    help="leave one server out (no ratios then)")
    args = ap.parse_args()
    run_comparison(args, main_async, report)


if __name__ == "__main__":
    main()
