"""The owner of a room spread over nodes killed (docs/cluster.md, "The owner lost"): the room moves
to another node as any room does (its clients, told 4104 `moved`, join again and the sharer shares
again), and the viewers whose media was on a surviving node keep their connection: they join again
with the last subscriber offer they applied (`subscriberOffer`), the room's new owner takes their
connection over (on the node that is now the owner, or on the other edge), and the new share decodes
on the same peer connection, with no reset offer. Viewers whose media was on the dead node get a
`reset` offer and a new connection. A real redis-server and three nodes with `--edge-after 2`; every
participant's signaling enters through a node that is not the owner.
"""
import asyncio
import signal
import time

import pytest

from cluster_fixture import place_room, running
from media_peer import Publisher, Subscriber
from signal_client import Opened, joined, run
from test_cluster import assert_carries
from test_cluster_edge_loss import media_node

TEST_TIMEOUT = 150


@pytest.fixture
def cluster():
    yield from running(3, ("--edge-after", "2"))


async def wait_for_log(node, text, timeout):
    deadline = time.time() + timeout
    while True:
        with open(node.err_path) as f:
            if text in f.read():
                return
        assert time.time() < deadline, f"{node.node_id} did not log {text!r}"
        await asyncio.sleep(0.2)


def test_viewers_on_surviving_edges_keep_their_connections_when_the_owner_is_killed(cluster):
    async def go():
        async with Opened() as opened:
            room_id = await place_room(cluster, "owner-loss")
            owner = cluster.node(cluster.owner(room_id))
            others = [n for n in cluster.nodes if n is not owner]
            alice = opened.add(await joined(others[0], "sharer", room="owner-loss"))
            pub = opened.add(await Publisher.start(alice, ["screen_share"]))
            screen = pub.track_id("screen_share")
            viewers = []
            for i in range(6):
                v = opened.add(await joined(others[i % 2], f"viewer{i}", room="owner-loss"))
                viewers.append((f"viewer{i}", others[i % 2], opened.add(Subscriber(v))))
            for _, _, sub in viewers:
                await sub.wait_frames([screen], 10, timeout=40)
                assert_carries(sub, screen, alice.participant_id, "screen_share")
            placed = {name: media_node(cluster, sub) for name, _, sub in viewers}
            kept = [name for name, n in placed.items() if n != owner.node_id]
            assert kept, f"no viewer on an edge: {placed}"
            pcs = {name: sub.pc for name, _, sub in viewers}

            owner.stop(signal.SIGKILL)

            # Everyone's session moved: each joins again through the node it entered by.
            code, _ = await alice.wait_closed(20)
            assert code == 4104, code
            alice2 = opened.add(await joined(others[0], "sharer", room="owner-loss"))
            pub2 = opened.add(await Publisher.start(alice2, ["screen_share"]))
            screen2 = pub2.track_id("screen_share")
            for name, entry, sub in viewers:
                code, _ = await sub.client.wait_closed(20)
                assert code == 4104, code
                v2 = opened.add(await joined(entry, name, room="owner-loss", subscriberOffer=sub.applied_offer))
                await sub.continue_with(v2)
            new_owner = cluster.owner(room_id)
            assert new_owner in {n.node_id for n in others}
            for name, _, sub in viewers:
                await sub.wait_frames([screen2], 10, timeout=60)
                assert_carries(sub, screen2, alice2.participant_id, "screen_share")
                if name in kept:
                    # The same connection, taken over: no reset, the same peer connection, still
                    # on the node it was on.
                    assert sub.resets == 0 and sub.pc is pcs[name], (name, placed[name])
                    assert media_node(cluster, sub) == placed[name]
                else:
                    assert sub.resets == 1, (name, placed[name])
            # Later the edges notice the old owner gone (its link silent, 5 s) and end what they ran for
            # it; the connections taken over go on.
            for n in {placed[name] for name in kept}:
                await wait_for_log(cluster.node(n), f"owner {owner.node_id}", 30)
            for _, _, sub in viewers:
                await sub.wait_more_frames([screen2], 10, timeout=30)
            print(f"kept {len(kept)} of {len(viewers)} connections: {placed}, new owner {new_owner}")

    run(go(), TEST_TIMEOUT)
