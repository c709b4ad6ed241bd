"""The native load peers (`atrium-viewers`, Sources/atrium-viewers): many cheap WebRTC peers in one
process and on one thread, which do real ICE checks, the DTLS-SRTP handshake and SRTP, count and
decrypt the RTP they receive without decoding it, and read the `PayloadStamp` the native publisher
writes at the end of every payload (publisher id, source, the publisher's own sequence number, the
send time on CLOCK_MONOTONIC). This module drives such a process over its stdin/stdout (one JSON
request per line, one reply) and makes the SDP the servers see: the answer of a viewer to a server's
offer (Atrium's `subscriber_offer`, Janus VideoRoom's subscriber offer), and the offer of the
publisher (camera, screen share, microphone). Used by bench/viewers_sweep.py and
e2e/integration/test_native_viewers.py.
"""
import asyncio
import json_lines
import os
import random

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The publisher's three sources: (source index in the stamp, signaling source, kind, payload type).
SOURCES = [(0, "camera", "video", 96), (1, "screen_share", "video", 96), (2, "microphone", "audio", 111)]
MID_EXTENSION = "urn:ietf:params:rtp-hdrext:sdes:mid"
RID_EXTENSION = "urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"


def viewers_binary():
    """ATRIUM_VIEWERS_BIN, else the atrium-viewers next to ATRIUM_BIN, else the release or debug build."""
    if os.environ.get("ATRIUM_VIEWERS_BIN"):
        return os.environ["ATRIUM_VIEWERS_BIN"]
    atrium = os.environ.get("ATRIUM_BIN")
    if atrium:
        sibling = os.path.join(os.path.dirname(atrium), "atrium-viewers")
        if os.path.exists(sibling):
            return sibling
    for config in ("release", "debug"):
        p = os.path.join(ROOT, ".build", config, "atrium-viewers")
        if os.path.exists(p):
            return p
    return os.path.join(ROOT, ".build", "debug", "atrium-viewers")


class NativePeers(json_lines.Process):
    """One atrium-viewers process: `await call(op, **fields)` sends a request and returns its `ok`."""

    who = "atrium-viewers"
    stop_op = "quit"
    call_timeout = 30

    @classmethod
    async def spawn(cls):
        proc = await asyncio.create_subprocess_exec(
            viewers_binary(), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=16 << 20)
        return cls(proc)


# -- SDP ------------------------------------------------------------------------------------------

def sections(sdp):
    """(session lines, [media section lines]) of an SDP."""
    session, media = [], []
    for line in sdp.replace("\r\n", "\n").split("\n"):
        if not line:
            continue
        if line.startswith("m="):
            media.append([line])
        elif media:
            media[-1].append(line)
        else:
            session.append(line)
    return session, media


def attribute(lines, name):
    prefix = f"a={name}:"
    return next((l[len(prefix):] for l in lines if l.startswith(prefix)), None)


def transport(sdp):
    """The remote transport an SDP describes: ufrag, pwd, fingerprint, setup, candidates (UDP host
    and others, IPv4), and whether the side is ICE-lite."""
    session, media = sections(sdp)
    live = [m for m in media if m[0].split()[1] != "0"] or media
    first = live[0] if live else []

    def find(name):
        return attribute(first, name) or attribute(session, name)

    candidates = []
    for m in live:
        for l in m:
            if l.startswith("a=candidate:"):
                f = l[len("a=candidate:"):].split()
                if f[2].lower() == "udp" and ":" not in f[4]:
                    c = {"ip": f[4], "port": int(f[5])}
                    if c not in candidates:
                        candidates.append(c)
    return {"ufrag": find("ice-ufrag"), "pwd": find("ice-pwd"), "fingerprint": find("fingerprint"),
            "setup": find("setup"), "candidates": candidates,
            "lite": "a=ice-lite" in session or any("a=ice-lite" in m for m in media)}


def _local_lines(local, setup):
    return [f"a=ice-ufrag:{local['ufrag']}", f"a=ice-pwd:{local['pwd']}", f"a=fingerprint:{local['fingerprint']}",
            f"a=setup:{setup}"]


def _candidate(local):
    return [f"a=candidate:1 1 udp 2130706431 127.0.0.1 {local['port']} typ host", "a=end-of-candidates"]


def viewer_answer(offer, local):
    """A receive-only answer to a server's offer: every offered section accepted with its first codec
    (not RTX, RED or FEC) and its fmtp, no feedback (no NACK, no transport-cc: the viewer reports
    nothing), rtcp-mux, one host candidate; `a=setup:active` (the viewer is the DTLS client). A
    section the offer stopped (port 0) or left inactive stays so."""
    session, media = sections(offer)
    out = ["v=0", f"o=- {random.getrandbits(48)} 1 IN IP4 127.0.0.1", "s=-", "t=0 0"]
    out += [l for l in session if l.startswith("a=group:BUNDLE")]
    for m in media:
        kind, port, proto, *formats = m[0][2:].split()
        mid = attribute(m, "mid")
        rtpmaps = {l.split()[0][len("a=rtpmap:"):]: l.split()[1] for l in m if l.startswith("a=rtpmap:")}
        codec = next((pt for pt in formats if rtpmaps.get(pt, "").split("/")[0].lower() not in
                      ("rtx", "red", "ulpfec", "flexfec-03")), formats[0] if formats else "0")
        stopped = port == "0" or "a=inactive" in m
        out.append(f"m={kind} {0 if port == '0' else local['port']} {proto} {codec}")
        out.append("c=IN IP4 127.0.0.1")
        if mid is not None:
            out.append(f"a=mid:{mid}")
        out += _local_lines(local, "active")
        out.append("a=inactive" if stopped else "a=recvonly")
        out.append("a=rtcp-mux")
        if codec in rtpmaps:
            out.append(f"a=rtpmap:{codec} {rtpmaps[codec]}")
        fmtp = next((l for l in m if l.startswith(f"a=fmtp:{codec} ")), None)
        if fmtp:
            out.append(fmtp)
        if not stopped:
            out += _candidate(local)
    return "\r\n".join(out) + "\r\n"


def publisher_offer(local, ssrcs, mid_extension_id=1):
    """The publisher's offer: camera and screen share (VP8) and microphone (Opus), send-only, one
    BUNDLE transport, `a=setup:actpass`, the mid header extension, `a=ssrc` lines; mids "0", "1", "2"
    in SOURCES order. `ssrcs`: source name -> SSRC."""
    sections = [(kind, f"{source}-track", ssrcs[source], None) for _, source, kind, _ in SOURCES]
    return simulcast_offer(local, sections, mid_extension_id)


def answered_mid_extension(answer, uri=MID_EXTENSION):
    """The id the answer gives the mid header extension, or the one named by `uri` (None when it
    dropped it)."""
    for line in answer.replace("\r\n", "\n").split("\n"):
        if line.startswith("a=extmap:") and line.split()[-1] == uri:
            return int(line[len("a=extmap:"):].split()[0].split("/")[0])
    return None


def simulcast_offer(local, sections, mid_extension_id=1, rid_extension_id=2):
    """A publisher's offer of `sections`, each `(kind, track name, ssrc, rids)` in mid order ("0",
    "1", ...): VP8 or Opus, send-only, one BUNDLE transport, `a=setup:actpass`. A video section with
    `rids` is a simulcast camera as Chromium offers one: the `rtp-stream-id` extension beside the
    mid's, `a=rid:<rid> send` per layer and `a=simulcast:send` with the rids in the given order (the
    smallest first, as an application lists its encodings), and no `a=ssrc` lines (each layer's SSRC
    is learned from its packets); the others carry their SSRC."""
    mids = " ".join(str(i) for i in range(len(sections)))
    out = ["v=0", f"o=- {random.getrandbits(48)} 1 IN IP4 127.0.0.1", "s=-", "t=0 0",
           f"a=group:BUNDLE {mids}", "a=msid-semantic: WMS loadpub"]
    for i, (kind, name, ssrc, rids) in enumerate(sections):
        pt = 96 if kind == "video" else 111
        out.append(f"m={kind} {local['port']} UDP/TLS/RTP/SAVPF {pt}")
        out.append("c=IN IP4 127.0.0.1")
        out.append(f"a=mid:{i}")
        out += _local_lines(local, "actpass")
        out += ["a=sendonly", "a=rtcp-mux", "a=rtcp-rsize", f"a=extmap:{mid_extension_id} {MID_EXTENSION}"]
        if kind == "video":
            if rids:
                out.append(f"a=extmap:{rid_extension_id} {RID_EXTENSION}")
            out += [f"a=rtpmap:{pt} VP8/90000", f"a=rtcp-fb:{pt} nack pli", f"a=rtcp-fb:{pt} ccm fir"]
        else:
            out += [f"a=rtpmap:{pt} opus/48000/2", f"a=fmtp:{pt} minptime=10;useinbandfec=1"]
        out.append(f"a=msid:loadpub {name}")
        if rids:
            out += [f"a=rid:{rid} send" for rid in rids] + [f"a=simulcast:send {';'.join(rids)}"]
        else:
            out += [f"a=ssrc:{ssrc} cname:loadpub", f"a=ssrc:{ssrc} msid:loadpub {name}"]
        out += _candidate(local)
    return "\r\n".join(out) + "\r\n"


def connect_fields(remote, *, viewer):
    """The `connect` request's fields for a remote SDP: a viewer answers a server's offer (it is the
    DTLS client, and controlling only toward an ICE-lite server); the publisher made the offer (it
    takes the role the answer leaves it, and is the controlling agent: the offerer, or facing lite)."""
    if viewer:
        setup = "active"
        controlling = remote["lite"]
    else:
        setup = "passive" if remote["setup"] == "active" else "active"
        controlling = True
    return {"ufrag": remote["ufrag"], "pwd": remote["pwd"], "fingerprint": remote["fingerprint"],
            "setup": setup, "controlling": controlling, "candidates": remote["candidates"]}


def publisher_streams(ssrcs, mid_extension_id, *, camera_packets=4, screen_packets=6, size=1100):
    """The publish request's streams: camera 30 fps, screen 15 fps (`*_packets` per frame of `size`
    bytes), microphone 50 packets/s of 120 bytes; mids as in `publisher_offer`."""
    spec = {"camera": (30, camera_packets, size), "screen_share": (15, screen_packets, size),
            "microphone": (50, 1, 120)}
    out = []
    for i, (index, source, kind, pt) in enumerate(SOURCES):
        fps, packets, sz = spec[source]
        s = {"source": index, "kind": kind, "ssrc": ssrcs[source], "pt": pt, "fps": fps, "packets": packets,
             "size": sz, "mid": str(i)}
        if mid_extension_id is not None:
            s["midExt"] = mid_extension_id
        out.append(s)
    return out


def new_ssrcs():
    return {source: random.getrandbits(31) | 1 for _, source, _, _ in SOURCES}


async def wait_connected(peers, ids, timeout=20):
    """Waits until every peer in `ids` is connected; raises with the states otherwise."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        stats = await peers.call("stats")
        states = {i: stats["peers"].get(i, {}).get("state") for i in ids}
        if all(s == "connected" for s in states.values()):
            return stats
        failed = {i: stats["peers"][i].get("failure") for i, s in states.items() if s == "failed"}
        if failed or asyncio.get_running_loop().time() > deadline:
            raise RuntimeError(f"native peers not connected: {states} {failed}")
        await asyncio.sleep(0.1)


# -- Atrium's flows -------------------------------------------------------------------------------

ATRIUM_TRACKS = {"camera": {"width": 640, "height": 360}, "screen_share": {"width": 1280, "height": 720},
                 "microphone": {}}


async def atrium_publish(client, peers, peer_id, publisher_id, **stream_options):
    """Publishes the native publisher `peer_id` (opened here) on a joined signaling client; returns
    the SSRCs by source."""
    local = await peers.call("open", id=peer_id)
    ssrcs = new_ssrcs()
    offer = publisher_offer(local, ssrcs)
    tracks = [{"mid": str(i), "source": source, **ATRIUM_TRACKS[source]} for i, (_, source, _, _) in enumerate(SOURCES)]
    result = await client.request("publish_offer", timeout=15, sdp=offer, tracks=tracks)
    if result.get("rejected"):
        raise RuntimeError(f"Atrium rejected {result['rejected']}")
    remote = transport(result["sdp"])
    await peers.call("connect", id=peer_id, **connect_fields(remote, viewer=False))
    await peers.call("publish", id=peer_id, publisher=publisher_id,
                     streams=publisher_streams(ssrcs, answered_mid_extension(result["sdp"]), **stream_options))
    return ssrcs, result["sdp"]


class AtriumViewer:
    """A native viewer on a joined signaling client: answers every `subscriber_offer` (the first
    opens and connects the peer; later ones are answered with the same transport)."""

    def __init__(self, client, peers, peer_id):
        self.client = client
        self.peers = peers
        self.id = peer_id
        self.local = None
        self.offers = 0
        self.error = None
        self._task = asyncio.get_running_loop().create_task(self._answer())

    async def _answer(self):
        try:
            while not self.client.is_closed:
                try:
                    offer = await self.client.expect("subscriber_offer", timeout=60)
                except AssertionError:
                    continue
                first = self.local is None
                if first:
                    self.local = await self.peers.call("open", id=self.id)
                await self.client.request("subscriber_answer", revision=offer["revision"],
                                          sdp=viewer_answer(offer["sdp"], self.local))
                if first:
                    await self.peers.call("connect", id=self.id, **connect_fields(transport(offer["sdp"]), viewer=True))
                self.offers += 1
        except Exception as e:
            self.error = e

    async def close(self):
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        await self.client.close()
