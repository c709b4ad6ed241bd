"""One room across nodes (docs/cluster.md): a real redis-server and three nodes with `--edge-after 2`,
so that a room's viewers beyond its second transport on its owner go to the other nodes, each fed
by a relay link from the owner (DTLS between the nodes, then SRTP). Every viewer, whichever node
took its media, decodes the sharer's screen (content checked); the links carried it.
"""
import asyncio
import time

import pytest

from cluster_fixture import Cluster, RedisServer
from media_peer import Publisher, Subscriber
from signal_client import Opened, joined, run
from test_cluster import assert_carries

TEST_TIMEOUT = 120


@pytest.fixture(scope="module")
def cluster():
    redis = RedisServer().start()
    c = Cluster(redis, 3, extra=("--edge-after", "2"))
    c.wait_nodes(3)
    yield c
    c.stop()
    redis.stop()


def test_viewers_past_the_owners_share_of_a_room_watch_it_from_edge_nodes(cluster):
    n1, n2, n3 = cluster.nodes

    async def go():
        async with Opened() as opened:
            alice = opened.add(await joined(n1, "alice", room="all-hands"))
            alice.start_keepalive(5)
            room_id = alice.snapshot["room"]["id"]
            owner = cluster.node(cluster.owner(room_id))
            pub = opened.add(await Publisher.start(alice, ["screen_share"]))
            screen = pub.track_id("screen_share")
            viewers = []
            for i, entry in enumerate([n1, n2, n3, n1, n2]):
                v = opened.add(await joined(entry, f"viewer{i}", room="all-hands"))
                v.start_keepalive(5)
                viewers.append((v, opened.add(Subscriber(v))))
            for v, sub in viewers:
                await sub.wait_frames([screen], 20, timeout=40)
                assert_carries(sub, screen, alice.participant_id, "screen_share")
            edges = [n for n in cluster.nodes if n is not owner]
            # The owner sent the share over its links; the edges received it, and every link is up.
            assert owner.metric("atrium_relay_link_packets_total", direction="out") > 0
            assert sum(e.metric("atrium_relay_link_packets_total", direction="in") for e in edges) > 0
            assert owner.metric("atrium_relay_link_dropped_total", reason="unauthenticated") == 0
            assert owner.metric("atrium_relay_link_dropped_total", reason="stranger") == 0
            # Each link carries the share once, whatever the viewers behind it: five viewers, at most
            # one on the owner, so an edge has two or more; what each edge's link brought is not more
            # than what the owner received from the sharer (and a few sender reports). Read once the
            # sharer stopped and the workers' figures (copied out each second) are final.
            await pub.close()
            carried = [e.metric("atrium_relay_link_packets_total", direction="in") for e in edges]
            # The owner's figure catches up within a second or two; carried per viewer, it never would.
            owner.wait_metric("atrium_media_packets_total", lambda v: v + 20 >= max(carried), timeout=30,
                              direction="in")
            # ...while the edges sent it to each of their viewers: more than came over the links.
            deadline = time.time() + 30
            while sum(e.metric("atrium_media_packets_total", direction="out") for e in edges) <= sum(carried):
                assert time.time() < deadline, f"edges sent no more than their links carried: {carried}"
                await asyncio.sleep(0.2)

    run(go(), TEST_TIMEOUT)
