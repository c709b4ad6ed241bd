"""Bad input on `/v1/signal`: each is answered with its documented error or close code, the server keeps
serving, and the room stays consistent for everyone else in it."""
import asyncio
import json
import os
import time

import pytest
import websockets

from conftest import Server, stopped_cleanly
from signal_client import Closed, SignalError, close_all, connect, joined, run


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    s = Server(os.path.join(d, "data"), "--dev", "--store", "memory", "--auto-create-rooms", "any").start()
    yield s
    stopped_cleanly(s)


async def room_still_works(server, room, *observers):
    """A newcomer publishes a camera; every observer sees it, and the newcomer's snapshot matches what
    the observers know of each other."""
    n = await joined(server, f"probe-{time.monotonic_ns()}", room=room)
    try:
        track = (await n.request("publish", source="camera"))["track"]
        for o in observers:
            ev = await o.expect("track_published", lambda m: m["track"]["id"] == track["id"])
            assert ev["track"]["participantId"] == n.participant_id
        seen = {p["id"] for p in n.snapshot["participants"]}
        for o in observers:
            assert o.participant_id in seen
        assert await n.leave() == 4100
        for o in observers:
            await o.expect("participant_left", lambda m: m["participantId"] == n.participant_id)
    finally:
        await n.close()


def test_malformed_json_keeps_the_connection(hub):
    async def go():
        a = await joined(hub, "a", room="bad-json")
        b = await joined(hub, "b", room="bad-json")
        try:
            for text in ['{"type": "ping"', "{bad", "", "nul", '{"type":"ping","id":1}}']:
                await a.send_raw(text)
                err = await a.expect_error("malformed_json")
                assert "id" not in err
            assert "pong" in await a.request("ping")
            await a.request("publish", source="camera")
            await b.expect("track_published")
            await room_still_works(hub, "bad-json", a, b)
        finally:
            await close_all(a, b)
    run(go())


@pytest.mark.parametrize("text", ["[1, 2]", '"publish"', "42", "null", "true", "{}", '{"type": 5}',
                                  '{"type": null}', '{"id": 7}', '{"type": ["join"]}'])
def test_not_an_object_or_no_string_type(hub, text):
    async def go():
        a = await joined(hub, "a", room="bad-shape")
        b = await joined(hub, "b", room="bad-shape")
        try:
            await a.send_raw(text)
            await a.expect_error("bad_request")
            assert "pong" in await a.request("ping")
            await room_still_works(hub, "bad-shape", a, b)
        finally:
            await close_all(a, b)
    run(go())


def test_malformed_json_before_authentication_closes_4001(hub):
    async def go():
        async with websockets.connect(f"ws://127.0.0.1:{hub.port}/v1/signal") as ws:
            await ws.send("{bad")
            err = json.loads(await ws.recv())
            assert err["type"] == "error" and err["error"]["code"] == "malformed_json"
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await ws.recv()
            assert closed.value.rcvd.code == 4001
    run(go())
    assert hub.healthy()


def test_unknown_types(hub):
    async def go():
        fresh = await connect(hub, "fresh", room="bad-type")
        a = await joined(hub, "a", room="bad-type")
        b = await joined(hub, "b", room="bad-type")
        try:
            for t in ["nope", "JOIN", "Publish", "", "auth", "welcome", "result", "x" * 200]:
                for c in (fresh, a):
                    e = await c.refused(t, "bad_request")
                    assert e.reply["id"] is not None
            # Nothing was broadcast.
            await b.no_event("participant_updated")
            assert b.events == []
            await fresh.join()
            await room_still_works(hub, "bad-type", a, b, fresh)
        finally:
            await close_all(fresh, a, b)
    run(go())


INVALID_FIELDS = [
    ("publish", {}, "source"),
    ("publish", {"source": "webcam"}, "source"),
    ("publish", {"source": 7}, "source"),
    ("publish", {"source": None}, "source"),
    ("publish", {"source": "camera", "width": -1}, "width"),
    ("publish", {"source": "camera", "width": "640"}, "width"),
    ("publish", {"source": "camera", "height": 1.5}, "height"),
    ("publish", {"source": "camera", "height": 99999}, "height"),
    ("publish", {"source": "camera", "kind": "audio"}, "kind"),
    ("publish", {"source": "camera", "name": 3}, "name"),
    ("publish", {"source": "camera", "muted": "no"}, "muted"),
    ("publish", {"source": "camera", "layers": 5}, "layers"),
    ("publish", {"source": "camera", "layers": [1]}, "layers"),
    ("publish", {"source": "camera", "layers": [{"rid": "h", "width": 1, "height": 1}] * 5}, "layers"),
    ("publish", {"source": "camera", "layers": [{"width": 1, "height": 1}]}, "rid"),
    ("unpublish", {}, "trackId"),
    ("unpublish", {"trackId": 5}, "trackId"),
    ("unpublish", {"trackId": "tr_x", "reason": "because"}, "reason"),
    ("mute", {"trackId": "tr_x"}, "muted"),
    ("mute", {"trackId": "tr_x", "muted": "yes"}, "muted"),
    ("mute", {"muted": True}, "trackId"),
    ("subscribe", {}, "trackId"),
    ("subscribe", {"trackId": "tr_x", "quality": "ultra"}, "quality"),
    ("unsubscribe", {"trackId": {}}, "trackId"),
    ("set_viewport", {"width": 1, "height": 1}, "trackId"),
    ("set_viewport", {"trackId": "tr_x", "height": 1}, "width"),
    ("set_viewport", {"trackId": "tr_x", "width": -1, "height": 1}, "width"),
    ("set_viewport", {"trackId": "tr_x", "width": 1, "height": 16385}, "height"),
    ("set_viewport", {"trackId": "tr_x", "width": 1.5, "height": 1}, "width"),
    ("set_viewport", {"trackId": "tr_x", "width": "640", "height": 1}, "width"),
    ("pause_share", {}, "shareId"),
    ("resume_share", {"shareId": 1}, "shareId"),
    ("stop_share", {"shareId": "sh_x", "reason": 1}, "reason"),
    ("answer_share_request", {"requestId": "rq_x"}, "grant"),
    ("answer_share_request", {"grant": True}, "requestId"),
    ("set_share_lock", {}, "locked"),
    ("set_share_lock", {"locked": 1}, "locked"),
    ("set_share_policy", {"shareMode": "all"}, "shareMode"),
    ("set_share_policy", {"maxConcurrentShares": 0}, "maxConcurrentShares"),
    ("set_share_policy", {"maxConcurrentShares": 17}, "maxConcurrentShares"),
    ("set_share_policy", {"whoCanShare": "nobody"}, "whoCanShare"),
    ("set_share_policy", {"shareRequestRequired": "true"}, "shareRequestRequired"),
    ("set_share_policy", {"bogus": 1}, "bogus"),
    ("set_permission", {"participantId": "pa_x"}, "granted"),
    ("set_permission", {"participantId": "pa_x", "granted": True, "source": "screen"}, "source"),
    ("set_permission", {"granted": True}, "participantId"),
    ("mute_participant", {}, "trackId"),
    ("remove_participant", {"participantId": None}, "participantId"),
    ("update", {"name": 5}, "name"),
    ("update", {"metadata": "x" * (16 * 1024 + 1)}, "metadata"),
]


def test_missing_and_mistyped_fields(hub):
    async def go():
        host = await joined(hub, "host", room="bad-fields", role="host")
        other = await joined(hub, "other", room="bad-fields")
        try:
            before = json.dumps(host.snapshot["room"], sort_keys=True)
            failures = []
            for type_, fields, field in INVALID_FIELDS:
                try:
                    data = await host.request(type_, **fields)
                    failures.append(f"{type_} {fields}: succeeded with {data}")
                except SignalError as e:
                    if e.code != "invalid_field" or e.field != field:
                        failures.append(f"{type_} {fields}: {e.code} {e.message!r}, expected invalid_field {field}")
            assert not failures, "\n".join(failures)
            # None of it changed anything anyone can see.
            await other.no_event("share_policy_changed")
            assert other.events == [], other.events
            late = await joined(hub, "late", room="bad-fields")
            assert json.dumps(late.snapshot["room"], sort_keys=True) == before
            assert all(p["tracks"] == [] for p in late.snapshot["participants"])
            await late.close()
            await room_still_works(hub, "bad-fields", host, other)
        finally:
            await close_all(host, other)
    run(go())


def test_out_of_order_messages(hub):
    requests = ["leave", "update", "publish", "unpublish", "mute", "subscribe", "unsubscribe", "set_viewport",
                "pause_share",
                "resume_share", "stop_share", "request_share", "answer_share_request", "set_share_lock",
                "set_share_policy", "set_permission", "mute_participant", "remove_participant", "end_room"]

    async def go():
        b = await joined(hub, "b", room="bad-order", role="host")
        a = await connect(hub, "a", room="bad-order")
        try:
            for t in requests:
                await a.refused(t, "not_joined", source="camera")
            await a.join()
            await a.refused("join", "already_joined", protocol=1)
            await a.refused("resume", "already_joined", protocol=1, resumeToken=a.resume_token)
            # b saw a join once and nothing else from all that.
            await b.expect("participant_joined")
            await b.no_event("participant_joined")
            await room_still_works(hub, "bad-order", a, b)
        finally:
            await close_all(a, b)
    run(go())


def test_resume_with_a_bad_token(hub):
    async def go():
        a = await joined(hub, "a", room="bad-resume")
        b = await joined(hub, "b", room="bad-resume")
        try:
            token = a.resume_token
            a.abort()
            await a.wait_closed()
            # Wrong identity, unknown token, wrong type: refused, and the session stays resumable.
            eve = await connect(hub, "eve", room="bad-resume")
            await eve.refused("resume", "resume_failed", protocol=1, resumeToken=token)
            await eve.refused("resume", "resume_failed", protocol=1, resumeToken="x" * 32)
            e = await eve.refused("resume", "invalid_field", protocol=1, resumeToken=5)
            assert e.field == "resumeToken"
            await eve.close()
            back = await connect(hub, "a", room="bad-resume")
            assert (await back.resume(token))["participant"]["id"] == a.participant_id
            await back.close()
        finally:
            await close_all(a, b)
    run(go())


def test_resume_is_scoped_to_the_tokens_room(hub):
    async def go():
        a = await joined(hub, "a", room="scope-a")
        try:
            token = a.resume_token
            a.abort()
            await a.wait_closed()
            other = await connect(hub, "a", room="scope-b")
            try:
                await other.refused("resume", "resume_failed", protocol=1, resumeToken=token)
            finally:
                await other.close()
        finally:
            await close_all(a)
    run(go())


def test_one_megabyte_message_closes_1009(hub):
    async def go():
        a = await joined(hub, "a", room="bad-big")
        b = await joined(hub, "b", room="bad-big")
        try:
            big = json.dumps({"type": "update", "id": 1, "metadata": "x" * (1 << 20)})
            try:
                await a.send_raw(big)
            except websockets.ConnectionClosed:
                pass
            code, _ = await a.wait_closed()
            assert code == 1009
            # The update was not applied: b heard of no update, and a newcomer sees a's metadata as it was
            # (a waits in the resume window, still a participant).
            await b.no_event("participant_updated")
            late = await joined(hub, "late", room="bad-big")
            seen = next(p for p in late.snapshot["participants"] if p["id"] == a.participant_id)
            assert seen["metadata"] == "", seen
            await late.close()
            assert hub.healthy()
            await room_still_works(hub, "bad-big", b)
        finally:
            await close_all(a, b)
    run(go())


async def limited_or_answers(c, timeout=60):
    """After a flood: either the server closed `c` for it (4029), or `c` is served again once its bucket
    refills (a ping the limiter dropped is sent again)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            assert "pong" in await c.request("ping", timeout=2)
            return
        except Closed:
            assert c.close_code == 4029, (c.close_code, c.close_reason)
            return
        except AssertionError:
            assert time.monotonic() < deadline, f"{c.label}: neither closed nor answered: {c.events[-3:]}"


def test_a_thousand_messages_in_a_second(hub):
    async def go():
        a = await joined(hub, "a", room="bad-flood")
        b = await joined(hub, "b", room="bad-flood")
        try:
            # 1000 updates: 250 back to back (fewer than the server's 100 burst plus 200 drops, so it cannot
            # close us in the middle of them), then one a millisecond, yielding so that the client reads
            # what the server answers (as a real client does) and stops writing once it is closed.
            sent = 0
            try:
                for i in range(1000):
                    await a.send_json({"type": "update", "id": f"u{i}", "name": f"n{i}"})
                    sent += 1
                    if i >= 250:
                        await asyncio.sleep(0.001)
            except websockets.ConnectionClosed:
                await a.wait_closed()
            assert sent == 1000 or a.is_closed
            await a.expect_error("rate_limited")
            await limited_or_answers(a)
            # b's events of a's applied updates all came before the answer to a ping of its own.
            assert "pong" in await b.request("ping")
            answered = [m for m in a.log if m.get("type") == "result" and str(m.get("id")).startswith("u")]
            assert 0 < len(answered) < sent
            # b saw exactly the updates that were applied, in order; a's name now is the last one.
            names = [m["participant"]["name"] for m in b.events if m["type"] == "participant_updated"]
            assert names == [f"n{m['id'][1:]}" for m in answered]
            late = await joined(hub, "late", room="bad-flood")
            now = next(p for p in late.snapshot["participants"] if p["id"] == a.participant_id)
            assert now["name"] == names[-1]
            await late.close()
            assert hub.healthy()
            await room_still_works(hub, "bad-flood", b)
        finally:
            await close_all(a, b)
    run(go())


def test_half_open_connection(tmpdir_path):
    s = Server(os.path.join(tmpdir_path, "data"), "--dev", "--store", "memory", "--auto-create-rooms", "any",
               "--signal-idle-timeout", "5", "--resume-window", "1").start()
    try:
        async def go():
            b = await joined(s, "b", room="half-open")
            b.start_keepalive(1.0)
            a = await joined(s, "a", room="half-open")
            try:
                share = (await a.request("publish", source="screen_share"))["share"]
                await b.expect("share_started")
                # a goes silent and stops reading.
                a.pause_reading()
                st = await b.expect("share_stopped", lambda m: m["share"]["id"] == share["id"], timeout=60)
                assert st["reason"] == "disconnected"
                left = await b.expect("participant_left")
                assert left["participantId"] == a.participant_id and left["reason"] == "disconnected"
                # What a would have read: an idle_timeout error and a 4010 close.
                a.resume_reading()
                code, _ = await a.wait_closed(30)
                assert code == 4010
                await a.expect_error("idle_timeout", timeout=0)
                # b, which kept talking, is still there and the room works.
                assert not b.is_closed
                await room_still_works(s, "half-open", b)
            finally:
                await close_all(a, b)
        run(go(), timeout=120)
        assert s.healthy()
    finally:
        s.stop()


def test_set_viewport_needs_a_subscription(hub):
    """A viewport is for a track you are subscribed to: an unknown track is `track_not_found`, a
    track you do not receive (or your own) is `invalid_field`; a subscribed one is echoed, 0x0 clears
    it, and nobody else hears of it."""
    async def go():
        a = await joined(hub, "a", room="bad-viewport", autoSubscribe=False)
        b = await joined(hub, "b", room="bad-viewport")
        try:
            await a.refused("set_viewport", "track_not_found", trackId="tr_nope", width=640, height=360)
            mine = (await a.request("publish", source="camera"))["track"]["id"]
            theirs = (await b.request("publish", source="camera"))["track"]["id"]
            await a.expect("track_published", lambda m: m["track"]["id"] == theirs)
            for track in (mine, theirs):
                err = await a.refused("set_viewport", "invalid_field", trackId=track, width=640, height=360)
                assert "not subscribed" in err.message
            await a.request("subscribe", trackId=theirs, quality="low")
            got = await a.request("set_viewport", trackId=theirs, width=640, height=360)
            assert got == {"trackId": theirs, "width": 640, "height": 360}
            assert (await a.request("set_viewport", trackId=theirs, width=0, height=0))["width"] == 0
            await b.no_event("participant_updated")
            await room_still_works(hub, "bad-viewport", a, b)
        finally:
            await close_all(a, b)
    run(go())
