"""A room spread over an edge's media workers (docs/cluster.md): two nodes with `--edge-after 1` and
`--media-room-spread 1` (two workers each), so the viewers of a room another node owns spread over
the edge's two workers. The relay link feeds the owner's share into the edge's home worker, which
pipes it on to the other worker: every viewer decodes the share (content checked), the link carried
it once.
"""
import pytest

from cluster_fixture import media_worker, nominated_port, place_room, running
from media_peer import Publisher, Subscriber
from signal_client import Opened, joined, run
from test_cluster import assert_carries

TEST_TIMEOUT = 120


@pytest.fixture
def cluster():
    yield from running(2, ("--edge-after", "1", "--media-room-spread", "1"))


def test_an_edge_spreads_a_relayed_room_over_its_workers(cluster):
    async def go():
        async with Opened() as opened:
            room_id = await place_room(cluster, "edge-workers")
            owner = cluster.node(cluster.owner(room_id))
            edge = next(n for n in cluster.nodes if n is not owner)
            alice = opened.add(await joined(owner, "sharer", room="edge-workers"))
            alice.start_keepalive(5)
            pub = opened.add(await Publisher.start(alice, ["screen_share"]))
            screen = pub.track_id("screen_share")
            subs = []
            for i in range(4):
                v = opened.add(await joined(owner, f"viewer{i}", room="edge-workers"))
                v.start_keepalive(5)
                subs.append(opened.add(Subscriber(v)))
            for sub in subs:
                await sub.wait_frames([screen], 10, timeout=40)
                assert_carries(sub, screen, alice.participant_id, "screen_share")
            placed = [media_worker(cluster, nominated_port(s)) for s in subs]
            assert all(node == edge.node_id for node, _ in placed), placed
            assert {w for _, w in placed} == {0, 1}, f"the edge's viewers on one worker: {placed}"
            # The link brought the share to one worker, which piped it on to the other.
            assert edge.metric("atrium_relay_link_packets_total", direction="in") > 0
            edge.wait_metric("atrium_media_pipe_packets_total", lambda v: v > 0, timeout=10, direction="out")

    run(go(), TEST_TIMEOUT)
