"""Publishers on edges (docs/cluster.md): a room past its owner's share (`--edge-after 2`) places a
later participant's media, its publisher beside its subscriber, on another node. Its share goes up
that edge's relay link to the owner, which relays it on to the third node: viewers on all three
nodes decode it (content checked), and the publisher, on its edge, watches the owner's sharer. What
the edge measures of the share comes back to the owner: its sender's BYE there stops the share with
`capture_ended`. Its edge killed: its share stops everywhere with `connection_lost`.
"""
import asyncio
import re
import signal
import time

import pytest

from cluster_fixture import media_worker, place_room, running
from media_peer import Publisher, Subscriber
from signal_client import Opened, joined, run
from test_cluster import assert_carries
from test_cluster_edge_loss import media_node

TEST_TIMEOUT = 150


@pytest.fixture
def cluster():
    yield from running(3, ("--edge-after", "2"))


def answer_node(cluster, sdp):
    """The node whose media address an answer's first host candidate names."""
    m = re.search(r"a=candidate:\S+ 1 udp \d+ 127\.0\.0\.1 (\d+) typ host", sdp)
    assert m, sdp
    return media_worker(cluster, int(m.group(1)))[0]


async def spread_room(cluster, opened, room):
    """Alice's camera and bob's subscriber connection fill the owner's share (a subscriber connection
    opens with something to receive); carol, placed on an edge, publishes a screen and watches alice;
    alice and at least four more viewers, one on the third node, watch carol. Every subscriber's
    node, bob's first."""
    room_id = await place_room(cluster, room)
    owner = cluster.node(cluster.owner(room_id))
    alice = opened.add(await joined(owner, "alice", room=room))
    alice.start_keepalive(5)
    alice_sub = opened.add(Subscriber(alice))
    alice_pub = opened.add(await Publisher.start(alice, ["camera"]))
    camera = alice_pub.track_id("camera")
    bob = opened.add(await joined(owner, "bob", room=room))
    bob.start_keepalive(5)
    bob_sub = opened.add(Subscriber(bob))
    await bob_sub.wait_frames([camera], 5, timeout=40)
    carol = opened.add(await joined(owner, "carol", room=room))
    carol.start_keepalive(5)
    carol_sub = opened.add(Subscriber(carol))
    carol_pub = opened.add(await Publisher.start(carol, ["screen_share"]))
    screen = carol_pub.track_id("screen_share")
    carol_node = answer_node(cluster, carol_pub.result["sdp"])
    await carol_sub.wait_frames([camera], 10, timeout=40)
    assert_carries(carol_sub, camera, alice.participant_id, "camera")
    # Placement weighs each node's record (its CPU among them; a record is up to 5 s old): wait for
    # records written since carol's connections opened, so that her busy edge is seen as such.
    deadline = time.time() + 30
    while True:
        listed = {n["id"]: n for n in owner.request("GET", "/v1/nodes")[3]["nodes"]}
        if listed[carol_node]["load"]["edgeViewers"] >= 2:
            break
        assert time.time() < deadline, f"carol's edge never reported her connections: {listed[carol_node]}"
        await asyncio.sleep(0.5)
    # Viewers until one is on the third node (a few may still land beside carol first).
    subs, placed = [bob_sub, alice_sub], [media_node(cluster, bob_sub), None]
    for i in range(10):
        v = opened.add(await joined(owner, f"viewer{i}", room=room))
        v.start_keepalive(5)
        sub = opened.add(Subscriber(v))
        await sub.wait_frames([screen], 5, timeout=40)
        subs.append(sub)
        placed.append(media_node(cluster, sub))
        if i >= 3 and any(n not in (owner.node_id, carol_node) for n in placed[2:]):
            break
    for sub in subs:
        await sub.wait_frames([screen], 10, timeout=40)
        assert_carries(sub, screen, carol.participant_id, "screen_share")
    placed[1] = media_node(cluster, alice_sub)
    return dict(owner=owner, alice=alice, carol=carol, carol_pub=carol_pub, screen=screen,
                carol_node=carol_node, carol_sub=carol_sub, subs=subs, placed=placed)


def test_a_share_published_on_an_edge_is_watched_on_every_node(cluster):
    async def go():
        async with Opened() as opened:
            r = await spread_room(cluster, opened, "edge-publish")
            owner, carol_node, placed = r["owner"], r["carol_node"], r["placed"]
            assert carol_node != owner.node_id, "carol's publisher is on the owner"
            assert media_node(cluster, r["carol_sub"]) == carol_node, "carol's two connections apart"
            third = [n for n in placed if n not in (owner.node_id, carol_node)]
            assert placed[0] == owner.node_id and third, f"no viewer on the third node: {placed}"
            print(f"owner {owner.node_id}, carol on {carol_node}, viewers on {placed}")
            # Up carol's edge's link to the owner, and on to the third node's.
            edge = cluster.node(carol_node)
            assert edge.metric("atrium_relay_link_packets_total", direction="out") > 0
            assert owner.metric("atrium_relay_link_packets_total", direction="in") > 0
            assert cluster.node(third[0]).metric("atrium_relay_link_packets_total", direction="in") > 0
            assert owner.metric("atrium_relay_link_dropped_total", reason="unauthenticated") == 0
            # Carol's sender says BYE on her edge: the share stops with capture_ended everywhere.
            share = (await r["alice"].expect("share_started", lambda m: m["share"]["trackId"] == r["screen"]))
            await r["carol_pub"].stop_sender("screen_share")
            for c in (r["alice"], r["carol"]):
                stopped = await c.expect(
                    "share_stopped", lambda m: m["share"]["id"] == share["share"]["id"], timeout=60)
                assert stopped["reason"] == "capture_ended", stopped

    run(go(), TEST_TIMEOUT)


def test_an_edge_killed_under_its_publisher_ends_its_share_everywhere(cluster):
    async def go():
        async with Opened() as opened:
            r = await spread_room(cluster, opened, "edge-publish-loss")
            owner, carol_node = r["owner"], r["carol_node"]
            assert carol_node != owner.node_id
            share = (await r["alice"].expect("share_started", lambda m: m["share"]["trackId"] == r["screen"]))
            survivors = [s for s, n in zip(r["subs"], r["placed"]) if n != carol_node]
            before = [s.by_track(r["screen"]).frames for s in survivors]
            cluster.node(carol_node).stop(signal.SIGKILL)
            t0 = time.monotonic()
            stopped = await r["alice"].expect(
                "share_stopped", lambda m: m["share"]["id"] == share["share"]["id"], timeout=60)
            assert stopped["reason"] == "connection_lost", stopped
            print(f"edge killed -> share_stopped in {time.monotonic() - t0:.2f} s")
            # The viewers on surviving nodes had decoded it and see it end.
            assert all(b > 0 for b in before), before
            for s in survivors:
                await s.wait_ended(r["screen"], timeout=30)

    run(go(), TEST_TIMEOUT)
