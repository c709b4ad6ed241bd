"""WebRTC data channels (RFC 8831/8832, SCTP over DTLS through usrsctp) with real aiortc peers: each
opens a reliable and a lossy channel on its publisher connection (an offer with only a data channel
section), sends the `send_data` envelope, and receives the room's messages on its channels. A pointer
at 30 messages a second arrives in the order sent; a subscriber that stops reading does not slow or
cut another; garbage where SCTP should be is dropped and counted, the association stays."""
import asyncio
import json
import os

import pytest

from conftest import MEDIA_ARGS, Server, stopped_cleanly
from data_peer import DataPeer, SubscriberDataPeer
from signal_client import close_all, joined, run

TEST_TIMEOUT = 90


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    d = tmp_path_factory.mktemp("datachannels")
    s = Server(os.path.join(d, "data"), "--dev", "--store", "memory", "--auto-create-rooms", "any",
               *MEDIA_ARGS).start()
    yield s
    stopped_cleanly(s)


def test_channels_carry_the_envelope_reliable_and_lossy_in_order(server):
    async def go():
        alice = await joined(server, "alice", room="dc1")
        bob = await joined(server, "bob", room="dc1")
        carol = await joined(server, "carol", room="dc1")
        peers = []
        try:
            a = await DataPeer.start(alice)
            b = await DataPeer.start(bob)
            peers += [a, b]
            # A reliable chat message on a channel reaches bob's channel, and carol (no channels) over
            # signaling; it joins the chat history like any chat message.
            a.send("reliable", "chat", "over the channel")
            await b.wait(lambda: b.received["reliable"], "reliable message")
            m = b.received["reliable"][0]
            assert (m["type"], m["from"], m["topic"], m["payload"]) == (
                "data", alice.participant_id, "chat", "over the channel")
            s = await carol.expect("data")
            assert s["payload"] == "over the channel" and s["messageId"] == m["messageId"]
            # The pointer: 30 messages a second on the lossy channel, numbered; bob gets them in order
            # of sending (on loopback nothing is lost), carol none (she has no lossy channel).
            for seq in range(60):
                a.send("lossy", "pointer", json.dumps({"seq": seq, "x": seq / 60, "y": 0.5}))
                await asyncio.sleep(1 / 30)
            await b.wait(lambda: len(b.received["lossy"]) >= 60, "60 pointer messages", timeout=30)
            seqs = [json.loads(m["payload"])["seq"] for m in b.received["lossy"]]
            assert seqs == list(range(60)), seqs
            await carol.no_event("data", lambda m: m["topic"] == "pointer")
            # Sent back the other way, to one participant only.
            b.send("reliable", "reaction", "+1", to=[alice.participant_id])
            await a.wait(lambda: a.received["reliable"], "reaction")
            assert a.received["reliable"][0]["to"] == [alice.participant_id]
            await carol.no_event("data", lambda m: m["topic"] == "reaction")
            # The worker's counters reach /metrics once a second.
            server.wait_metric("atrium_media_data_messages_total", lambda v: v >= 62, direction="in")
        finally:
            for p in peers:
                await p.close()
            await close_all(alice, bob, carol)

    run(go(), TEST_TIMEOUT)


def test_the_subscriber_connection_carries_channels_for_a_participant_who_asks(server):
    async def go():
        alice = await joined(server, "alice", room="dc5")
        viewer = await joined(server, "viewer", room="dc5", role="viewer", dataChannels=True)
        peers = []
        try:
            a = await DataPeer.start(alice)
            v = await SubscriberDataPeer.start(viewer)
            peers += [a, v]
            for seq in range(10):
                a.send("lossy", "pointer", json.dumps({"seq": seq}))
            a.send("reliable", "chat", "to the viewer's subscriber connection")
            await v.wait(lambda: v.received["reliable"] and len(v.received["lossy"]) == 10, "messages")
            assert [json.loads(m["payload"])["seq"] for m in v.received["lossy"]] == list(range(10))
            # A viewer sends data too (its canPublishData), from its subscriber connection.
            v.send("reliable", "chat", "question from the audience")
            await a.wait(lambda: a.received["reliable"], "the viewer's question")
            assert a.received["reliable"][0]["from"] == viewer.participant_id
        finally:
            for p in peers:
                await p.close()
            await close_all(alice, viewer)

    run(go(), TEST_TIMEOUT)


def test_permission_and_envelope_errors_hold_on_channels_too(server):
    async def go():
        host = await joined(server, "host", room="dc2", role="host")
        bob = await joined(server, "bob", room="dc2")
        peers = []
        try:
            h = await DataPeer.start(host)
            b = await DataPeer.start(bob)
            peers += [h, b]
            await host.request("set_permission", participantId=bob.participant_id, source="data", granted=False)
            b.send("reliable", "chat", "not allowed")
            err = await bob.expect_error("data_not_allowed")
            assert "id" not in err
            b.lossy.send("not json at all")
            b.reliable.send(json.dumps({"topic": "", "payload": "x"}))
            await bob.expect_error("invalid_field")
            await asyncio.sleep(0.3)
            assert h.received["reliable"] == [] and h.received["lossy"] == []
            assert not bob.is_closed
        finally:
            for p in peers:
                await p.close()
            await close_all(host, bob)

    run(go(), TEST_TIMEOUT)


def test_a_subscriber_that_stops_reading_does_not_slow_or_cut_another(server):
    async def go():
        alice = await joined(server, "alice", room="dc3")
        bob = await joined(server, "bob", room="dc3")
        stuck = await joined(server, "stuck", room="dc3")
        peers = []
        try:
            a = await DataPeer.start(alice)
            b = await DataPeer.start(bob)
            s = await DataPeer.start(stuck)
            peers += [a, b, s]
            before = server.metric("atrium_media_data_dropped_total")

            # From now on the stuck peer's SCTP takes nothing: no acknowledgement ever reaches the server.
            async def ignore(data):
                return None
            s.pc.sctp._handle_data = ignore
            # 90 messages of 2 KB at 30 a second (within the sender's data budget): more than the stuck
            # association's 64 KiB send buffer and lossy queue hold.
            pad = "p" * 2000
            for seq in range(90):
                a.send("lossy", "pointer", json.dumps({"seq": seq, "pad": pad}))
                await asyncio.sleep(1 / 30)
            await b.wait(lambda: len(b.received["lossy"]) >= 90, "90 pointer messages", timeout=30)
            assert [json.loads(m["payload"])["seq"] for m in b.received["lossy"]] == list(range(90))
            # The stuck one's queue dropped its oldest instead of holding anyone up.
            await b.wait(lambda: server.metric("atrium_media_data_dropped_total") > before, "drops counted")
            assert not stuck.is_closed and not bob.is_closed
            assert isinstance(await bob.request("ping"), dict)
        finally:
            for p in peers:
                await p.close()
            await close_all(alice, bob, stuck)

    run(go(), TEST_TIMEOUT)


def test_garbage_sctp_is_dropped_and_counted_and_the_association_stays(server):
    async def go():
        alice = await joined(server, "alice", room="dc4")
        bob = await joined(server, "bob", room="dc4")
        peers = []
        try:
            a = await DataPeer.start(alice)
            b = await DataPeer.start(bob)
            peers += [a, b]
            before = server.metric("atrium_media_data_invalid_total")
            # DTLS application data that is not SCTP, and SCTP-shaped bytes with a broken checksum.
            dtls = a.pc.sctp.transport
            await dtls._send_data(b"\x00" * 7)
            await dtls._send_data(os.urandom(64))
            await dtls._send_data(bytes.fromhex("13881388000000010badbeef00000004"))
            await b.wait(lambda: server.metric("atrium_media_data_invalid_total") >= before + 2, "garbage counted")
            a.send("reliable", "chat", "still here")
            await b.wait(lambda: b.received["reliable"], "message after the garbage")
            assert b.received["reliable"][-1]["payload"] == "still here"
        finally:
            for p in peers:
                await p.close()
            await close_all(alice, bob)

    run(go(), TEST_TIMEOUT)
