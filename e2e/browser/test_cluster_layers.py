"""Only the simulcast layers wanted on an edge cross its relay link (docs/cluster.md, one room across
nodes). Two nodes with `--edge-after 2`: Chromium publishes the simulcast canvas (q/h/f) on the room's
owner, which then holds its two transports; aiortc viewers, placed on the other node, ask for the low and
the high layer and decode the canvas at those sizes; the link carries streams 0 and 2 and nothing of
stream 1, until a third viewer there asks for the medium one. Runs in the browser suite's
loopback-only namespace (with a redis-server of its own):

    unshare -n -- sh -c 'ip link set lo up && python3 -m pytest e2e/browser/test_cluster_layers.py'
"""
import asyncio
import os
import sys

import pytest

from conftest import WEB_DIR
from test_simulcast import CONNECT, open_page, publish_canvas
from test_simulcast_aiortc import classify_canvas

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
import media_peer  # noqa: E402
import signal_client  # noqa: E402
from cluster_fixture import running  # noqa: E402


@pytest.fixture
def cluster():
    yield from running(2, ("--web-dir", WEB_DIR, "--edge-after", "2"))


def stream_packets(node, side):
    return [node.metric("atrium_relay_link_stream_packets_total", side=side, stream=str(k)) for k in range(3)]


def test_only_the_layers_wanted_on_an_edge_cross_its_link(cluster, browsers, monkeypatch):
    monkeypatch.setattr(media_peer, "classify_video", classify_canvas)
    room = "edge-layers"

    async def place():
        probe = await signal_client.joined(cluster.nodes[0], "probe", room=room)
        room_id = probe.snapshot["room"]["id"]
        await probe.close()
        return room_id

    room_id = asyncio.run(asyncio.wait_for(place(), 20))
    owner = cluster.node(cluster.owner(room_id))
    edge = next(n for n in cluster.nodes if n is not owner)

    pub = browsers("pub")
    open_page(pub, f"http://127.0.0.1:{owner.port}")
    pub.js_async(CONNECT, room, "alice", "host", {})
    track = publish_canvas(pub, "alice")["trackId"]

    async def scenario():
        async with signal_client.Opened() as opened:
            subs = {}
            for quality in ("low", "high"):
                v = opened.add(await signal_client.joined(owner, f"viewer-{quality}", room=room))
                v.start_keepalive(5)
                await v.request("subscribe", trackId=track, quality=quality)
                subs[quality] = opened.add(media_peer.Subscriber(v))
            status, _, _, body = owner.request("GET", f"/v1/rooms/{room_id}/participants")
            nodes = {m["node"]: m["transports"] for m in body["mediaNodes"]}
            # The owner holds its two (the probe's, still in the room for its resume window, and the
            # sharer's publisher), so the viewers' connections (and the sharer's own) are on the edge.
            assert nodes[owner.node_id] == 2 and nodes[edge.node_id] >= 2, body["mediaNodes"]

            async def frames(sub, label, count, timeout):
                await sub.wait_until(lambda: sub.by_track(track) is not None, "the camera track", timeout)
                await sub.wait_until(lambda: sub.by_track(track).classes[label] >= count,
                                     f"{count} frames classified {label}", timeout)

            await frames(subs["low"], "320x180-canvas", 20, 60)
            await frames(subs["high"], "1280x720-canvas", 20, 90)
            # What crossed: streams 0 and 2, at both ends; nothing of stream 1, which no one there wants.
            for node, side in ((owner, "owner"), (edge, "edge")):
                q, h, f = stream_packets(node, side)
                assert q > 0 and f > 0 and h == 0, (side, q, h, f)
            assert edge.metric("atrium_relay_link_tracks", side="edge") == 1

            v = opened.add(await signal_client.joined(owner, "viewer-medium", room=room))
            v.start_keepalive(5)
            await v.request("subscribe", trackId=track, quality="medium")
            medium = opened.add(media_peer.Subscriber(v))
            await frames(medium, "640x360-canvas", 20, 60)
            assert stream_packets(edge, "edge")[1] > 0
            for sub in [*subs.values(), medium]:
                st = sub.by_track(track)
                others = {k: n for k, n in st.classes.items() if not k.endswith("-canvas")}
                assert not others, st.classes

    asyncio.run(asyncio.wait_for(scenario(), 240))
