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
            # The room's admin view (any node: relayed to the owner) names its nodes: the owner's two
            # transports, the rest on edges; each edge's record lists the room and its viewers there.
            status, _, _, body = n2.request("GET", f"/v1/rooms/{room_id}/participants")
            assert status == 200, body
            nodes = {m["node"]: m["transports"] for m in body["mediaNodes"]}
            assert nodes.pop(owner.node_id) == 2 and sum(nodes.values()) == 4, body["mediaNodes"]
            deadline = time.time() + 30
            while True:
                listed = {n["id"]: n for n in n1.request("GET", "/v1/nodes")[3]["nodes"]}
                edge_rooms = {i: {r["room"]: (r["owner"], r["viewers"]) for r in n["edgeRooms"]} for i, n in listed.items()}
                if all(edge_rooms[i].get(room_id) == (owner.node_id, v) for i, v in nodes.items()):
                    break
                assert time.time() < deadline, f"node records do not list the room's edges {nodes}: {edge_rooms}"
                await asyncio.sleep(0.5)
            assert all(listed[i]["load"]["edgeViewers"] >= v for i, v in nodes.items()), listed
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


def test_a_late_viewer_on_an_edge_starts_from_the_edges_cache(cluster):
    """A share whose sender answers no key-frame request (it sent one key frame): the first viewer
    placed on an edge gets the owner's cached picture through the link; a later viewer there starts
    from the edge's own cache: the sharer sends no other key frame and is asked for none."""
    n1, n2, n3 = cluster.nodes

    async def go():
        async with Opened() as opened:
            alice = opened.add(await joined(n1, "sharer", room="static-share"))
            alice.start_keepalive(5)
            owner = cluster.node(cluster.owner(alice.snapshot["room"]["id"]))
            pub = opened.add(await Publisher.start(alice, ["screen_share"], ignore_key_frame_requests=["screen_share"]))
            screen = pub.track_id("screen_share")
            edges = [n for n in cluster.nodes if n is not owner]
            subs = []
            for i, entry in enumerate([n2, n3, n1]):
                v = opened.add(await joined(entry, f"early{i}", room="static-share"))
                v.start_keepalive(5)
                subs.append(opened.add(Subscriber(v)))
            for sub in subs:
                await sub.wait_frames([screen], 5, timeout=40)
                assert_carries(sub, screen, alice.participant_id, "screen_share")
            served = sum(e.metric("atrium_media_key_frame_cache_starts_total", result="served") for e in edges)
            asked = (await pub.stats())["keyFrameRequests"].get("screen_share", 0)
            # Two more, past the owner's share of the room: on edges, started from their caches.
            for i, entry in enumerate([n3, n2]):
                v = opened.add(await joined(entry, f"late{i}", room="static-share"))
                v.start_keepalive(5)
                sub = opened.add(Subscriber(v))
                await sub.wait_frames([screen], 5, timeout=40)
                assert_carries(sub, screen, alice.participant_id, "screen_share")
            deadline = time.time() + 30
            while sum(e.metric("atrium_media_key_frame_cache_starts_total", result="served") for e in edges) < served + 2:
                assert time.time() < deadline, "the late viewers did not start from an edge's cache"
                await asyncio.sleep(0.2)
            # The sharer sent its one key frame and nothing more: every picture came from caches, and
            # no key-frame request reached it for the late viewers.
            stats = await pub.stats()
            assert stats["keyFramesSent"]["screen_share"] == 1, stats
            assert stats["keyFrameRequests"].get("screen_share", 0) == asked, stats

    run(go(), TEST_TIMEOUT)
