"""Webhooks against a real HTTP receiver (docs/webhooks.md): every event of a scripted meeting with
its signature and its order per room; retries after failures with each event acknowledged once; a
restart (even SIGKILL) that loses nothing queued; a dead endpoint that never slows the meeting."""
import asyncio
import json
import os
import signal
import subprocess
import time

from conftest import MEDIA_ARGS, Server
from test_media import Session
from signal_client import close_all, joined, run
from webhook_receiver import Receiver

SECRET = "whsec_test_0123456789abcdef"


def start_server(data_dir, receivers, *extra, env=None):
    hooks = json.dumps([{"url": r.url, "secret": r.secret} for r in receivers])
    return Server(data_dir, "--dev", "--auto-create-rooms", "any", "--udp-port", "-1", "--webhooks", hooks,
                  *extra, env=env).start()


async def scripted_meeting(server, room):
    """host and alice join; alice shares, pauses, resumes; the host locks sharing, which stops the
    share (reason locked, by the host); alice leaves, then the host."""
    host = await joined(server, "host", room=room, role="host")
    alice = await joined(server, "alice", room=room)
    try:
        data = await alice.request("publish", source="screen_share", width=1280, height=720)
        sid = data["share"]["id"]
        await alice.request("pause_share", shareId=sid)
        await alice.request("resume_share", shareId=sid)
        await host.request("set_share_lock", locked=True)
        await alice.expect("share_stopped")
        await alice.leave()
        await host.leave()
        return dict(host=host.participant_id, alice=alice.participant_id, share=sid)
    finally:
        await close_all(alice, host)


MEETING_TYPES = [
    "room_started", "participant_joined", "participant_joined", "track_published", "share_started",
    "share_paused", "share_resumed", "share_lock_changed", "share_stopped", "track_unpublished",
    "participant_left", "participant_left",
]


def meeting_events(events, room):
    return [e for e in events if e["room"]["name"] == room]


def settled(server, rx, timeout=60):
    """Waits until nothing more will come: the outbox is empty and the server counts as delivered
    exactly what `rx` acknowledged. `timeout` is a hang guard."""
    deadline = time.time() + timeout
    while True:
        queued = server.metric("atrium_webhook_queue_length")
        delivered = server.metric("atrium_webhook_delivered_total")
        if queued == 0 and delivered == len(rx.accepted()):
            return
        assert time.time() < deadline, f"{queued} queued, {delivered} delivered, {len(rx.accepted())} accepted"
        time.sleep(0.05)


def test_every_event_of_a_meeting_signed_and_in_order(tmp_path):
    rx = Receiver(SECRET).start()
    server = start_server(str(tmp_path / "data"), [rx])
    try:
        ids = run(scripted_meeting(server, "wh-meeting"))
        rx.wait_for(lambda ev: len(meeting_events(ev, "wh-meeting")) >= len(MEETING_TYPES))
        settled(server, rx)
        events = meeting_events(rx.accepted(), "wh-meeting")
        assert [e["type"] for e in events] == MEETING_TYPES
        assert all(r["valid"] for r in rx.requests), "every delivery carries a valid signature"
        assert all(r["path"] == "/hooks/atrium" for r in rx.requests)
        assert len({e["id"] for e in events}) == len(events), "event ids are unique"
        assert [e["createdAt"] for e in events] == sorted(e["createdAt"] for e in events)
        for r in rx.requests:
            body = json.loads(r["body"])
            assert r["headers"]["x-atrium-event-id"] == body["id"]
            assert r["headers"]["content-type"] == "application/json"
        by_type = {}
        for e in events:
            by_type.setdefault(e["type"], []).append(e["data"])
        joined_ids = [d["participant"]["identity"] for d in by_type["participant_joined"]]
        assert joined_ids == ["host", "alice"]
        share = by_type["share_started"][0]["share"]
        assert share["id"] == ids["share"] and share["participantId"] == ids["alice"]
        assert by_type["share_paused"][0]["share"]["state"] == "paused"
        assert by_type["share_resumed"][0]["share"]["state"] == "started"
        assert by_type["share_lock_changed"][0] == {"locked": True, "by": ids["host"]}
        stopped = by_type["share_stopped"][0]
        assert stopped["reason"] == "locked" and stopped["by"] == ids["host"]
        left = by_type["participant_left"]
        assert [(d["identity"], d["reason"]) for d in left] == [("alice", "left"), ("host", "left")]
        # Metrics: everything delivered, nothing retried or waiting.
        _, _, text, _ = server.request("GET", "/metrics")
        text = text.decode()
        assert f"atrium_webhook_delivered_total {len(rx.requests)}" in text
        assert "atrium_webhook_queue_length 0" in text
    finally:
        server.stop()
        rx.stop()


def test_failures_are_retried_and_every_event_acknowledged_once(tmp_path):
    rx = Receiver(SECRET, statuses=[500, 500, 500]).start()
    server = start_server(str(tmp_path / "data"), [rx])
    try:
        run(scripted_meeting(server, "wh-retry"))
        rx.wait_for(lambda ev: len(meeting_events(ev, "wh-retry")) >= len(MEETING_TYPES), timeout=60)
        settled(server, rx)
        events = meeting_events(rx.accepted(), "wh-retry")
        assert [e["type"] for e in events] == MEETING_TYPES
        ids = [e["id"] for e in events]
        assert len(set(ids)) == len(ids), "each event acknowledged exactly once"
        # The first event was refused three times and then accepted: the same event, resigned.
        first = [r for r in rx.requests if json.loads(r["body"])["id"] == ids[0]]
        assert [r["status"] for r in first] == [500, 500, 500, 200]
        assert [r["headers"]["x-atrium-delivery-attempt"] for r in first] == ["1", "2", "3", "4"]
        assert len(rx.requests) == len(MEETING_TYPES) + 3
        assert all(r["valid"] for r in rx.requests)
        _, _, text, _ = server.request("GET", "/metrics")
        assert "atrium_webhook_retried_total 3" in text.decode()
    finally:
        server.stop()
        rx.stop()


def test_restart_mid_meeting_delivers_what_was_queued(tmp_path):
    rx = Receiver(SECRET).start()
    rx.down = True
    data = str(tmp_path / "data")
    server = start_server(data, [rx])
    try:
        async def first_half():
            host = await joined(server, "host", room="wh-restart", role="host")
            alice = await joined(server, "alice", room="wh-restart")
            await alice.request("publish", source="screen_share")
            await alice.leave()
            await host.leave()
            await close_all(alice, host)
        run(first_half())
        # The nine events wait in the outbox, and delivery was tried (the endpoint answered 503).
        server.wait_metric("atrium_webhook_queue_length", lambda n: n >= 9)
        deadline = time.time() + 60
        while not any(r["status"] == 503 for r in rx.requests):
            assert time.time() < deadline, "no delivery was tried"
            time.sleep(0.05)
        # Killed without a chance to flush: the outbox is written before anything is sent.
        assert server.stop(sig=signal.SIGKILL) == -signal.SIGKILL
        rx.down = False
        server = start_server(data, [rx])

        async def second_half():
            bob = await joined(server, "bob", room="wh-restart")
            await bob.leave()
            await close_all(bob)
        run(second_half())
        expected = ["room_started", "participant_joined", "participant_joined", "track_published",
                    "share_started", "share_stopped", "track_unpublished", "participant_left", "participant_left",
                    "room_started", "participant_joined", "participant_left"]
        rx.wait_for(lambda ev: len(meeting_events(ev, "wh-restart")) >= len(expected), timeout=60)
        settled(server, rx)
        got = meeting_events(rx.accepted(), "wh-restart")
        assert [e["type"] for e in got] == expected
        assert got[-2]["data"]["participant"]["identity"] == "bob"
        assert all(r["valid"] for r in rx.requests)
        ids = [e["id"] for e in got]
        assert len(ids) == len(set(ids))
    finally:
        server.stop()
        rx.stop()


async def attempt_in_flight(dead, timeout=60):
    """Waits until the server holds a delivery attempt open to the endpoint that never answers."""
    deadline = time.monotonic() + timeout
    while dead.held() == 0:
        assert time.monotonic() < deadline, "no delivery was attempted"
        await asyncio.sleep(0.05)


async def joins_and_round_trips(server, dead, room, n=6, rounds=10):
    """The room's first participant joins (an event to deliver); once an attempt to deliver it hangs,
    n - 1 more join and each runs `rounds` requests. Returns the seconds that took."""
    clients = [await joined(server, "p0", room=room, role="host")]
    try:
        await attempt_in_flight(dead)
        t0 = time.monotonic()
        for i in range(1, n):
            clients.append(await joined(server, f"p{i}", room=room))
        for r in range(rounds):
            await clients[0].request("set_share_lock", locked=(r % 2 == 0))
            for c in clients[1:]:
                await c.request("ping")
        return time.monotonic() - t0
    finally:
        for c in clients:
            await c.leave()
        await close_all(*clients)


async def media_flows(server, room):
    """Seconds from a camera's publish_offer to 30 frames decoded by a subscriber (aiortc peers)."""
    session = Session(server, room)
    try:
        host = await session.join("host", role="host")
        alice = await session.join("alice")
        sub = session.subscribe(host)
        t0 = time.monotonic()
        pub = await session.publish(alice, ["camera"])
        await sub.wait_frames([pub.track_id("camera")], 30, timeout=30)
        return time.monotonic() - t0
    finally:
        await session.close()


def test_a_dead_endpoint_does_not_slow_the_meeting(tmp_path):
    """An endpoint that accepts connections and never answers, with the longest attempt timeout
    (`--webhook-timeout 120`): while an attempt to it is open and unanswered, joins, requests and
    media go on. A delivery that blocked the service thread would hold each of them for the two
    minutes, past the scenario's guard. The server stops with exit 0 within `stop`'s guard (one
    minute), so the attempt in flight does not hold the shutdown either. The times are printed."""
    dead = Receiver(SECRET, hang=True).start()
    hooked = Server(str(tmp_path / "hooked"), *MEDIA_ARGS, "--webhook-timeout", "120", "--webhooks",
                    json.dumps([{"url": dead.url, "secret": SECRET}])).start()
    try:
        requests = run(joins_and_round_trips(hooked, dead, "wh-dead"), 60)
        media = run(media_flows(hooked, "wh-dead-media"), 60)
        print(f"with a delivery attempt hanging: joins and requests {requests:.2f} s, "
              f"first 30 frames {media:.2f} s")
        assert dead.held() >= 1
        queued = hooked.metric("atrium_webhook_queue_length")
        assert queued > 10, f"the events wait in the outbox: {queued}"
        code = hooked.stop()
        assert code == 0, f"exited with {code}: an attempt in flight held the shutdown"
    finally:
        hooked.stop()
        dead.stop()


def test_https_endpoint_verified_against_the_trusted_certificate(tmp_path):
    """An https endpoint on 127.0.0.1 with a self-signed certificate for IP:127.0.0.1: delivered when
    the server trusts it (OpenSSL's SSL_CERT_FILE), refused and retried when it does not."""
    cert, key = str(tmp_path / "cert.pem"), str(tmp_path / "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=atrium-test",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    rx = Receiver(SECRET, tls=(cert, key)).start()
    trusted = start_server(str(tmp_path / "trusted"), [rx], env={"SSL_CERT_FILE": cert})
    untrusted = start_server(str(tmp_path / "untrusted"), [rx], env={"SSL_CERT_FILE": "/nonexistent.pem"})
    try:
        async def join(server, room):
            c = await joined(server, "alice", room=room)
            await c.leave()
            await close_all(c)
        run(join(trusted, "wh-tls"))
        events = rx.wait_for(lambda ev: len(meeting_events(ev, "wh-tls")) >= 3)
        assert [e["type"] for e in meeting_events(events, "wh-tls")] == [
            "room_started", "participant_joined", "participant_left"]
        assert all(r["valid"] for r in rx.requests)
        run(join(untrusted, "wh-untrusted"))
        deadline = time.time() + 60
        while time.time() < deadline:
            _, _, text, _ = untrusted.request("GET", "/metrics")
            if "atrium_webhook_retried_total 0" not in text.decode():
                break
            time.sleep(0.2)
        assert "atrium_webhook_delivered_total 0" in text.decode()
        assert "atrium_webhook_retried_total 0" not in text.decode()
        assert meeting_events(rx.accepted(), "wh-untrusted") == []
    finally:
        trusted.stop()
        untrusted.stop()
        rx.stop()
