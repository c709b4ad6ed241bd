"""Screen-share and presence flows over `/v1/signal` against the real server, one test per seed flow
(VideoSDK, PlanetKit, Stream, Zoom styles) and per rule of the share control set."""
import asyncio
import os

import pytest

from conftest import Server, stopped_cleanly
from signal_client import close_all, connect, joined, mint, mint_jwt, run


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """One dev server for the module; every test uses its own room."""
    d = tmp_path_factory.mktemp("flows")
    s = Server(os.path.join(d, "data"), "--dev", "--store", "memory", "--auto-create-rooms", "any").start()
    yield s
    stopped_cleanly(s)


def create_room(server, **body):
    status, _, _, room = server.request("POST", "/v1/rooms", body)
    assert status == 201, room
    return room


def by_share(share_id):
    return lambda m: m["share"]["id"] == share_id


def by_participant(pid):
    return lambda m: m.get("participantId") == pid


# -- seed flows ------------------------------------------------------------------------------------

def test_videosdk_style_share_seen_and_stopped(hub):
    room = create_room(hub, name="vsdk")

    async def go():
        alice = await joined(hub, "alice", room="vsdk")
        bob = await joined(hub, "bob", room="vsdk")
        try:
            assert bob.snapshot["room"]["id"] == room["id"]
            assert [p["identity"] for p in bob.snapshot["participants"]] == ["alice"]
            j = await alice.expect("participant_joined")
            assert j["participant"]["identity"] == "bob" and j["participant"]["id"] == bob.participant_id

            data, answered_at = await alice.request_indexed("publish", source="screen_share", width=1920, height=1080)
            track, share = data["track"], data["share"]
            assert track["source"] == "screen_share" and track["kind"] == "video" and track["shareId"] == share["id"]
            assert share["trackId"] == track["id"] and share["state"] == "started"
            assert share["participantId"] == alice.participant_id
            # The events a request causes reach its sender before its result.
            own = await alice.expect("share_started", by_share(share["id"]))
            assert alice.index_of(own) < answered_at

            tp = await bob.expect("track_published")
            assert tp["track"]["id"] == track["id"] and tp["track"]["source"] == "screen_share"
            assert tp["track"]["participantId"] == alice.participant_id
            assert (tp["track"]["width"], tp["track"]["height"]) == (1920, 1080)
            ss = await bob.expect("share_started")
            assert ss["share"] == share

            await alice.request("stop_share", shareId=share["id"])
            for c in (alice, bob):
                st = await c.expect("share_stopped", by_share(share["id"]))
                assert st["reason"] == "user_stopped" and st["by"] == alice.participant_id
                tu = await c.expect("track_unpublished", lambda m: m["trackId"] == track["id"])
                assert tu["source"] == "screen_share" and tu["participantId"] == alice.participant_id
            # The share is gone: stopping it again is refused.
            await alice.refused("stop_share", "share_not_found", shareId=share["id"])
        finally:
            await close_all(alice, bob)
    run(go())


@pytest.mark.parametrize("how", ["stop_share", "unpublish"])
def test_planetkit_style_one_to_one_capture_ended(hub, how):
    room = f"pk-{how}"

    async def go():
        caller = await joined(hub, "caller", room=room)
        callee = await joined(hub, "callee", room=room)
        try:
            data = await callee.request("publish", source="screen_share", name="screen")
            share = data["share"]
            audio = await callee.request("publish", source="screen_share_audio")
            assert audio["track"]["shareId"] == share["id"]
            started = await caller.expect("share_started")
            assert started["share"]["participantId"] == callee.participant_id
            await caller.expect("track_published", lambda m: m["track"]["source"] == "screen_share_audio")

            if how == "stop_share":
                await callee.request("stop_share", shareId=share["id"], reason="capture_ended")
            else:
                await callee.request("unpublish", trackId=data["track"]["id"], reason="capture_ended")
            st = await caller.expect("share_stopped", by_share(share["id"]))
            assert st["reason"] == "capture_ended" and st["by"] == callee.participant_id
            assert st["share"]["audioTrackId"] == audio["track"]["id"]
            # Both tracks of the share go, with the share's reason.
            gone = {(await caller.expect("track_unpublished"))["trackId"] for _ in range(2)}
            assert gone == {data["track"]["id"], audio["track"]["id"]}
            # A sharer cannot claim a reason that is not its own.
            again = await callee.request("publish", source="screen_share")
            e = await callee.refused("stop_share", "invalid_field", shareId=again["share"]["id"], reason="moderated")
            assert e.field == "reason"
        finally:
            await close_all(caller, callee)
    run(go())


@pytest.mark.parametrize("variant", ["share_request_required", "token_without_screen_share"])
def test_stream_style_request_grant_revoke(hub, variant):
    room = f"stream-{variant.replace('_', '-')}"

    async def go():
        host = await joined(hub, "host", room=room, role="host")
        sources = ["camera", "microphone"] if variant == "token_without_screen_share" else None
        bob = await joined(hub, "bob", room=room, sources=sources)
        try:
            if variant == "share_request_required":
                status, _, _, body = hub.request("PATCH", f"/v1/rooms/{room}", {"shareRequestRequired": True})
                assert status == 200 and body["shareRequestRequired"] is True
                for c in (host, bob):
                    ev = await c.expect("share_policy_changed")
                    assert ev["sharePolicy"]["shareRequestRequired"] is True and ev["by"] == "admin"
            else:
                assert "screen_share" not in bob.snapshot["participant"]["permissions"]["sources"]

            await bob.refused("publish", "not_allowed", source="screen_share")

            rid = (await bob.request("request_share"))["requestId"]
            asked = await host.expect("share_requested")
            assert asked["request"]["id"] == rid and asked["request"]["participantId"] == bob.participant_id
            await bob.refused("request_share", "request_pending")
            # Only moderators answer.
            await bob.refused("answer_share_request", "not_allowed", requestId=rid, grant=True)
            await host.request("answer_share_request", requestId=rid, grant=True)

            for c in (bob, host):
                res = await c.expect("share_request_resolved")
                assert res["request"]["id"] == rid and res["outcome"] == "granted"
                assert res["by"] == host.participant_id
                perm = await c.expect("permissions_changed", by_participant(bob.participant_id))
                assert perm["permissions"]["shareGranted"] is True
                assert "screen_share" in perm["permissions"]["sources"]

            share = (await bob.request("publish", source="screen_share"))["share"]
            await host.expect("share_started", by_share(share["id"]))

            await host.request("set_permission", participantId=bob.participant_id, source="screen_share",
                               granted=False)
            for c in (host, bob):
                st = await c.expect("share_stopped", by_share(share["id"]))
                assert st["reason"] == "permission_revoked" and st["by"] == host.participant_id
                await c.expect("track_unpublished", lambda m: m["trackId"] == share["trackId"])
            perm = await bob.expect("permissions_changed")
            assert perm["permissions"]["shareGranted"] is False
            assert "screen_share" not in perm["permissions"]["sources"]
            await bob.refused("publish", "not_allowed", source="screen_share")
        finally:
            await close_all(host, bob)
    run(go())


def test_zoom_style_lock_multi_viewer_pause_resume(hub):
    room = "zoom"

    async def go():
        host = await joined(hub, "host", room=room, role="host")
        p1 = await joined(hub, "p1", room=room)
        p2 = await joined(hub, "p2", room=room)
        viewer = await joined(hub, "viewer", room=room, role="viewer", autoSubscribe=False)
        everyone = (host, p1, p2, viewer)
        try:
            assert (await host.request("set_share_lock", locked=True)) == {"locked": True}
            for c in everyone:
                ev = await c.expect("share_lock_changed")
                assert ev["locked"] is True and ev["by"] == host.participant_id
            await p1.refused("publish", "share_locked", source="screen_share")
            await host.request("set_share_lock", locked=False)
            for c in everyone:
                assert (await c.expect("share_lock_changed"))["locked"] is False

            # Only hosts change the policy.
            await p1.refused("set_share_policy", "not_allowed", shareMode="multi")
            res = await host.request("set_share_policy", shareMode="multi", maxConcurrentShares=2)
            assert res["sharePolicy"]["shareMode"] == "multi" and res["sharePolicy"]["maxConcurrentShares"] == 2
            for c in everyone:
                ev = await c.expect("share_policy_changed")
                assert ev["sharePolicy"] == res["sharePolicy"]

            s1 = await p1.request("publish", source="screen_share")
            s2 = await p2.request("publish", source="screen_share")
            seen = {(await viewer.expect("share_started"))["share"]["id"] for _ in range(2)}
            assert seen == {s1["share"]["id"], s2["share"]["id"]}

            # The viewer chose not to auto-subscribe: it picks one share, at low quality.
            assert viewer.snapshot["subscriptions"] == []
            await viewer.refused("publish", "not_allowed", source="screen_share")
            await viewer.refused("request_share", "not_allowed")
            sub = await viewer.request("subscribe", trackId=s2["track"]["id"], quality="low")
            assert sub == {"trackId": s2["track"]["id"], "quality": "low"}

            sid = s2["share"]["id"]
            await p1.refused("pause_share", "not_allowed", shareId=sid)
            await p2.request("pause_share", shareId=sid)
            ev = await viewer.expect("share_paused", by_share(sid))
            assert ev["share"]["state"] == "paused"
            await p2.request("resume_share", shareId=sid)
            ev = await viewer.expect("share_resumed", by_share(sid))
            assert ev["share"]["state"] == "started"

            # The viewer's choice survives in its state: unsubscribing succeeds once, then is refused.
            assert await viewer.request("unsubscribe", trackId=s2["track"]["id"]) == {"trackId": s2["track"]["id"]}
            await viewer.refused("unsubscribe", "track_not_found", trackId=s2["track"]["id"])
            # A stopped share's track is gone: a late subscriber hears track_not_found (publisher_left is
            # kept for tracks whose publisher left the room).
            await p2.request("stop_share", shareId=sid)
            await viewer.expect("share_stopped", by_share(sid))
            await viewer.refused("subscribe", "track_not_found", trackId=s2["track"]["id"])
        finally:
            await close_all(*everyone)
    run(go())


# -- share arbitration -----------------------------------------------------------------------------

def test_grab_mode_preempts(hub):
    create_room(hub, name="grab", shareMode="grab")

    async def go():
        a = await joined(hub, "a", room="grab")
        b = await joined(hub, "b", room="grab")
        try:
            first = await a.request("publish", source="screen_share")
            await b.expect("share_started")
            second = await b.request("publish", source="screen_share")
            for c in (a, b):
                st = await c.expect("share_stopped", by_share(first["share"]["id"]))
                assert st["reason"] == "preempted" and st["by"] == b.participant_id
                tu = await c.expect("track_unpublished", lambda m: m["trackId"] == first["track"]["id"])
                assert tu["reason"] == "preempted"
            await a.expect("share_started", by_share(second["share"]["id"]))
            await b.no_event("share_stopped", by_share(second["share"]["id"]))
        finally:
            await close_all(a, b)
    run(go())


def test_concurrency_limits(hub):
    create_room(hub, name="multi2", shareMode="multi", maxConcurrentShares=2)
    create_room(hub, name="single1")

    async def go():
        a, b, c = [await joined(hub, n, room="multi2") for n in ("a", "b", "c")]
        x, y = [await joined(hub, n, room="single1") for n in ("x", "y")]
        try:
            await a.request("publish", source="screen_share")
            await b.request("publish", source="screen_share")
            await c.refused("publish", "too_many_shares", source="screen_share")
            await a.refused("publish", "already_published", source="screen_share")
            # The refused share left nothing behind.
            await a.no_event("share_started", lambda m: m["share"]["participantId"] == c.participant_id)

            await x.request("publish", source="screen_share")
            await y.refused("publish", "share_in_progress", source="screen_share")
            # A camera is not a share.
            await y.request("publish", source="camera")
            await y.refused("publish", "already_published", source="camera")
            await y.refused("publish", "no_active_share", source="screen_share_audio")
        finally:
            await close_all(a, b, c, x, y)
    run(go())


def test_lock_stops_participant_share_but_not_cohost(hub):
    create_room(hub, name="lockstop", shareMode="multi", maxConcurrentShares=2)

    async def go():
        host = await joined(hub, "host", room="lockstop", role="host")
        co = await joined(hub, "co", room="lockstop", role="cohost")
        p = await joined(hub, "p", room="lockstop")
        try:
            ps = (await p.request("publish", source="screen_share"))["share"]
            cs = (await co.request("publish", source="screen_share"))["share"]
            # A cohost moderates but does not lock.
            await co.refused("set_share_lock", "not_allowed", locked=True)
            await host.request("set_share_lock", locked=True)
            for c in (host, co, p):
                await c.expect("share_lock_changed")
                st = await c.expect("share_stopped", by_share(ps["id"]))
                assert st["reason"] == "locked" and st["by"] == host.participant_id
            await host.no_event("share_stopped", by_share(cs["id"]))
            await p.refused("publish", "share_locked", source="screen_share")
            # The cohost's share runs on; it stops it itself.
            await co.request("stop_share", shareId=cs["id"])
            st = await host.expect("share_stopped", by_share(cs["id"]))
            assert st["reason"] == "user_stopped"
        finally:
            await close_all(host, co, p)
    run(go())


# -- presence --------------------------------------------------------------------------------------

def test_sharer_leaving_stops_share_with_publisher_left(hub):
    async def go():
        a = await joined(hub, "a", room="leaver")
        b = await joined(hub, "b", room="leaver")
        try:
            share = (await a.request("publish", source="screen_share"))["share"]
            await b.expect("share_started")
            assert await a.leave() == 4100
            st = await b.expect("share_stopped", by_share(share["id"]))
            assert st["reason"] == "publisher_left"
            await b.expect("track_unpublished", lambda m: m["trackId"] == share["trackId"])
            left = await b.expect("participant_left")
            assert left["participantId"] == a.participant_id and left["reason"] == "left"
            # The order is share, track, presence.
            assert b.index_of(st) < b.index_of(left)
        finally:
            await close_all(a, b)
    run(go())


def test_leave_is_answered_before_the_close(hub):
    async def go():
        a = await joined(hub, "a", room="leave-answer")
        try:
            assert await a.request("leave") == {}
            assert (await a.wait_closed())[0] == 4100
        finally:
            await close_all(a)
    run(go())


def test_host_removes_participant(hub):
    async def go():
        host = await joined(hub, "host", room="remove", role="host")
        co = await joined(hub, "co", room="remove", role="cohost")
        p = await joined(hub, "p", room="remove")
        try:
            share = (await p.request("publish", source="screen_share"))["share"]
            await p.refused("remove_participant", "not_allowed", participantId=host.participant_id)
            await co.refused("remove_participant", "not_allowed", participantId=host.participant_id)
            await host.refused("remove_participant", "participant_not_found", participantId="pa_nobody")
            await host.request("remove_participant", participantId=p.participant_id)

            left = await p.expect("left")
            assert left["reason"] == "removed"
            assert (await p.wait_closed())[0] == 4102
            for c in (host, co):
                st = await c.expect("share_stopped", by_share(share["id"]))
                assert st["reason"] == "moderated"
                ev = await c.expect("participant_left")
                assert ev["participantId"] == p.participant_id and ev["reason"] == "removed"
            # A new participant sees the room without p.
            q = await joined(hub, "q", room="remove")
            assert {x["identity"] for x in q.snapshot["participants"]} == {"host", "co"}
            assert q.snapshot["shares"] == []
            await q.close()
        finally:
            await close_all(host, co, p)
    run(go())


def test_removed_participants_share_stop_names_the_host(hub):
    async def go():
        host = await joined(hub, "host", room="remove-by", role="host")
        p = await joined(hub, "p", room="remove-by")
        try:
            share = (await p.request("publish", source="screen_share"))["share"]
            await host.request("remove_participant", participantId=p.participant_id)
            st = await host.expect("share_stopped", by_share(share["id"]))
            assert st["by"] == host.participant_id
        finally:
            await close_all(host, p)
    run(go())


def test_end_room_closes_everyone_with_left_room_ended(hub):
    async def go():
        host = await joined(hub, "host", room="ending", role="host")
        co = await joined(hub, "co", room="ending", role="cohost")
        p = await joined(hub, "p", room="ending")
        try:
            await p.request("publish", source="screen_share")
            await co.refused("end_room", "not_allowed")
            await p.refused("end_room", "not_allowed")
            # Not awaiting the answer: see test_end_room_is_answered_before_the_close.
            await host.send_json({"type": "end_room", "id": "end"})
            for c in (host, co, p):
                left = await c.expect("left")
                assert left["reason"] == "room_ended"
                assert (await c.wait_closed())[0] == 4103
        finally:
            await close_all(host, co, p)
    run(go())


def test_end_room_announces_room_ended(hub):
    async def go():
        host = await joined(hub, "host", room="ending2", role="host")
        p = await joined(hub, "p", room="ending2")
        try:
            await host.send_json({"type": "end_room", "id": "end"})
            for c in (host, p):
                ev = await c.expect("room_ended")
                assert ev["by"] == host.participant_id
                left = await c.expect("left")
                assert c.index_of(ev) < c.index_of(left)
        finally:
            await close_all(host, p)
    run(go())


def test_end_room_is_answered_before_the_close(hub):
    async def go():
        host = await joined(hub, "host", room="ending3", role="host")
        try:
            assert await host.request("end_room") == {}
            assert (await host.wait_closed())[0] == 4103
        finally:
            await close_all(host)
    run(go())


def test_second_join_replaces_the_first(hub):
    async def go():
        old = await joined(hub, "alice", room="replace")
        bob = await joined(hub, "bob", room="replace")
        try:
            share = (await old.request("publish", source="screen_share"))["share"]
            await bob.expect("share_started")
            new = await joined(hub, "alice", room="replace")
            assert new.participant_id != old.participant_id
            left = await old.expect("left")
            assert left["reason"] == "replaced"
            assert (await old.wait_closed())[0] == 4101

            gone = await bob.expect("participant_left")
            assert gone["participantId"] == old.participant_id and gone["reason"] == "replaced"
            came = await bob.expect("participant_joined")
            assert came["participant"]["id"] == new.participant_id and came["participant"]["identity"] == "alice"
            assert bob.index_of(gone) < bob.index_of(came)
            st = await bob.expect("share_stopped", by_share(share["id"]))
            assert st["reason"] == "publisher_left"
            # The new session starts clean and sees bob.
            assert new.snapshot["shares"] == [] and new.snapshot["participant"]["tracks"] == []
            assert [p["identity"] for p in new.snapshot["participants"]] == ["bob"]
            await new.close()
        finally:
            await close_all(old, bob)
    run(go())


def test_hidden_participant_is_not_announced(hub):
    async def go():
        alice = await joined(hub, "alice", room="hidden")
        token = mint_jwt(hub, "recorder", {"room": "hidden", "roomJoin": True, "hidden": True, "canSubscribe": True})
        rec = await joined(hub, "recorder", room="hidden", token=token)
        try:
            assert [p["identity"] for p in rec.snapshot["participants"]] == ["alice"]
            await alice.no_event("participant_joined")
            # The recorder hears everything but shows nowhere.
            share = (await alice.request("publish", source="screen_share"))["share"]
            await rec.expect("share_started", by_share(share["id"]))
            await rec.refused("publish", "not_allowed", source="camera")
            await rec.refused("request_share", "not_allowed")
            bob = await joined(hub, "bob", room="hidden")
            assert [p["identity"] for p in bob.snapshot["participants"]] == ["alice"]
            await rec.expect("participant_joined", lambda m: m["participant"]["identity"] == "bob")
            # The recorder leaves first, then bob: alice hears of bob only.
            assert await rec.leave() == 4100
            assert await bob.leave() == 4100
            gone = await alice.expect("participant_left")
            assert gone["participantId"] == bob.participant_id and gone["reason"] == "left"
            await alice.no_event("participant_left")
        finally:
            await close_all(alice)
    run(go())


# -- resume ----------------------------------------------------------------------------------------

def test_resume_within_the_window(hub):
    async def go():
        alice = await joined(hub, "alice", room="resume")
        bob = await joined(hub, "bob", room="resume")
        try:
            share = (await alice.request("publish", source="screen_share"))["share"]
            await bob.expect("share_started")
            pid, token = alice.participant_id, alice.resume_token
            sockets = await asyncio.to_thread(hub.metric, "atrium_websocket_connections")
            alice.abort()
            await alice.wait_closed()
            # Something happens once the server has seen alice's socket go.
            await asyncio.to_thread(hub.wait_metric, "atrium_websocket_connections", lambda n: n < sockets)
            cam = (await bob.request("publish", source="camera"))["track"]

            back = await connect(hub, "alice", room="resume")
            snap = await back.resume(token)
            assert snap["participant"]["id"] == pid
            assert [s["id"] for s in snap["shares"]] == [share["id"]]
            bob_view = next(p for p in snap["participants"] if p["identity"] == "bob")
            assert [t["id"] for t in bob_view["tracks"]] == [cam["id"]]
            # The session is the old one: alice can stop her share, bob sees it.
            await back.request("stop_share", shareId=share["id"])
            st = await bob.expect("share_stopped", by_share(share["id"]))
            assert st["reason"] == "user_stopped"
            await back.close()
        finally:
            await close_all(alice, bob)
    run(go())


def test_resume_window_expiry(tmpdir_path):
    s = Server(os.path.join(tmpdir_path, "data"), "--dev", "--store", "memory", "--auto-create-rooms", "any",
               "--resume-window", "1").start()
    try:
        async def go():
            alice = await joined(s, "alice", room="expiry")
            bob = await joined(s, "bob", room="expiry")
            try:
                share = (await alice.request("publish", source="screen_share"))["share"]
                token = alice.resume_token
                alice.abort()
                st = await bob.expect("share_stopped", by_share(share["id"]), timeout=5)
                assert st["reason"] == "disconnected"
                left = await bob.expect("participant_left", timeout=5)
                assert left["participantId"] == alice.participant_id and left["reason"] == "disconnected"
                late = await connect(s, "alice", room="expiry")
                await late.refused("resume", "resume_failed", protocol=1, resumeToken=token)
                # A failed resume leaves the connection free to join afresh.
                snap = await late.join()
                assert snap["participant"]["id"] != alice.participant_id
                await late.close()
            finally:
                await close_all(alice, bob)
        run(go())
        assert s.healthy()
    finally:
        s.stop()


# -- admission -------------------------------------------------------------------------------------

def test_room_full(hub):
    create_room(hub, name="tiny", maxParticipants=1)

    async def go():
        a = await joined(hub, "a", room="tiny")
        b = await connect(hub, "b", room="tiny")
        try:
            await b.refused("join", "room_full", protocol=1)
            # The refusal changed nothing: a is alone and undisturbed, b's socket is still usable.
            await a.no_event("participant_joined")
            assert "pong" in await b.request("ping")
            # The same identity may still take its own seat (it replaces itself).
            a2 = await joined(hub, "a", room="tiny")
            assert (await a.expect("left"))["reason"] == "replaced"
            await a2.close()
        finally:
            await close_all(a, b)
    run(go())


def test_auto_create_off_refuses_unknown_rooms(tmpdir_path):
    s = Server(os.path.join(tmpdir_path, "data"), "--dev", "--store", "memory", "--auto-create-rooms", "off").start()
    try:
        async def go():
            # Even a token with roomCreate may not create a room by joining it.
            c = await connect(s, "alice", token=mint(s, "nowhere", "alice", admin=True))
            try:
                await c.refused("join", "room_not_found", protocol=1)
                status, _, _, _ = s.request("POST", "/v1/rooms", {"name": "nowhere"})
                assert status == 201
                snap = await c.join()
                assert snap["room"]["name"] == "nowhere"
            finally:
                await c.close()
        run(go())
    finally:
        s.stop()


def test_unsupported_protocol_version(hub):
    async def go():
        c = await connect(hub, "alice", room="proto")
        try:
            e = await c.refused("join", "unsupported_protocol", protocol=2)
            assert "1" in e.message
            e = await c.refused("join", "invalid_field")
            assert e.field == "protocol"
            e = await c.refused("join", "invalid_field", protocol="1")
            assert e.field == "protocol"
            snap = await c.join(protocol=1)
            assert snap["protocol"] == 1
        finally:
            await c.close()
    run(go())
