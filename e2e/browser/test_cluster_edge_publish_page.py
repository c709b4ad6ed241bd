"""The JavaScript SDK publishing on an edge (docs/cluster.md, "Publishers on edges"). Three nodes with
`--edge-after 1`: an aiortc sharer fills the owner's share; Chromium (the SDK) joins through the
owner, its media goes to an edge, and its camera (a canvas) goes up that edge's relay link: an aiortc
viewer decodes it. `kill -9` of that edge: the SDK's publisher connection fails (`media_state
failed`), the server unpublishes its camera, and the SDK publishes it again on a new connection,
which the server places on a live node; a new viewer decodes the new track. Runs in the browser
suite's loopback-only namespace (with a redis-server of its own):

    unshare -n -- sh -c 'ip link set lo up && python3 -m pytest e2e/browser/test_cluster_edge_publish_page.py'
"""
import asyncio
import os
import signal
import sys
import time

import pytest

from conftest import WEB_DIR
from test_simulcast import CONNECT, open_page, publish_canvas
from test_simulcast_aiortc import classify_canvas

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
import media_peer  # noqa: E402
import signal_client  # noqa: E402
from cluster_fixture import place_room, running  # noqa: E402
from test_cluster_edge_publishers import answer_node  # noqa: E402

WATCH = """
const [name] = arguments;
const peer = window.peers[name];
peer.republished = [];
peer.log = [];
peer.addEventListener("republished", (e) => peer.republished.push(e.detail.tracks.map((t) => t.trackId)));
for (const type of ["media_state", "track_unpublished", "error", "local_track_ended"]) {
  peer.addEventListener(type, (e) => peer.log.push([type, JSON.stringify(e.detail)]));
}
return true;
"""

PUBLISHER_SDP = "return window.peers.alice.publisher?.remoteDescription?.sdp ?? null"


@pytest.fixture
def cluster():
    yield from running(3, ("--web-dir", WEB_DIR, "--edge-after", "1"))


def test_the_sdk_publishes_again_when_the_edge_under_its_camera_is_killed(cluster, browsers, monkeypatch):
    monkeypatch.setattr(media_peer, "classify_video", classify_canvas)
    room = "sdk-edge-publish"
    page = browsers("pub")

    async def browser(f, *args):
        return await asyncio.to_thread(f, *args)

    async def watch(entry, track_id, count, timeout):
        bob = await signal_client.joined(entry, "bob", room=room)
        sub = media_peer.Subscriber(bob)
        try:
            await sub.wait_until(lambda: sub.by_track(track_id) is not None, "the camera track", timeout)
            await sub.wait_until(
                lambda: sum(n for c, n in sub.by_track(track_id).classes.items() if c.endswith("-canvas")) >= count,
                f"{count} canvas frames", timeout)
        finally:
            await sub.close()
            await bob.close()

    async def scenario():
        async with signal_client.Opened() as opened:
            room_id = await place_room(cluster, room)
            owner = cluster.node(cluster.owner(room_id))
            sharer = opened.add(await signal_client.joined(owner, "sharer", room=room))
            sharer.start_keepalive(5)
            opened.add(await media_peer.Publisher.start(sharer, ["screen_share"]))

            await browser(open_page, page, f"http://127.0.0.1:{owner.port}")
            await browser(page.js_async, CONNECT, room, "alice", "host", {})
            await browser(page.js_async, WATCH, "alice")
            track = (await browser(publish_canvas, page, "alice"))["trackId"]
            edge = answer_node(cluster, await browser(page.js, PUBLISHER_SDP))
            assert edge != owner.node_id, "the camera's connection is on the owner"
            await watch(owner, track, 10, 40)

            killed = time.time()
            cluster.node(edge).stop(signal.SIGKILL)
            try:
                await browser(page.wait, "const p = window.peers.alice; return p.republished.length === 1"
                              " && p.localTracks.size === 1", 40, "alice to publish her camera again")
            except AssertionError:
                print(await browser(page.js, "return window.peers.alice.log"))
                raise
            state = await browser(page.js, "const p = window.peers.alice;"
                                  "return {again: p.republished[0], mine: p.me.tracks.map((t) => t.id),"
                                  " state: p.publisher?.connectionState};")
            assert len(state["again"]) == 1 and state["again"][0] != track, state
            assert state["mine"] == state["again"], state
            again = answer_node(cluster, await browser(page.js, PUBLISHER_SDP))
            assert again != edge, again
            await watch(owner, state["again"][0], 10, 40)
            print(f"published again on {again} and decoded {time.time() - killed:.1f} s after kill -9 of {edge}")

    asyncio.run(asyncio.wait_for(scenario(), 180))
