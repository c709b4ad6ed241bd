"""The JavaScript SDK keeps its subscriber connection when the room moves (docs/cluster.md, "The owner
lost"). Three nodes with `--edge-after 1`: an aiortc sharer on the room's owner, a Chromium viewer
(the SDK) whose media is placed on an edge. `kill -9` of the owner: the SDK is told 4104, its resume
fails, it joins again with the last offer it applied, and the room's new owner takes its connection
over: the same RTCPeerConnection, no reset, and the sharer's new share decoded on it. Runs in the
browser suite's loopback-only namespace (with a redis-server of its own):

    unshare -n -- sh -c 'ip link set lo up && python3 -m pytest e2e/browser/test_cluster_keep_page.py'
"""
import asyncio
import os
import signal
import sys

import pytest

from conftest import WEB_DIR
from test_simulcast import CONNECT, inbound, open_page

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
import media_peer  # noqa: E402
import signal_client  # noqa: E402
from cluster_fixture import place_room, running  # noqa: E402

WATCH = """
const [name] = arguments;
const peer = window.peers[name];
peer.rejoins = [];
peer.closes = [];
peer.addEventListener("rejoined", (e) => peer.rejoins.push(e.detail.participant.id));
peer.addEventListener("reconnecting", (e) => peer.closes.push(e.detail.code));
window.keptSubscriber = peer.subscriber;
return peer.subscriber ? peer.subscriber.connectionState : null;
"""


@pytest.fixture
def cluster():
    yield from running(3, ("--web-dir", WEB_DIR, "--edge-after", "1"))


def test_the_sdk_keeps_its_subscriber_connection_when_the_rooms_node_is_killed(cluster, browsers):
    room = "sdk-keep"
    view = browsers("view")

    async def browser(f, *args):
        return await asyncio.to_thread(f, *args)

    async def scenario():
        async with signal_client.Opened() as opened:
            room_id = await place_room(cluster, room)
            owner = cluster.node(cluster.owner(room_id))
            others = [n for n in cluster.nodes if n is not owner]
            alice = opened.add(await signal_client.joined(others[0], "sharer", room=room))
            alice.start_keepalive(5)
            pub = opened.add(await media_peer.Publisher.start(alice, ["screen_share"]))
            screen = pub.track_id("screen_share")

            await browser(open_page, view, f"http://127.0.0.1:{others[1].port}")
            await browser(view.js_async, CONNECT, room, "viewer", "participant", {})
            await browser(view.wait, "return window.peers.viewer.subscriber?.connectionState === 'connected'"
                          f" && window.peers.viewer.remoteTracks.some((t) => t.trackId === '{screen}')", 30,
                          "the share on a connected subscriber connection")
            assert await browser(view.js_async, WATCH, "viewer") == "connected"
            # The owner holds the sharer's connection; the viewer's is on an edge.
            status, _, _, body = others[0].request("GET", f"/v1/rooms/{room_id}/participants")
            nodes = {m["node"]: m["transports"] for m in body["mediaNodes"]}
            assert nodes.get(owner.node_id) == 1 and sum(nodes.values()) == 2, body["mediaNodes"]

            owner.stop(signal.SIGKILL)

            code, _ = await alice.wait_closed(20)
            assert code == 4104, code
            alice2 = opened.add(await signal_client.joined(others[0], "sharer", room=room))
            alice2.start_keepalive(5)
            pub2 = opened.add(await media_peer.Publisher.start(alice2, ["screen_share"]))
            screen2 = pub2.track_id("screen_share")
            await browser(view.wait, "return window.peers.viewer.rejoins.length === 1", 40, "the viewer to join again")
            await browser(view.wait, "return window.peers.viewer.remoteTracks.some("
                          f"(t) => t.trackId === '{screen2}')", 40, "the new share")
            for _ in range(300):
                got = (await browser(inbound, view, "viewer")).get(screen2) or {}
                if got.get("frames", 0) >= 10:
                    break
                await asyncio.sleep(0.2)
            assert got.get("frames", 0) >= 10, got
            state = await browser(view.js, "const p = window.peers.viewer;"
                                  "return {same: p.subscriber === window.keptSubscriber, closes: p.closes,"
                                  " state: p.subscriber.connectionState};")
            assert state["same"] is True, state
            assert 4104 in state["closes"], state

    asyncio.run(asyncio.wait_for(scenario(), 180))
