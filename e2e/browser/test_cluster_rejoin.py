"""The JavaScript client in a cluster (docs/cluster.md): Chromium connected through one node to a
room another node runs. When that node is killed, the client's session closes with 4104 `moved`, its
resume fails, and the client joins again by itself and publishes its camera again; an aiortc viewer
that joins again decodes the publisher's canvas from the room's new node. Runs in the browser suite's
loopback-only namespace (with a redis-server of its own):

    unshare -n -- sh -c 'ip link set lo up && python3 -m pytest e2e/browser/test_cluster_rejoin.py'
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
from cluster_fixture import Cluster, RedisServer  # noqa: E402

WATCH = """
const [name] = arguments;
const peer = window.peers[name];
peer.rejoins = [];
peer.closes = [];
peer.addEventListener("rejoined", (e) => peer.rejoins.push(e.detail.participant.id));
peer.addEventListener("reconnecting", (e) => peer.closes.push(e.detail.code));
return true;
"""


@pytest.fixture
def cluster():
    redis = RedisServer().start()
    c = Cluster(redis, 2, extra=("--web-dir", WEB_DIR))
    c.wait_nodes(2)
    yield c
    c.stop()
    redis.stop()


def test_the_sdk_rejoins_and_publishes_again_when_the_rooms_node_is_killed(cluster, browsers, monkeypatch):
    monkeypatch.setattr(media_peer, "classify_video", classify_canvas)
    room = "sdk-rejoin"

    async def place():
        probe = await signal_client.joined(cluster.nodes[0], "probe", room=room)
        room_id = probe.snapshot["room"]["id"]
        await probe.close()
        return room_id

    room_id = asyncio.run(asyncio.wait_for(place(), 20))
    owner = cluster.node(cluster.owner(room_id))
    entry = next(n for n in cluster.nodes if n is not owner)

    pub = browsers("pub")
    open_page(pub, f"http://127.0.0.1:{entry.port}")
    first_id = pub.js_async(CONNECT, room, "alice", "host", {})
    pub.js_async(WATCH, "alice")
    track = publish_canvas(pub, "alice")["trackId"]

    async def watch(track_id, count, timeout):
        bob = await signal_client.joined(entry, "bob", room=room)
        sub = media_peer.Subscriber(bob)
        try:
            await sub.wait_until(lambda: sub.by_track(track_id) is not None, "the camera track", timeout)
            # The canvas in any of its simulcast layers: which one the viewer gets follows its bandwidth
            # estimate, which ramps slowly while the browser suite's other Chromiums load the machine.
            await sub.wait_until(
                lambda: sum(n for c, n in sub.by_track(track_id).classes.items() if c.endswith("-canvas")) >= count,
                f"{count} canvas frames", timeout)
        finally:
            await sub.close()
            await bob.close()

    asyncio.run(asyncio.wait_for(watch(track, 10, 40), 60))

    killed = time.time()
    owner.stop(signal.SIGKILL)
    pub.wait("return window.peers.alice.rejoins.length === 1 && window.peers.alice.localTracks.size === 1",
             40, "alice to join again and publish her camera again")
    state = pub.js("const p = window.peers.alice;"
                   "return {me: p.me.id, closes: p.closes, tracks: p.me.tracks.map((t) => [t.id, t.source]),"
                   " policy: p.roomInfo.sharePolicy};")
    assert state["me"] != first_id
    assert 4104 in state["closes"], state
    assert [s for _, s in state["tracks"]] == ["camera"], state
    new_track = state["tracks"][0][0]
    assert cluster.owner(room_id) == entry.node_id
    asyncio.run(asyncio.wait_for(watch(new_track, 10, 40), 60))
    print(f"rejoined and decoded again {time.time() - killed:.1f} s after kill -9 of the room's node")
