"""Simulcast forwarding benchmark: one publisher sending a camera as three simulcast layers, N viewers
of mixed quality, Atrium and Janus side by side in one run.

The same scenario runs against Atrium and then against Janus (Debian's `janus`, VideoRoom plugin,
HTTP API, as bench/media_forward.py drives it). One publisher sends a camera as three VP8 encodings,
q 320x180, h 640x360 and f 1280x720, 30 fps each; N viewers (default 6) each receive one of them: the
first third `low`, the next `medium`, the last `high` (Atrium: `subscribe` with `quality`,
docs/protocol.md §14 "Simulcast layers"; Janus: `configure` with the stream's `substream` 0, 1 or 2).
Once every viewer receives, and after a warm-up, the figures are taken over `--seconds` as
bench/media_forward.py takes them (server CPU and RSS from /proc, what the viewers received counted in
aiortc, kernel drops, the clients' CPU), with the bitrate, packet rate and key-frame size each viewer
got, checked against the layer its quality names.

The publisher: aiortc cannot send simulcast, so it is synthesized. One aiortc RTCPeerConnection with
a sendonly video transceiver does ICE and DTLS-SRTP; its offer is edited before it goes to the
server (`simulcast_offer`: `a=rid:q send`, `a=rid:h send`, `a=rid:f send`, `a=simulcast:send q;h;f`
and the `rtp-stream-id` header extension; the SSRC lines dropped, as browsers send rid simulcast).
After the answer, three pre-encoded VP8 clips (encoded once, before the servers start, by
media_forward's encoder at `--layer-bitrates`; one key frame per loop; the moving picture's random
blocks keep libvpx above those targets, and the report prints both) are packetized by this file,
each encoding with its own SSRC, sequence numbers, timestamps and VP8 picture ids and the mid and
rid header extensions on every packet, and handed to the DTLS transport's SRTP send path
(`RTCDtlsTransport._send_rtp`, aiortc 1.16). Each stream is registered with the transport's RTCP
router under its SSRC: a PLI or FIR restarts that stream's clip at its key frame, a NACK resends
the packet (same SSRC), and every second each stream sends an RTCP sender report (Atrium aligns
layer timestamps with them). The transceiver's own sender sends nothing. The rids are declared low
first (as Chrome writes them); Janus is told so with the offer's `rid_order: "lmh"`.

A benchmark, not a test: it asserts nothing about speed. Usage:
    python3 bench/simulcast_forward.py [--viewers 6] [--seconds 20] [--warmup 3]
It starts its own servers on 127.0.0.1 (ATRIUM_BIN, and `janus` configured by bench/janus_peer.py)
and stops them; every candidate either server announces is checked to be 127.0.0.1.
"""
import argparse
import asyncio
import math
import os
import pickle
import platform
import random
import shutil
import sys
import tempfile
import time
import types

# Importing media_forward confines aioice to 127.0.0.1 (through e2e/integration/media_peer.py, which it
# puts on the path), enlarges the clients' receive buffers and picks ATRIUM_BIN.
import media_forward as mf
from media_forward import (AtriumSubscriber, CountingQueue, JanusProcess, JanusSession, Receiving, Table,
                           answer_requests, atrium_metric, atrium_version, encode_clip, install_counting_receivers,
                           janus_version, loopback_candidates_only, measure, per_core, spread,
                           worker_main)
import aiortc
from aiortc import RTCSessionDescription, clock, rtp
from aiortc.codecs.vpx import Vp8Encoder
from aiortc.rtp import (RTCP_PSFB_FIR, RTCP_PSFB_PLI, RTCP_RTPFB_NACK, RtcpPsfbPacket, RtcpRtpfbPacket,
                        RtcpSenderInfo, RtcpSrPacket, RtpPacket)
from media_peer import _Worker, peer_connection

# The camera's layers, bottom first: rid, size, the clip's bitrate target (`--layer-bitrates`), and
# the quality (Atrium) and substream (Janus) that pick it.
LAYERS = [
    {"rid": "q", "width": 320, "height": 180, "quality": "low", "substream": 0},
    {"rid": "h", "width": 640, "height": 360, "quality": "medium", "substream": 1},
    {"rid": "f", "width": 1280, "height": 720, "quality": "high", "substream": 2},
]
RIDS = [layer["rid"] for layer in LAYERS]
FPS = 30
VIDEO_CLOCK = 90000
MID_URI = "urn:ietf:params:rtp-hdrext:sdes:mid"
RID_URI = "urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"
HISTORY = 1024              # packets kept per stream for NACKs


# -- the simulcast publisher (in the worker process) -------------------------------------------------

def sections(sdp):
    """The SDP's lines cut into the session part and one list per media section."""
    parts = [[]]
    for line in sdp.splitlines():
        if line.startswith("m="):
            parts.append([])
        parts[-1].append(line)
    return parts


def extmap_ids(lines):
    """{uri: id} of a section's a=extmap lines."""
    out = {}
    for line in lines:
        if line.startswith("a=extmap:"):
            ident, uri = line[len("a=extmap:"):].split()[:2]
            out[uri] = int(ident.split("/")[0])
    return out


def simulcast_offer(sdp, rids):
    """aiortc's offer with its video section turned into a simulcast one, as a browser writes it
    (RFC 8851, RFC 8853): the rtp-stream-id extension, one `a=rid:<rid> send` per encoding and
    `a=simulcast:send` in that order, and no SSRC lines (the server learns each stream's SSRC from its
    first packet). Returns (sdp, the extension's id)."""
    out, rid_id = [], None
    for part in sections(sdp):
        if part[0].startswith("m=video"):
            ids = extmap_ids(part)
            rid_id = ids.get(RID_URI) or max(list(ids.values()) + [0]) + 1
            kept = [line for line in part if not line.startswith(("a=ssrc:", "a=ssrc-group:"))]
            at = max(i for i, line in enumerate(kept) if line.startswith("a=extmap:")) + 1
            kept.insert(at, f"a=extmap:{rid_id} {RID_URI}")
            at = kept.index("a=rtcp-mux") + 1
            kept[at:at] = [f"a=rid:{r} send" for r in rids] + ["a=simulcast:send " + ";".join(rids)]
            part = kept
        out += part
    return "\r\n".join(out) + "\r\n", rid_id


def read_answer(sdp):
    """What the server's answer says of the video section: VP8's payload type, the mid and rid
    extension ids, and the rids it accepts (`a=rid:<rid> recv`)."""
    video = next(p for p in sections(sdp) if p[0].startswith("m=video"))
    pt = next(int(line.split()[0].split(":")[1]) for line in video if line.lower().startswith("a=rtpmap:")
              and line.split()[1].lower().startswith("vp8/"))
    ids = extmap_ids(video)
    accepted = [line.split()[0].split(":", 1)[1] for line in video
                if line.startswith("a=rid:") and line.split()[1:2] == ["recv"]]
    simulcast = next((line for line in video if line.startswith("a=simulcast:")), None)
    return {"pt": pt, "mid_id": ids.get(MID_URI), "rid_id": ids.get(RID_URI), "accepted": accepted,
            "simulcast": simulcast, "port": int(video[0].split()[1])}


class LayerStream:
    """One simulcast encoding: its clip, SSRC, sequence numbers, timestamps and VP8 picture ids, the
    packets it sent (for NACKs), and the feedback the server sent for its SSRC. Registered with the
    DTLS transport's RTCP router as if it were an RTCRtpSender (`_handle_rtcp_packet`)."""

    def __init__(self, rid, frames, transport):
        self.rid = rid
        self.frames = frames
        self.transport = transport
        self.n = 0
        self.ssrc = random.getrandbits(32)
        self.seq = random.getrandbits(16)
        self.ts0 = random.getrandbits(32)
        self.picture_id = random.getrandbits(15)
        self.sent = self.octets = self.pli = self.nack = 0
        self.history = [None] * HISTORY

    def packets(self, tick, pt, mid, rid, extensions):
        """The next frame of the clip as RTP packets (bytes) stamped for frame time `tick`; `rid`
        None leaves the rid extension out (a single-stream answer)."""
        frame = self.frames[self.n % len(self.frames)]
        self.n += 1
        ts = (self.ts0 + tick * (VIDEO_CLOCK // FPS)) & 0xFFFFFFFF
        payloads = Vp8Encoder._packetize(frame, self.picture_id)
        self.picture_id = (self.picture_id + 1) & 0x7FFF
        out = []
        for i, payload in enumerate(payloads):
            p = RtpPacket(payload_type=pt, marker=int(i == len(payloads) - 1), sequence_number=self.seq,
                          timestamp=ts, ssrc=self.ssrc, payload=payload)
            p.extensions.mid = mid
            p.extensions.rtp_stream_id = rid
            data = p.serialize(extensions)
            self.history[self.seq % HISTORY] = (self.seq, data)
            self.seq = (self.seq + 1) & 0xFFFF
            self.sent += 1
            self.octets += len(payload)
            out.append(data)
        return out

    def sender_report(self, elapsed):
        """An RTCP SR mapping now (NTP) to this stream's RTP clock: frame `tick` was due `tick / FPS`
        seconds after the start."""
        return bytes(RtcpSrPacket(ssrc=self.ssrc, sender_info=RtcpSenderInfo(
            ntp_timestamp=clock.current_ntp_time(),
            rtp_timestamp=(self.ts0 + int(elapsed * VIDEO_CLOCK)) & 0xFFFFFFFF,
            packet_count=self.sent & 0xFFFFFFFF, octet_count=self.octets & 0xFFFFFFFF)))

    async def _handle_rtcp_packet(self, packet):
        if isinstance(packet, RtcpPsfbPacket) and packet.fmt in (RTCP_PSFB_PLI, RTCP_PSFB_FIR):
            self.pli += 1
            self.n = 0              # the clip's key frame next, as an encoder would answer
        elif isinstance(packet, RtcpRtpfbPacket) and packet.fmt == RTCP_RTPFB_NACK:
            for seq in packet.lost:
                self.nack += 1
                kept = self.history[seq % HISTORY]
                if kept and kept[0] == seq:
                    try:
                        await self.transport._send_rtp(kept[1])
                    except ConnectionError:
                        pass


async def _serve_simulcast_publisher(reader):
    """The worker: `offer` (clips) -> {sdp, mid, ridExtension}; `answer` (sdp, single: a rid or
    None) -> what the answer accepts; `stats` -> {connectionState, sent, pli, nack, ticks, late};
    `close`. With `single`, only that layer is sent, without the rid extension."""
    pc = peer_connection()
    state = {"streams": [], "ticks": 0, "late": 0, "task": None}

    async def send_layers(transceiver, answer, single):
        dtls = transceiver.sender.transport
        while dtls.state != "connected":
            if dtls.state in ("closed", "failed"):
                return
            await asyncio.sleep(0.02)
        extensions = rtp.HeaderExtensionsMap()
        extensions.configure(types.SimpleNamespace(headerExtensions=[
            types.SimpleNamespace(uri=MID_URI, id=answer["mid_id"]),
            *([types.SimpleNamespace(uri=RID_URI, id=answer["rid_id"])] if not single else [])]))
        for s in state["streams"]:
            dtls._rtp_router.register_sender(s, s.ssrc)
        streams = [s for s in state["streams"] if single in (None, s.rid)]
        start = time.monotonic()
        next_report = start
        try:
            while True:
                tick = state["ticks"]
                for s in streams:
                    for data in s.packets(tick, answer["pt"], transceiver.mid, None if single else s.rid,
                                          extensions):
                        await dtls._send_rtp(data)
                now = time.monotonic()
                if now >= next_report:
                    for s in streams:
                        await dtls._send_rtp(s.sender_report(now - start))
                    next_report += 1.0
                state["ticks"] = tick + 1
                wait = start + (tick + 1) / FPS - time.monotonic()
                if wait < -1 / FPS:         # the next frame is more than a frame time overdue
                    state["late"] += 1
                if wait > 0:
                    await asyncio.sleep(wait)
        except ConnectionError:
            pass

    async def handle(req):
        if req["op"] == "offer":
            with open(req["clips"], "rb") as f:
                clips = pickle.load(f)
            transceiver = pc.addTransceiver("video", direction="sendonly")
            state["transceiver"] = transceiver

            async def quiet(packets):       # the transceiver's own sender: no SR/SDES/BYE of an empty stream
                pass
            transceiver.sender._send_rtcp = quiet
            await pc.setLocalDescription(await pc.createOffer())
            sdp, rid_id = simulcast_offer(pc.localDescription.sdp, RIDS)
            state["streams"] = [LayerStream(rid, clips[rid], transceiver.sender.transport) for rid in RIDS]
            return {"sdp": sdp, "mid": transceiver.mid, "ridExtension": rid_id}
        if req["op"] == "answer":
            answer = read_answer(req["sdp"])
            await pc.setRemoteDescription(RTCSessionDescription(sdp=req["sdp"], type="answer"))
            state["task"] = asyncio.get_running_loop().create_task(
                send_layers(state["transceiver"], answer, req.get("single")))
            return answer
        if req["op"] == "stats":
            streams = state["streams"]
            return {"connectionState": pc.connectionState, "sent": {s.rid: s.sent for s in streams},
                    "pli": {s.rid: s.pli for s in streams}, "nack": {s.rid: s.nack for s in streams},
                    "ticks": state["ticks"], "late": state["late"]}
        raise ValueError(f"unknown op {req['op']!r}")

    try:
        await answer_requests(reader, handle)
    finally:
        if state["task"]:
            state["task"].cancel()
            await asyncio.gather(state["task"], return_exceptions=True)
        await pc.close()


class SimulcastPublisher(_Worker):
    """The parent's handle on the publisher process (this file run as `publisher-worker`)."""

    @classmethod
    async def spawn(cls, max_seconds):
        return await super().spawn(script=__file__, max_seconds=max_seconds)


def encode_layers(path, bitrates, seconds):
    """Encodes one clip per layer (media_forward's moving picture at the layer's size, 30 fps), once,
    for both servers' publishers; returns each clip's bitrate, bit/s."""
    clips = {layer["rid"]: encode_clip("camera", bitrate, seconds,
                                       spec={"width": layer["width"], "height": layer["height"], "fps": FPS})
             for layer, bitrate in zip(LAYERS, bitrates)}
    with open(path, "wb") as f:
        pickle.dump(clips, f)
    return {rid: 8 * sum(map(len, frames)) / seconds for rid, frames in clips.items()}


# -- viewers ------------------------------------------------------------------------------------------

class SizingQueue(CountingQueue):
    """A CountingQueue that also reads the picture size of each VP8 key frame (RFC 6386 §9.1: a
    3-byte frame tag whose low bit is 0 for a key frame, the start code 9d 01 2a, then 14-bit width
    and height, little-endian): which layer a viewer gets, without decoding."""

    def __init__(self):
        super().__init__()
        self.size = None
        self.key_frames = 0

    def put(self, task):
        super().put(task)
        if task is not None:
            data = task[1].data
            if len(data) >= 10 and not data[0] & 1 and data[3:6] == b"\x9d\x01\x2a":
                self.size = (int.from_bytes(data[6:8], "little") & 0x3FFF,
                             int.from_bytes(data[8:10], "little") & 0x3FFF)
                self.key_frames += 1


def quality_of(i, n):
    """Viewer i of n: the first third low, the next medium, the last high."""
    return LAYERS[min(2, i * 3 // n)]


def key_frame_size(receiving):
    for t in receiving.pc.getTransceivers():
        queue = getattr(t.receiver, "_RTCRtpReceiver__decoder_queue", None) if t.receiver else None
        if isinstance(queue, SizingQueue) and queue.size:
            return queue.size
    return None


def check_layers(figures, receivers, layers):
    """Per viewer: its bitrate, packet rate and last key frame's size, and the layer these match
    (the one whose clip bitrate is nearest on a log scale, and whose size is the key frame's)."""
    t = figures["elapsed"]
    for sub, r, layer in zip(figures["subs"], receivers, layers):
        cam = sub["tracks"]["camera"]
        sub["layer"] = layer
        sub["kbps"] = 8 * cam["bytes"] / t / 1000
        sub["pps"] = sub["packets"] / t
        sub["fps"] = cam["frames"] / t
        sub["size"] = key_frame_size(r)


def verdict(sub, clip_bitrates, single):
    expected = single or sub["layer"]["rid"]
    if sub["kbps"] <= 0:
        return "NOTHING RECEIVED"
    nearest = min(clip_bitrates, key=lambda rid: abs(math.log(sub["kbps"] * 1000 / clip_bitrates[rid])))
    size = next(((layer["width"], layer["height"]) for layer in LAYERS if layer["rid"] == expected))
    problems = []
    if nearest != expected:
        problems.append(f"bitrate nearest layer {nearest}")
    if sub["size"] is not None and tuple(sub["size"]) != size:
        problems.append(f"key frames {sub['size'][0]}x{sub['size'][1]}")
    return f"ok ({expected})" if not problems else f"MISMATCH (want {expected}: " + ", ".join(problems) + ")"


# -- Atrium -------------------------------------------------------------------------------------------

async def run_atrium(args, workdir):
    from conftest import Server
    from signal_client import joined

    server = Server(os.path.join(workdir, "atrium-data"), *mf.ATRIUM_ARGS).start()
    opened = []
    worker = None
    try:
        async def join(identity, **fields):
            c = await joined(server, identity, room="bench", **fields)
            c.start_keepalive(5)        # the run outlasts the server's 30 s idle timeout
            opened.append(c)
            return c

        pub_client = await join("publisher")
        worker = await SimulcastPublisher.spawn(mf.run_timeout(args))
        offer = await worker.call("offer", clips=args.clips)
        published = await pub_client.request(
            "publish", source="camera", name="camera", width=LAYERS[-1]["width"], height=LAYERS[-1]["height"],
            layers=[{k: layer[k] for k in ("rid", "width", "height")} for layer in LAYERS])
        track_id = published["track"]["id"]
        result = await pub_client.request("publish_offer", timeout=15, sdp=offer["sdp"],
                                          tracks=[{"mid": offer["mid"], "trackId": track_id}])
        if result["rejected"]:
            raise RuntimeError(f"Atrium rejected {result['rejected']}")
        loopback_candidates_only(result["sdp"], "Atrium's publisher answer")
        answer = await worker.call("answer", sdp=result["sdp"])
        if answer["accepted"] != RIDS:
            raise RuntimeError(f"Atrium's answer accepts rids {answer['accepted']}, not {RIDS}")

        subscribers, receivers, layers = [], [], []
        for i in range(args.viewers):
            layer = quality_of(i, args.viewers)
            sub = AtriumSubscriber(await join(f"viewer-{i}", autoSubscribe=False))
            opened.append(sub)
            await sub.client.request("subscribe", trackId=track_id, quality=layer["quality"])
            subscribers.append(sub)
            receivers.append(Receiving(f"viewer-{i}", sub.pc, sub.sources.get, sources=["camera"]))
            layers.append(layer)
        figures = await measure(args, "Atrium", server.proc.pid, worker, receivers,
                                lambda: atrium_metric(server, "atrium_media_packets_total", direction="out"))
        figures["errors"] = [f"viewer-{i}: stopped answering offers: {s.error!r}"
                             for i, s in enumerate(subscribers) if s.error]
        wanted = []
        while True:
            try:
                wanted.append((await pub_client.expect("layers_wanted", timeout=0.05))["rids"])
            except AssertionError:
                break
        figures["notes"] = [f"answer: rids {','.join(answer['accepted'])} accepted, {answer['simulcast']}, "
                            f"rtp-stream-id extension id {answer['rid_id']}; layers_wanted to the publisher: "
                            + " -> ".join(",".join(w) for w in wanted)]
        figures["single"] = None
        publisher_clock(figures)
        check_layers(figures, receivers, layers)
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


# -- Janus --------------------------------------------------------------------------------------------

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
        await session.create_room(admin, room)

        worker = await SimulcastPublisher.spawn(mf.run_timeout(args))
        offer = await worker.call("offer", clips=args.clips)
        pub = await session.attach()
        await session.message(pub, {"request": "join", "ptype": "publisher", "room": room, "display": "publisher"})
        joined, _ = await session.event(pub)
        feed = joined["id"]
        # rid_order: the offer lists its rids low first (Janus assumes high first otherwise).
        await session.message(
            pub, {"request": "publish", "descriptions": [{"mid": offer["mid"], "description": "camera"}]},
            jsep={"type": "offer", "sdp": offer["sdp"], "trickle": False, "rid_order": "lmh"})
        configured, jsep = await session.event(pub)
        if jsep is None:
            raise mf.JanusError(f"publish: no answer in {configured}")
        loopback_candidates_only(jsep["sdp"], "Janus's publisher answer")
        answer = read_answer(jsep["sdp"])
        # Janus 1.1.2 answers a rid offer as Atrium does (a=rid:<rid> recv, a=simulcast:recv, the
        # rtp-stream-id extension). Should a Janus answer it single-stream, one layer (f) is sent
        # without the rid extension, and the report says so.
        single = None if answer["rid_id"] and answer["accepted"] == RIDS else RIDS[-1]
        await worker.call("answer", sdp=jsep["sdp"], single=single)
        await session.event(pub, "webrtcup")

        receivers, layers = [], []
        for i in range(args.viewers):
            layer = quality_of(i, args.viewers)
            h = await session.attach()
            await session.message(h, {"request": "join", "ptype": "subscriber", "room": room,
                                      "streams": [{"feed": feed}]})
            attached, jsep = await session.event(h)
            if jsep is None:
                raise mf.JanusError(f"subscriber join: no offer in {attached}")
            loopback_candidates_only(jsep["sdp"], "Janus's subscriber offer")
            mids = {st["mid"]: "camera" for st in attached.get("streams", []) if st.get("type") == "video"}
            pc = peer_connection()
            pcs.append(pc)
            await pc.setRemoteDescription(RTCSessionDescription(sdp=jsep["sdp"], type="offer"))
            await pc.setLocalDescription(await pc.createAnswer())
            await session.message(h, {"request": "start"},
                                  jsep={"type": "answer", "sdp": pc.localDescription.sdp, "trickle": False})
            await session.event(h)      # "started"
            await session.message(h, {"request": "configure",
                                      "streams": [{"mid": m, "substream": layer["substream"]} for m in mids]})
            await session.event(h)      # "configured"
            receivers.append(Receiving(f"viewer-{i}", pc, mids.get, sources=["camera"]))
            layers.append(layer)
        figures = await measure(args, "Janus", janus.proc.pid, worker, receivers)
        figures["errors"] = []
        figures["single"] = single
        simulcast = (f"answer: rids {','.join(answer['accepted'])} accepted, {answer['simulcast']}, rtp-stream-id "
                     f"extension id {answer['rid_id']}") if not single else (
            f"JANUS ANSWERED SINGLE-STREAM (rids accepted: {answer['accepted']}, rtp-stream-id extension id "
            f"{answer['rid_id']}): only layer f was sent, without rids; every viewer gets it")
        figures["notes"] = [simulcast]
        publisher_clock(figures)
        check_layers(figures, receivers, layers)
        failed = False
        return figures
    finally:
        await mf.end_janus_run(janus, session, worker, pcs, failed)


# -- report -------------------------------------------------------------------------------------------

def mean(values):
    values = list(values)
    return sum(values) / len(values) if values else None


def report(args, results, wall):
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                  if line.startswith("model name")), "?")
    print()
    print(f"machine: {os.cpu_count()} cores ({model}), Linux {platform.release()}, Python "
          f"{platform.python_version()}, load average before the run {args.loadavg}")
    print(f"versions: {atrium_version()} ({os.environ['ATRIUM_BIN']}); {janus_version()} (VideoRoom, HTTP API); "
          f"aiortc {aiortc.__version__}")
    clips = ", ".join(f"{layer['rid']} {layer['width']}x{layer['height']} {target / 1000:.0f} -> "
                      f"{args.clip_bitrates[layer['rid']] / 1000:.0f}"
                      for layer, target in zip(LAYERS, args.layer_bitrates))
    rcvbufs = "/".join(str((r["rcvbuf"] or 0) >> 10) for r in results)
    counts = {layer["quality"]: sum(quality_of(i, args.viewers) is layer for i in range(args.viewers))
              for layer in LAYERS}
    print(f"scenario: 1 publisher, a camera in 3 simulcast VP8 layers at {FPS} fps (clips of {args.clip_seconds:g} s "
          f"encoded once, a key frame per loop; kbit/s, libvpx's target -> the clip's: {clips}), sent through "
          f"aiortc's DTLS-SRTP with the mid and rid extensions; {args.viewers} aiortc viewers counting frames "
          f"without decoding (UDP receive buffers {rcvbufs} KiB): "
          + ", ".join(f"{n} {q}" for q, n in counts.items())
          + f"; all on 127.0.0.1; measured {args.seconds:g} s after every viewer received and {args.warmup:g} s "
          f"of warm-up")
    print()

    table = Table(results, min_column=14)
    row = table.row
    for r in results:
        t = r["elapsed"]
        r["pps"] = r["delivered"] / t
        r["us_per_packet"] = 1e6 * r["cpu"] / r["delivered"] if r["delivered"] else None
        r["by_quality"] = {layer["quality"]: [s for s in r["subs"] if s["layer"] is layer] for layer in LAYERS}
    row("server CPU, user+sys (s)", [r["cpu"] for r in results], "{:.2f}")
    row("server CPU (% of one core)", [per_core(r["cpu"], r["elapsed"]) for r in results], "{:.1f}")
    row("server CPU per forwarded packet (us)", [r["us_per_packet"] for r in results], "{:.1f}", ratio=True)
    row("server RSS at the end (MiB)", [r["rss"] / 1024 for r in results], "{:.1f}", ratio=True)
    row("server peak RSS (MiB)", [r["hwm"] / 1024 for r in results], "{:.1f}")
    row("packets delivered (viewers' count)", [r["delivered"] for r in results])
    row("delivered packet rate (packets/s)", [r["pps"] for r in results], "{:.0f}", ratio=True)
    row("server's own count of packets out (1/s)", [r["server_counter"] for r in results], "{:.0f}")
    row("publisher sent packets, q/h/f", ["/".join(str(r["sent"].get(rid, 0)) for rid in RIDS) for r in results])
    row("publisher got: key frame requests / NACKed", [f"{r['pli']}/{r['nack']}" for r in results])
    for layer in LAYERS:
        q = layer["quality"]
        row(f"{q} viewers: kbit/s each (mean)", [mean(s["kbps"] for s in r["by_quality"][q]) for r in results],
            "{:.0f}")
        row(f"{q} viewers: packets/s each (mean)", [mean(s["pps"] for s in r["by_quality"][q]) for r in results],
            "{:.0f}")
    row("frames/s per viewer", [spread([round(s["fps"]) for s in r["subs"]]) for r in results])
    row("lost per viewer", [spread([s["lost"] for s in r["subs"]]) for r in results])
    row("UDP drops: server's / viewers' sockets", [f"{r['drops']['server']}/{r['drops']['subscribers']}"
                                                    for r in results])
    row("viewers' socket backlog, start/end (KiB)",
        ["/".join(str(b >> 10) for b in r["backlog"]["subscribers"]) for r in results])
    row("client CPU: publisher (% of one core)", [per_core(r["client_cpu"]["publisher"], r["elapsed"])
                                                  for r in results], "{:.1f}")
    row("client CPU: viewers (% of one core)", [per_core(r["client_cpu"]["subscribers"], r["elapsed"])
                                                for r in results], "{:.1f}")
    row("measured window (s)", [r["elapsed"] for r in results], "{:.2f}")
    table.print()
    print()
    for r in results:
        print(f"{r['name']}, each viewer: quality -> layer / kbit/s / packets/s / frames/s / lost / key frame size")
        for s in r["subs"]:
            size = f"{s['size'][0]}x{s['size'][1]}" if s["size"] else "-"
            print(f"  {s['label']}: {s['layer']['quality']:6} {s['kbps']:6.0f} {s['pps']:5.0f} {s['fps']:4.0f} "
                  f"{s['lost']:4} {size:>9}  {verdict(s, args.clip_bitrates, r['single'])}")
        for note in r["notes"]:
            print(f"  {note}")
        for line in limits(r):
            print(f"  {line}")
        if r["not_receiving"]:
            print(f"  NOT RECEIVING after {args.start_timeout:g} s: {sorted(r['not_receiving'])}")
        if r["pub_state"] != "connected":
            print(f"  publisher connection: {r['pub_state']}")
        for e in r["errors"]:
            print(f"  error: {e}")
    print(f"\nwall time: {wall:.1f} s")


def limits(r):
    """Whether a client, not the server, was the limit: a viewer process or the publisher near a
    full core, the viewers' sockets dropping or falling behind, the publisher's clock slipping."""
    out = []
    t = r["elapsed"]
    viewers, publisher = (per_core(r["client_cpu"][k], t) for k in ("subscribers", "publisher"))
    start, end = r["backlog"]["subscribers"]
    if viewers > 90:
        out.append(f"CLIENT LIMIT: the viewers' process used {viewers:.0f} % of a core")
    if publisher > 90:
        out.append(f"CLIENT LIMIT: the publisher used {publisher:.0f} % of a core")
    if r["drops"]["subscribers"]:
        out.append(f"CLIENT LIMIT: the kernel dropped {r['drops']['subscribers']} datagrams on the viewers' sockets")
    if end - start > 256 << 10:
        out.append(f"CLIENT LIMIT: the viewers fell behind ({(end - start) >> 10} KiB more waiting in their sockets "
                   f"at the end): the delivered figures are lower bounds")
    elif start - end > 256 << 10:
        out.append(f"note: the viewers were catching up ({(start - end) >> 10} KiB less waiting in their sockets at "
                   f"the end than at the start: a stall of their process before the window): the delivered figures "
                   f"are upper bounds")
    if r["late"] > 0.05 * r["ticks"]:
        out.append(f"CLIENT LIMIT: the publisher sent {r['late']} of {r['ticks']} frames more than a frame time late")
    if not out:
        out.append(f"no client was the limit (viewers {viewers:.0f} %, publisher {publisher:.0f} % of a core, "
                   f"no drops at the viewers, publisher on time)")
    return out


def publisher_clock(figures):
    """The publisher's frame times in the measured window, and how many it sent late."""
    before, after = figures["publisher_stats"]
    figures["ticks"], figures["late"] = after["ticks"] - before["ticks"], after["late"] - before["late"]


async def main_async(args):
    install_counting_receivers(SizingQueue)
    workdir = tempfile.mkdtemp(prefix="atrium-simulcast-bench-")
    results = []
    args.loadavg = " ".join(open("/proc/loadavg").read().split()[:3])
    try:
        args.clips = os.path.join(workdir, "clips.pickle")
        print(f"encoding {args.clip_seconds:g} s clips of the three layers ...", flush=True)
        args.clip_bitrates = await asyncio.to_thread(encode_layers, args.clips, args.layer_bitrates,
                                                     args.clip_seconds)
        for name, fn in (("Atrium", run_atrium), ("Janus", run_janus)):
            if name.lower() in args.skip:
                continue
            print(f"running {name} ...", flush=True)
            results.append(await asyncio.wait_for(fn(args, workdir), mf.run_timeout(args)))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return results


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "publisher-worker":
        asyncio.run(worker_main(float(sys.argv[2]), _serve_simulcast_publisher))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--viewers", type=int, default=6)
    ap.add_argument("--seconds", type=float, default=20, help="measured window")
    ap.add_argument("--warmup", type=float, default=3, help="seconds between all receiving and the window")
    ap.add_argument("--start-timeout", type=float, default=30, help="seconds to wait for every viewer to receive")
    ap.add_argument("--layer-bitrates", type=lambda s: [int(x) for x in s.split(",")],
                    default=[150_000, 500_000, 1_500_000], help="VP8 targets of the q,h,f clips, bit/s")
    ap.add_argument("--clip-seconds", type=float, default=3,
                    help="length of the pre-encoded loops (a key frame starts each loop)")
    ap.add_argument("--skip", action="append", default=[], choices=["atrium", "janus"],
                    help="leave one server out (no ratios then)")
    args = ap.parse_args()
    if len(args.layer_bitrates) != len(LAYERS):
        sys.exit("--layer-bitrates takes three numbers (q,h,f)")
    mf.run_comparison(args, main_async, report)


if __name__ == "__main__":
    main()
