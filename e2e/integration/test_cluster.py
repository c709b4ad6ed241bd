"""The cluster over Redis (docs/cluster.md): a real redis-server and three Atrium nodes on 127.0.0.1,
each on its own ports. Rooms are listed by every node, clients joining through different nodes meet
in the room's one owner node (the others relay their signaling over Redis) and exchange media
straight with the owner's UDP port, admin and host controls act across nodes, and the cluster
rides out a Redis outage and the loss of a node.

Runs alone with `python3 -m pytest e2e/integration/test_cluster.py`.
"""
import asyncio
import json
import string
import subprocess
import time

import pytest

from cluster_fixture import Cluster, RedisServer
from media_peer import Publisher, Subscriber
from signal_client import Opened, SignalError, close_all, connect, joined, run

TEST_TIMEOUT = 120


def three_nodes():
    """A redis-server and three nodes on it (a fixture's body: stopped when the fixture ends)."""
    redis = RedisServer().start()
    c = Cluster(redis, 3)
    c.wait_nodes(3)
    yield c
    c.stop()
    redis.stop()


@pytest.fixture(scope="module")
def cluster():
    yield from three_nodes()


@pytest.fixture
def fresh_cluster():
    """A cluster of its own, for tests that kill a node or Redis."""
    yield from three_nodes()


def assert_carries(sub, track_id, publisher_id, source):
    """The track arrived as published and its decoded frames show its source's content (at least
    90 % recognised, none of another source: media_peer.classify_video)."""
    st = sub.by_track(track_id)
    assert st is not None, f"{track_id} not received: {sub.describe()}"
    assert st.source == source and st.info["participantId"] == publisher_id, st.info
    assert st.frames > 0 and st.mismatched == 0 and st.classes[source] >= 0.9 * st.frames, st


def test_every_node_lists_the_three_nodes_with_their_addresses(cluster):
    for node in cluster.nodes:
        status, _, _, body = node.request("GET", "/v1/nodes")
        assert status == 200, body
        assert body["cluster"] is True
        listed = {n["id"]: n for n in body["nodes"]}
        assert sorted(listed) == ["n1", "n2", "n3"]
        for other in cluster.nodes:
            n = listed[other.node_id]
            assert n["url"] == f"http://127.0.0.1:{other.port}"
            # One address per media worker (two on every node of the fixture), each its own port.
            addresses = n["mediaAddresses"]
            assert len(set(addresses)) == 2 and all(a.startswith("127.0.0.1:") for a in addresses), addresses
            assert set(n["load"]) == {"rooms", "participants", "forwardedPackets", "cpuPercent", "edgeViewers"}
            assert n["draining"] is False
    # The metrics count the nodes as of each node's last heartbeat (every 5 s).
    for node in cluster.nodes:
        deadline = time.time() + 12
        while True:
            metrics = node.request("GET", "/metrics", token=None)[2].decode()
            lines = [l for l in metrics.splitlines() if l.startswith("atrium_cluster_")]
            if "atrium_cluster_nodes 3" in lines or time.time() > deadline:
                break
            time.sleep(0.5)
        assert "atrium_cluster_redis_up 1" in lines and "atrium_cluster_nodes 3" in lines, lines
    # The list is an admin call: a participant token is refused.
    status, _, _, body = cluster.nodes[0].request("GET", "/v1/nodes", token=None)
    assert status == 401


def test_a_room_created_on_node_1_is_listed_by_nodes_2_and_3(cluster):
    n1, n2, n3 = cluster.nodes
    status, _, _, room = n1.request("POST", "/v1/rooms", {"name": "listed-everywhere", "shareMode": "multi",
                                                         "maxConcurrentShares": 2})
    assert status == 201, room
    for node in (n2, n3):
        status, _, _, body = node.request("GET", "/v1/rooms?limit=100")
        assert status == 200
        assert room["id"] in [r["id"] for r in body["rooms"]]
        status, _, _, got = node.request("GET", "/v1/rooms/listed-everywhere")
        assert status == 200 and got == room
    # A name is unique cluster-wide.
    status, _, _, body = n3.request("POST", "/v1/rooms", {"name": "listed-everywhere"})
    assert status == 409 and body["error"]["code"] == "duplicate_name"
    # A change on one node is seen by the others.
    status, _, _, _ = n2.request("PATCH", "/v1/rooms/listed-everywhere", {"shareLocked": True})
    assert status == 200
    assert n3.request("GET", "/v1/rooms/listed-everywhere")[3]["shareLocked"] is True


def inbox_listener(cluster):
    """redis-cli subscribed to every node's inbox: what the nodes publish to each other."""
    return subprocess.Popen(["redis-cli", "-h", "127.0.0.1", "-p", str(cluster.redis.port), "--raw", "SUBSCRIBE",
                             "atrium:inbox:n1", "atrium:inbox:n2", "atrium:inbox:n3"],
                            stdout=subprocess.PIPE, text=True)


def inbox_payloads(listener):
    """The payloads the listener saw (its output: "message", the channel, the payload, per message)."""
    listener.terminate()
    lines = listener.communicate(timeout=10)[0].splitlines()
    return [lines[i + 2] for i in range(len(lines) - 2) if lines[i] == "message" and lines[i + 1].startswith("atrium:inbox:")]


def test_two_clients_through_different_nodes_meet_and_exchange_media(cluster):
    n1, n2, _ = cluster.nodes
    listener = inbox_listener(cluster)
    time.sleep(0.3)

    async def go():
        async with Opened() as opened:
            alice = opened.add(await joined(n1, "alice", room="meet-media"))
            alice.start_keepalive(5)
            bob = opened.add(await joined(n2, "bob", room="meet-media"))
            bob.start_keepalive(5)
            room_id = bob.snapshot["room"]["id"]
            assert alice.snapshot["room"]["id"] == room_id
            owner = cluster.owner(room_id)
            assert owner in ("n1", "n2", "n3")
            # They see each other whichever node runs the room.
            joined_event = await alice.expect("participant_joined")
            assert joined_event["participant"]["identity"] == "bob"
            assert [p["identity"] for p in bob.snapshot["participants"]] == ["alice"]

            sub = opened.add(Subscriber(bob))
            pub = opened.add(await Publisher.start(alice, ["camera"]))
            track = pub.track_id("camera")
            await sub.wait_frames([track], 30, timeout=20)
            assert_carries(sub, track, alice.participant_id, "camera")

            # Bob publishes back to alice: media both ways through the owner's UDP port.
            sub_a = opened.add(Subscriber(alice))
            pub_b = opened.add(await Publisher.start(bob, ["screen_share"]))
            screen = pub_b.track_id("screen_share")
            await sub_a.wait_frames([screen], 20, timeout=20)
            assert_carries(sub_a, screen, bob.participant_id, "screen_share")

    try:
        run(go(), TEST_TIMEOUT)
    finally:
        payloads = inbox_payloads(listener)
    # One of the two joined through a node that does not run the room: its session (token, join,
    # SDP) crossed Redis, sealed: no payload is JSON, each is "s1." and base64url (docs/cluster.md).
    assert payloads, "no message crossed Redis"
    for p in payloads:
        assert p.startswith("s1.") and set(p[3:]) <= set(string.ascii_letters + string.digits + "-_"), p[:80]
        with pytest.raises(ValueError):
            json.loads(p)


def test_a_host_on_one_node_locks_sharing_and_the_sharer_on_a_third_sees_its_share_stop(cluster):
    async def go():
        async with Opened() as opened:
            first = opened.add(await joined(cluster.nodes[0], "first", room="lock-across"))
            room_id = first.snapshot["room"]["id"]
            owner = cluster.owner(room_id)
            others = [n for n in cluster.nodes if n.node_id != owner]
            host_node, sharer_node = others[0], others[1]
            host = opened.add(await joined(host_node, "host", room="lock-across", role="host"))
            sharer = opened.add(await joined(sharer_node, "sharer", room="lock-across"))
            data = await sharer.request("publish", source="screen_share", width=1280, height=720)
            share_id = data["share"]["id"]
            await host.request("set_share_lock", locked=True)
            stopped = await sharer.expect("share_stopped", lambda m: m["share"]["id"] == share_id, timeout=5)
            assert stopped["reason"] == "locked"
            await sharer.refused("publish", code="share_locked", source="screen_share", width=1280, height=720)

            # The same control over the admin API of any node (the owner's answer, relayed).
            for node in cluster.nodes:
                status, _, _, body = node.request("GET", f"/v1/rooms/{room_id}/participants")
                assert status == 200, body
                assert sorted(p["identity"] for p in body["participants"]) == ["first", "host", "sharer"]
            status, _, _, body = host_node.request("PUT", f"/v1/rooms/{room_id}/share-lock", {"locked": False})
            assert status == 200, body
            await sharer.expect("share_lock_changed", lambda m: m["locked"] is False, timeout=5)
            status, _, _, body = sharer_node.request("DELETE", f"/v1/rooms/{room_id}/participants/first")
            assert status == 204, body
            await first.wait_closed(5)

    run(go(), TEST_TIMEOUT)


def test_admin_commands_on_a_node_that_does_not_run_the_room_reach_it(cluster):
    """Stopping a share, new room settings and deleting the room, called on a node that does not run
    the room, travel as hub commands to the owner (docs/cluster.md, "Requests as values"); `e2ee` is
    refused there too while the room is live on its owner."""
    async def go():
        async with Opened() as opened:
            host = opened.add(await joined(cluster.nodes[0], "host", room="commands-across", role="host"))
            room_id = host.snapshot["room"]["id"]
            owner = cluster.owner(room_id)
            other = next(n for n in cluster.nodes if n.node_id != owner)
            sharer = opened.add(await joined(other, "sharer", room="commands-across"))
            data = await sharer.request("publish", source="screen_share", width=1280, height=720)
            share_id = data["share"]["id"]

            status, _, _, body = other.request("DELETE", f"/v1/rooms/{room_id}/shares/{share_id}")
            assert status == 204, body
            stopped = await sharer.expect("share_stopped", lambda m: m["share"]["id"] == share_id, timeout=5)
            assert stopped["reason"] == "moderated" and stopped["by"] == "admin", stopped
            status, _, _, body = other.request("DELETE", f"/v1/rooms/{room_id}/shares/{share_id}")
            assert status == 404 and body["error"]["code"] == "share_not_found", body

            patch = {"shareMode": "multi", "maxConcurrentShares": 2}
            status, _, _, body = other.request("PATCH", f"/v1/rooms/{room_id}", patch)
            assert status == 200 and body["shareMode"] == "multi", body
            changed = await host.expect("share_policy_changed", timeout=5)
            assert changed["sharePolicy"]["maxConcurrentShares"] == 2, changed
            # End-to-end encryption is chosen as clients join: not changed while the room is live on
            # any node.
            status, _, _, body = other.request("PATCH", f"/v1/rooms/{room_id}", {"e2ee": True})
            assert status == 409 and body["error"]["code"] == "room_live", body

            status, _, _, body = other.request("DELETE", f"/v1/rooms/{room_id}")
            assert status == 204, body
            for c in (host, sharer):
                ended = await c.expect("room_ended", timeout=5)
                assert ended["by"] == "admin", ended
                await c.wait_closed(5)

    run(go(), TEST_TIMEOUT)


def test_a_dropped_session_resumes_through_a_third_node(cluster):
    """The resume window works across nodes: a participant relayed through one node loses its socket
    and resumes through another; the others see nothing but its state coming back."""
    async def go():
        async with Opened() as opened:
            host = opened.add(await joined(cluster.nodes[0], "host", room="resume-across", role="host"))
            owner = cluster.owner(host.snapshot["room"]["id"])
            others = [n for n in cluster.nodes if n.node_id != owner]
            dana = opened.add(await joined(others[0], "dana", room="resume-across"))
            await host.expect("participant_joined", lambda m: m["participant"]["identity"] == "dana")
            token, pid = dana.resume_token, dana.participant_id
            dana.abort()
            dana2 = opened.add(await connect(others[1], "dana", room="resume-across"))
            snapshot = await dana2.resume(token)
            assert snapshot["participant"]["id"] == pid
            assert [p["identity"] for p in snapshot["participants"]] == ["host"]
            # The resumed session works: a request through the third node, its event seen by the host.
            await dana2.request("update", name="Dana")
            await host.expect("participant_updated", lambda m: m["participant"]["name"] == "Dana", timeout=5)
            assert not [e for e in host.events if e.get("type") == "participant_left"]

    run(go(), TEST_TIMEOUT)


def test_redis_stopped_for_5_s_the_meeting_goes_on_new_rooms_fail_with_503_then_work(fresh_cluster):
    """A meeting with alice on the room's node and bob relayed through another node rides out 5 s
    without Redis: media keeps flowing both ways (it never touches Redis), bob's socket stays open
    while his requests wait in the relay's backlog, and signaling works both ways after Redis is back.
    A new room fails with 503 `cluster_unavailable` during the outage and is created afterwards."""
    c = fresh_cluster
    n1 = c.nodes[0]

    async def go():
        async with Opened() as opened:
            alice = opened.add(await joined(n1, "alice", room="outage"))
            alice.start_keepalive(1)
            owner = c.node(c.owner(alice.snapshot["room"]["id"]))
            if owner is not n1:
                # Alice straight on the room's node, bob relayed through another one.
                await alice.close()
                alice = opened.add(await joined(owner, "alice", room="outage"))
                alice.start_keepalive(1)
            relay_node = next(n for n in c.nodes if n is not owner)
            bob = opened.add(await joined(relay_node, "bob", room="outage"))
            bob.start_keepalive(1)
            assert bob.snapshot["room"]["id"] == alice.snapshot["room"]["id"]
            sub_b = opened.add(Subscriber(bob))
            sub_a = opened.add(Subscriber(alice))
            pub_a = opened.add(await Publisher.start(alice, ["camera"]))
            pub_b = opened.add(await Publisher.start(bob, ["camera"]))
            cam_a, cam_b = pub_a.track_id("camera"), pub_b.track_id("camera")
            await sub_b.wait_frames([cam_a], 20, timeout=20)
            await sub_a.wait_frames([cam_b], 20, timeout=20)

            c.redis.stop()
            outage_started = time.time()
            for node in (owner, relay_node):
                status, _, _, body = node.request("POST", "/v1/rooms", {"name": "during-outage"})
                assert status == 503 and body["error"]["code"] == "cluster_unavailable", body
            # Opening a room needs Redis: a join of a new room is refused, the socket stays usable.
            carol = opened.add(await connect(relay_node, "carol", room="new-during-outage"))
            await carol.refused("join", code="cluster_unavailable", protocol=1)
            # A request of bob's waits in the relay's backlog until Redis is back.
            waiting = asyncio.ensure_future(bob.request("update", name="Bob during the outage", timeout=30))
            while time.time() - outage_started < 5:
                await sub_b.wait_more_frames([cam_a], 10, timeout=5)
                await sub_a.wait_more_frames([cam_b], 10, timeout=5)
                await alice.request("ping")
                assert not bob.is_closed, (bob.close_code, bob.close_reason)
                await asyncio.sleep(0.5)
            status, _, _, body = owner.request("GET", "/readyz", token=None)
            assert status == 503 and body["error"]["code"] == "cluster_unavailable"

            c.redis.start()
            deadline = time.time() + 15
            while True:
                status, _, _, body = relay_node.request("POST", "/v1/rooms", {"name": "after-outage"})
                if status == 201 or time.time() > deadline:
                    break
                await asyncio.sleep(0.5)
            assert status == 201, body
            # A new room opens again once the nodes have re-asserted the live ones (a few seconds).
            deadline = time.time() + 15
            while True:
                try:
                    await carol.join()
                    break
                except SignalError as e:
                    assert e.code == "cluster_unavailable" and time.time() < deadline, e
                    await asyncio.sleep(0.5)
            assert carol.snapshot["room"]["name"] == "new-during-outage"
            # Bob's request went through once Redis was back, and alice saw its event.
            await asyncio.wait_for(waiting, 15)
            await alice.expect(
                "participant_updated", lambda m: m["participant"]["name"] == "Bob during the outage", timeout=10)
            await sub_b.wait_more_frames([cam_a], 20, timeout=10)
            await sub_a.wait_more_frames([cam_b], 20, timeout=10)
            assert_carries(sub_b, cam_a, alice.participant_id, "camera")
            assert_carries(sub_a, cam_b, bob.participant_id, "camera")

            # Signaling both ways after the outage: a share started and stopped by alice reaches bob
            # through the relay, one started by bob reaches alice.
            share = await alice.request("publish", source="screen_share", width=1280, height=720)
            share_id = share["share"]["id"]
            await bob.expect("share_started", lambda m: m["share"]["id"] == share_id, timeout=10)
            await alice.request("unpublish", trackId=share["track"]["id"])
            await bob.expect("share_stopped", lambda m: m["share"]["id"] == share_id, timeout=10)
            share_b = await bob.request("publish", source="screen_share", width=1280, height=720)
            await alice.expect("share_started", lambda m: m["share"]["id"] == share_b["share"]["id"], timeout=10)
            assert not alice.is_closed and not bob.is_closed
            assert not [e for e in alice.events if e.get("type") == "participant_left"]
            # Redis came back empty: the owner wrote the live room's settings back.
            deadline = time.time() + 15
            while c.redis.cli("EXISTS", f"atrium:room:{alice.snapshot['room']['id']}") != "1":
                assert time.time() < deadline, "the live room was not written back"
                await asyncio.sleep(0.5)

    run(go(), TEST_TIMEOUT)


def test_the_owner_killed_clients_rejoin_through_another_node_with_policy_and_lock_intact(fresh_cluster):
    import signal as sig
    c = fresh_cluster
    status, _, _, room = c.nodes[0].request("POST", "/v1/rooms", {"name": "failover", "shareMode": "multi",
                                                                  "maxConcurrentShares": 3, "shareLocked": True})
    assert status == 201

    async def go():
        async with Opened() as opened:
            alice = opened.add(await joined(c.nodes[0], "alice", room="failover"))
            owner = c.node(c.owner(room["id"]))
            entries = [n for n in c.nodes if n is not owner]
            bob = opened.add(await joined(entries[0], "bob", room="failover"))
            alice_entry = c.nodes[0] if c.nodes[0] is not owner else entries[1]
            if alice_entry is not c.nodes[0]:
                await alice.close()
                alice = opened.add(await joined(alice_entry, "alice", room="failover"))

            carol = opened.add(await joined(owner, "carol", room="failover"))   # straight on the owner
            carol_resume = carol.resume_token

            killed_at = time.time()
            owner.stop(sig.SIGKILL)
            # The entry nodes see the owner stop listening and tell their clients the room moved.
            for client in (alice, bob):
                code, _ = await client.wait_closed(10)
                assert code == 4104, code
            # The client of the dead node: its socket drops, its resume elsewhere fails, it joins again.
            await carol.wait_closed(10)
            carol2 = opened.add(await connect(entries[1], "carol", room="failover"))
            await carol2.refused("resume", code="resume_failed", protocol=1, resumeToken=carol_resume)
            await carol2.join()
            alice2 = opened.add(await joined(alice_entry, "alice", room="failover"))
            bob2 = opened.add(await joined(entries[0], "bob", room="failover"))
            new_owner = c.owner(room["id"])
            assert new_owner and new_owner != owner.node_id
            policy = bob2.snapshot["room"]["sharePolicy"]
            assert policy["shareMode"] == "multi" and policy["maxConcurrentShares"] == 3
            assert policy["shareLocked"] is True

            sub = opened.add(Subscriber(bob2))
            pub = opened.add(await Publisher.start(alice2, ["camera"]))
            track = pub.track_id("camera")
            await sub.wait_frames([track], 10, timeout=20)
            assert_carries(sub, track, alice2.participant_id, "camera")
            recovered = time.time() - killed_at
            print(f"failover: decoding again {recovered:.1f} s after kill -9 of the owner")

    run(go(), TEST_TIMEOUT)


def test_sigterm_on_the_node_running_a_meeting_moves_its_clients_who_keep_decoding(fresh_cluster):
    import signal as sig
    c = fresh_cluster

    async def go():
        async with Opened() as opened:
            probe = await joined(c.nodes[0], "probe", room="drain")
            room_id = probe.snapshot["room"]["id"]
            owner = c.node(c.owner(room_id))
            await probe.close()
            # Both clients straight on the node that runs the room.
            alice = opened.add(await joined(owner, "alice", room="drain"))
            bob = opened.add(await joined(owner, "bob", room="drain"))
            sub = opened.add(Subscriber(bob))
            pub = opened.add(await Publisher.start(alice, ["camera"]))
            await sub.wait_frames([pub.track_id("camera")], 10, timeout=20)

            owner.proc.send_signal(sig.SIGTERM)
            for client in (alice, bob):
                move = await client.expect("move", timeout=10)
                assert move["reason"] == "draining"
                code, _ = await client.wait_closed(10)
                assert code == 4104, code
            rest = [n for n in c.nodes if n is not owner]
            alice2 = opened.add(await joined(rest[0], "alice", room="drain"))
            bob2 = opened.add(await joined(rest[1], "bob", room="drain"))
            new_owner = c.owner(room_id)
            assert new_owner in [n.node_id for n in rest]
            sub2 = opened.add(Subscriber(bob2))
            pub2 = opened.add(await Publisher.start(alice2, ["camera"]))
            track = pub2.track_id("camera")
            await sub2.wait_frames([track], 10, timeout=20)
            assert_carries(sub2, track, alice2.participant_id, "camera")
            # The drained node exits by itself once its clients are gone.
            owner.proc.wait(timeout=35)
            assert owner.proc.returncode == 0

    run(go(), TEST_TIMEOUT)


def test_a_room_taken_over_by_another_node_moves_its_clients_there_and_closes_here(fresh_cluster):
    """Split brain healed: the owner finds in its heartbeat that another node holds its room (as when it
    was cut off from Redis and the room was placed again); its clients are told to move, the room closes
    there by the one path, and the meeting goes on as one on the new owner."""
    c = fresh_cluster

    async def go():
        async with Opened() as opened:
            probe = await joined(c.nodes[0], "probe", room="taken")
            room_id = probe.snapshot["room"]["id"]
            owner = c.node(c.owner(room_id))
            await probe.close()
            alice = opened.add(await joined(owner, "alice", room="taken"))
            assert owner.metric("atrium_rooms_live") == 1
            other = next(n for n in c.nodes if n is not owner)
            # What the placement of a join elsewhere writes while the owner cannot reach Redis.
            c.redis.cli("SET", f"atrium:room-owner:{room_id}", other.node_id, "PX", "15000")
            move = await alice.expect("move", timeout=15)
            assert move["reason"] == "moved"
            code, _ = await alice.wait_closed(10)
            assert code == 4104, code
            assert owner.metric("atrium_rooms_live") == 0
            # The old owner's release left the new owner's claim alone.
            assert c.owner(room_id) == other.node_id
            alice2 = opened.add(await joined(other, "alice", room="taken"))
            assert alice2.snapshot["room"]["id"] == room_id
            assert other.metric("atrium_rooms_live") == 1

    run(go(), TEST_TIMEOUT)


def test_whip_on_a_node_that_does_not_run_the_room_is_answered_by_the_owner(cluster):
    """A WHIP POST, and then the session's DELETE, sent to a node that does not run the room are answered
    by the node that does (docs/whip-whep.md): its media address is in the answer, its participants see
    the share start and stop."""
    from test_whip_http import offer_sdp
    from signal_client import mint

    async def go():
        async with Opened() as opened:
            host = opened.add(await joined(cluster.nodes[0], "host", room="whip-across"))
            room_id = host.snapshot["room"]["id"]
            owner = cluster.node(cluster.owner(room_id))
            other = next(n for n in cluster.nodes if n is not owner)
            token = mint(other, "whip-across", "obs")
            auth = {"Authorization": f"Bearer {token}"}
            status, headers, body, _ = other.request(
                "POST", "/v1/rooms/whip-across/whip", (await offer_sdp()).encode(),
                {**auth, "Content-Type": "application/sdp"}, token=None)
            assert status == 201, body
            answer = body.decode()
            nodes = owner.request("GET", "/v1/nodes")[3]["nodes"]
            owner_media = next(n["mediaAddresses"] for n in nodes if n["id"] == owner.node_id)
            ports = {a.rsplit(":", 1)[1] for a in owner_media}
            assert any(f" {p} typ host" in answer for p in ports), (answer, owner_media)
            started = await host.expect("share_started", timeout=10)
            status, _, body, _ = other.request("DELETE", headers["location"], headers=auth, token=None)
            assert status == 200, body
            stopped = await host.expect("share_stopped", timeout=10)
            assert stopped["share"]["id"] == started["share"]["id"] and stopped["reason"] == "user_stopped"

    run(go(), TEST_TIMEOUT)


def webhooks_settled(c, rx):
    """The cluster's webhook queue is empty and every acknowledged delivery is counted by a live node."""
    live = [n for n in c.nodes if n.alive()]
    return (all(n.metric("atrium_webhook_queue_length") == 0 for n in live)
            and sum(n.metric("atrium_webhook_delivered_total") for n in live) == len(rx.accepted()))


def test_webhooks_of_a_cluster_are_sent_once_by_one_node_and_survive_its_kill():
    """The cluster's webhook outbox is in Redis (docs/webhooks.md, "In a cluster"): the events of a
    meeting whose participants entered through two nodes are queued once, delivered by the one node
    holding the endpoint's lease, and when that node is killed while the endpoint is down, another
    node takes the queue over once the lease expires: every event arrives, once, in order."""
    import json
    import signal as sig

    from webhook_receiver import Receiver

    rx = Receiver("whsec_cluster_0123456789").start()
    rx.down = True
    redis = RedisServer().start()
    hooks = json.dumps([{"url": rx.url, "secret": rx.secret}])
    c = Cluster(redis, 3, extra=["--webhooks", hooks, "--webhook-timeout", "1"])
    try:
        c.wait_nodes(3)

        async def meeting():
            host = await joined(c.nodes[0], "host", room="wh-cluster", role="host")
            alice = await joined(c.nodes[1], "alice", room="wh-cluster")
            try:
                data = await alice.request("publish", source="screen_share", width=1280, height=720)
                await alice.request("unpublish", trackId=data["track"]["id"])
                await alice.leave()
                await host.leave()
            finally:
                await close_all(alice, host)

        run(meeting(), 60)
        deadline = time.time() + 15
        while not rx.requests:
            assert time.time() < deadline, "no node tried to deliver"
            time.sleep(0.1)
        lease = f"atrium:webhook-lease:{rx.url}"
        holder = c.redis.cli("GET", lease)
        assert holder in ("n1", "n2", "n3"), holder
        killed_at = time.time()
        c.node(holder).stop(sig.SIGKILL)
        rx.down = False
        expected = ["room_started", "participant_joined", "participant_joined", "track_published", "share_started",
                    "share_stopped", "track_unpublished", "participant_left", "participant_left"]
        events = rx.wait_for(
            lambda ev: len([e for e in ev if e["room"]["name"] == "wh-cluster"]) >= len(expected), timeout=90)
        took = time.time() - killed_at
        print(f"webhooks: the queue taken over and delivered {took:.1f} s after kill -9 of its deliverer")
        # Nothing more to come: the queue is empty and the live nodes delivered what was accepted.
        deadline = time.time() + 60
        while not webhooks_settled(c, rx):
            assert time.time() < deadline, "the webhook queue did not empty"
            time.sleep(0.1)
        events = [e for e in rx.accepted() if e["room"]["name"] == "wh-cluster"]
        assert [e["type"] for e in events] == expected
        assert len({e["id"] for e in events}) == len(events), "each event accepted once"
        assert all(r["valid"] for r in rx.requests)
        new_holder = c.redis.cli("GET", lease)
        assert new_holder in ("n1", "n2", "n3") and new_holder != holder, new_holder
        # A clean stop (SIGTERM: drains, no clients here) gives the lease up: the last node takes it
        # at its next read instead of after the lease's expiry.
        c.node(new_holder).stop()
        last = next(n.node_id for n in c.nodes if n.node_id not in (holder, new_holder))
        deadline = time.time() + 10
        while c.redis.cli("GET", lease) != last:
            assert time.time() < deadline, c.redis.cli("GET", lease)
            time.sleep(0.1)
    finally:
        c.stop()
        redis.stop()
        rx.stop()
