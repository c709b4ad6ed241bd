"""aiortc peers with data channels (docs/protocol.md, Data channels): a reliable and a lossy channel on
the publisher connection (an offer with only a data channel section), or on the subscriber connection of
a participant that joined with `dataChannels`. Received `data` envelopes are kept per channel."""
import asyncio
import json
import time

from aiortc import RTCSessionDescription

from media_peer import peer_connection


class DataPeer:
    """A participant's data channels on its publisher connection: `reliable` (ordered) and `lossy`
    (unordered, no retransmission). Received `data` envelopes are kept per channel, in arrival order."""

    def __init__(self, client):
        self.client = client
        self.pc = peer_connection()
        self.reliable = self.pc.createDataChannel("atrium-reliable")
        self.lossy = self.pc.createDataChannel("atrium-lossy", ordered=False, maxRetransmits=0)
        self.received = {"reliable": [], "lossy": []}
        self.arrived = {"reliable": [], "lossy": []}
        for name, channel in (("reliable", self.reliable), ("lossy", self.lossy)):
            channel.on("message", lambda m, name=name: self._got(name, m))

    def _got(self, name, m):
        """Keeps a received envelope and when it arrived (time.monotonic)."""
        self.received[name].append(json.loads(m))
        self.arrived[name].append(time.monotonic())

    @classmethod
    async def start(cls, client):
        peer = cls(client)
        await peer.pc.setLocalDescription(await peer.pc.createOffer())
        result = await client.request("publish_offer", sdp=peer.pc.localDescription.sdp, tracks=[])
        await peer.pc.setRemoteDescription(RTCSessionDescription(sdp=result["sdp"], type="answer"))
        await peer.wait(lambda: peer.reliable.readyState == "open" and peer.lossy.readyState == "open",
                        "channels open")
        return peer

    async def wait(self, predicate, what, timeout=20):
        """Waits for `predicate()`; `timeout` is a hang guard."""
        deadline = time.monotonic() + timeout
        while not predicate():
            assert time.monotonic() < deadline, f"{self.client.label}: {what} not reached"
            await asyncio.sleep(0.02)

    def send(self, channel, topic, payload, to=None):
        body = {"topic": topic, "payload": payload}
        if to is not None:
            body["to"] = to
        (self.lossy if channel == "lossy" else self.reliable).send(json.dumps(body))

    async def close(self):
        await self.pc.close()


class SubscriberDataPeer(DataPeer):
    """The same channels on the subscriber connection: joined with `dataChannels`, the participant
    gets a subscriber offer with a data channel section at once, answers it, then opens its channels."""

    def __init__(self, client):
        self.client = client
        self.pc = peer_connection()
        self.received = {"reliable": [], "lossy": []}
        self.arrived = {"reliable": [], "lossy": []}

    @classmethod
    async def start(cls, client):
        peer = cls(client)
        offer = await client.expect("subscriber_offer")
        assert "m=application" in offer["sdp"] and "webrtc-datachannel" in offer["sdp"]
        await peer.pc.setRemoteDescription(RTCSessionDescription(sdp=offer["sdp"], type="offer"))
        await peer.pc.setLocalDescription(await peer.pc.createAnswer())
        await client.request("subscriber_answer", revision=offer["revision"], sdp=peer.pc.localDescription.sdp)
        await peer.wait(lambda: peer.pc.connectionState == "connected", "connected")
        peer.reliable = peer.pc.createDataChannel("atrium-reliable")
        peer.lossy = peer.pc.createDataChannel("atrium-lossy", ordered=False, maxRetransmits=0)
        for name, channel in (("reliable", peer.reliable), ("lossy", peer.lossy)):
            channel.on("message", lambda m, name=name: peer._got(name, m))
        await peer.wait(lambda: peer.reliable.readyState == "open" and peer.lossy.readyState == "open",
                        "channels open")
        return peer
