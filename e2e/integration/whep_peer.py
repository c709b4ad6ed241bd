"""A WHEP player on aiortc: receive-only transceivers, one POST of their offer, the answer applied; every
track it receives is drained and classified (media_peer.classify_video / classify_audio), by kind."""
import asyncio
import http.client
import time

from aiortc import RTCSessionDescription

from media_peer import Subscriber, TrackStats, peer_connection


def http_call(port, method, path, body=b"", headers=None):
    """(status, lower-cased headers, body) of one request to 127.0.0.1:port."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request(method, path, body=body, headers=headers or {})
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, data


class WhepPlayer:
    """`stats["video"]`, `stats["audio"]`: TrackStats of the first section of each kind (one SSRC for
    the session's life, whatever the server forwards on it)."""

    def __init__(self, port, pc):
        self.port = port
        self.pc = pc
        self.stats = {}
        self.location = None
        self.status = None
        self.error = None
        self._drains = []
        pc.on("track", self._on_track)

    @classmethod
    async def start(cls, port, room, token, query="", video=1, audio=1):
        """Offers `video` and `audio` recvonly transceivers and POSTs the offer; with a 201 it applies
        the answer. `status` and `error` (the JSON body of a refusal) say how it went."""
        p = cls(port, peer_connection())
        for _ in range(video):
            p.pc.addTransceiver("video", direction="recvonly")
        for _ in range(audio):
            p.pc.addTransceiver("audio", direction="recvonly")
        await p.pc.setLocalDescription(await p.pc.createOffer())
        headers = {"Content-Type": "application/sdp", "Authorization": f"Bearer {token}"}
        p.posted_at = time.monotonic()
        status, h, body = await asyncio.to_thread(
            http_call, port, "POST", f"/v1/rooms/{room}/whep{query}", p.pc.localDescription.sdp.encode(), headers)
        p.status = status
        if status != 201:
            p.error = body
            return p
        assert h["content-type"] == "application/sdp", h
        p.location, p.etag, p.token = h["location"], h["etag"], token
        p.answer_sdp = body.decode()
        await p.pc.setRemoteDescription(RTCSessionDescription(sdp=p.answer_sdp, type="answer"))
        return p

    def _on_track(self, track):
        transceiver = next(t for t in self.pc.getTransceivers() if t.receiver.track is track)
        stats = TrackStats(transceiver.mid, track.kind, {}, track.id)
        self.stats.setdefault(track.kind, stats)
        Subscriber._count_rtp(transceiver.receiver, stats)
        self._drains.append(asyncio.ensure_future(Subscriber._drain(track, stats)))

    async def wait_class(self, kind, what, count, timeout):
        """Waits until `count` frames of `kind` classified as `what` have arrived (counted from the
        first one); fails with what did arrive after `timeout` (a hang guard)."""
        deadline = time.monotonic() + timeout
        while True:
            st = self.stats.get(kind)
            if st is not None and st.classes[what] >= count:
                return st
            if time.monotonic() > deadline:
                raise AssertionError(f"no {count} {what} frames of {kind} within {timeout}s: {st}")
            await asyncio.sleep(0.1)

    async def delete(self):
        status, _, _ = await asyncio.to_thread(
            http_call, self.port, "DELETE", self.location, b"", {"Authorization": f"Bearer {self.token}"})
        return status

    async def close(self):
        await self.pc.close()
        if self._drains:
            await asyncio.wait(self._drains, timeout=5)
        for d in self._drains:
            d.cancel()
