"""Data beside media over signaling against the real server (docs/protocol.md `send_data`,
`set_attributes`; docs/admin-api.md chat and data): messages to everyone and to one, the chat history a
joiner gets, the grant and a host's live revoke, the per-participant limit answered with an error and
never a cut, attributes set and cleared, the admin API's list and post, and `chat_message` webhooks
only to the endpoints that ask for them."""
import asyncio
import json
import os

import pytest

from conftest import Server, stopped_cleanly
from signal_client import close_all, joined, mint_jwt, run
from webhook_receiver import Receiver

SECRET = "whsec_data_0123456789abcdef"


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    d = tmp_path_factory.mktemp("data")
    s = Server(os.path.join(d, "data"), "--dev", "--store", "memory", "--auto-create-rooms", "any",
               "--udp-port", "-1").start()
    yield s
    stopped_cleanly(s)


def grants(room, role="participant", **extra):
    return {"room": room, "roomJoin": True, "canPublish": True, "canSubscribe": True, "role": role, **extra}


def test_messages_to_everyone_and_to_one_and_a_joiner_gets_the_chat_history(hub):
    async def go():
        alice = await joined(hub, "alice", room="chat1", role="host")
        bob = await joined(hub, "bob", room="chat1")
        carol = await joined(hub, "carol", room="chat1")
        dave = None
        try:
            sent = await alice.request("send_data", topic="chat", payload="hello 👋 all")
            assert sent["recipients"] == 2 and sent["messageId"].startswith("dm_")
            for c in (bob, carol):
                m = await c.expect("data")
                assert (m["from"], m["topic"], m["payload"], m["to"]) == (
                    alice.participant_id, "chat", "hello 👋 all", None)
                assert m["messageId"] == sent["messageId"] and m["at"] == sent["at"]
            # To one: bob gets it, carol does not.
            one = await alice.request("send_data", topic="reaction", payload='{"emoji":"+1"}',
                                      to=[bob.participant_id])
            assert one["recipients"] == 1
            m = await bob.expect("data")
            assert m["topic"] == "reaction" and m["to"] == [bob.participant_id]
            await carol.no_event("data")
            await alice.no_event("data")
            # Ordered: ten messages arrive in the order sent.
            for i in range(10):
                await bob.request("send_data", topic="chat", payload=f"n{i}")
            got = [(await alice.expect("data"))["payload"] for _ in range(10)]
            assert got == [f"n{i}" for i in range(10)]
            # The joiner's snapshot holds the chat to everyone (not the reaction), oldest first.
            dave = await joined(hub, "dave", room="chat1")
            assert [m["payload"] for m in dave.snapshot["chat"]] == ["hello 👋 all"] + [f"n{i}" for i in range(10)]
            # The admin API lists the same, and posts as the server.
            room_id = dave.snapshot["room"]["id"]
            status, _, _, listed = hub.request("GET", f"/v1/rooms/{room_id}/chat")
            assert status == 200 and [m["payload"] for m in listed["messages"]] == [
                m["payload"] for m in dave.snapshot["chat"]]
            status, _, _, posted = hub.request("POST", f"/v1/rooms/{room_id}/data",
                                               {"topic": "chat", "payload": "starting in 5"})
            assert status == 200 and posted["recipients"] == 4, posted
            for c in (alice, bob, carol, dave):
                m = await c.expect("data", lambda m: m["payload"] == "starting in 5")
                assert m["from"] is None
            status, _, _, err = hub.request("POST", f"/v1/rooms/{room_id}/data", {"topic": "", "payload": "x"})
            assert status == 422 and err["error"]["code"] == "invalid_field"
            status, _, _, err = hub.request("POST", "/v1/rooms/nosuchroom/data", {"topic": "t", "payload": "x"})
            assert status == 404 and err["error"]["code"] == "room_not_found"
        finally:
            await close_all(*[c for c in (alice, bob, carol, dave) if c])

    run(go())


def test_without_the_grant_or_past_the_limit_an_error_and_the_connection_stays(hub):
    async def go():
        alice = await joined(hub, "alice", room="chat2", role="host")
        quiet = await joined(hub, "quiet", room="chat2",
                             token=mint_jwt(hub, "quiet", grants("chat2", canPublishData=False)))
        try:
            assert quiet.snapshot["participant"]["permissions"]["canPublishData"] is False
            await quiet.refused("send_data", "data_not_allowed", topic="chat", payload="hi")
            # 80 at once: the burst of 60 goes, the rest is refused with the documented error.
            answers = await asyncio.gather(*[
                alice.request("send_data", topic="pointer", payload="x") for _ in range(80)],
                return_exceptions=True)
            refused = [a for a in answers if not isinstance(a, dict)]
            assert refused and all(getattr(e, "code", None) == "data_rate_limited" for e in refused), refused
            assert len(answers) - len(refused) >= 60
            assert not alice.is_closed and not quiet.is_closed
            assert isinstance(await alice.request("ping"), dict)
            # The rest of the protocol is untouched by the data limit.
            await alice.request("set_attributes", attributes={"hand": "raised"})
        finally:
            await close_all(alice, quiet)

    run(go())


def test_a_revoked_permission_takes_effect_at_once_and_attributes_are_in_a_later_snapshot(hub):
    async def go():
        host = await joined(hub, "host", room="chat3", role="host")
        bob = await joined(hub, "bob", room="chat3")
        carol = None
        try:
            await bob.request("send_data", topic="chat", payload="before")
            await host.request("set_permission", participantId=bob.participant_id, source="data", granted=False)
            changed = await bob.expect("permissions_changed")
            assert changed["permissions"]["canPublishData"] is False
            await bob.refused("send_data", "data_not_allowed", topic="chat", payload="after")
            # Attributes: bob raises his hand, the host sees it and lowers it.
            data = await bob.request("set_attributes", attributes={"hand": "raised", "status": "away"})
            assert data["attributes"] == {"hand": "raised", "status": "away"}
            seen = await host.expect("attributes_changed")
            assert seen["participantId"] == bob.participant_id and seen["attributes"]["hand"] == "raised"
            await bob.refused("set_attributes", "not_allowed", participantId=host.participant_id,
                              attributes={"hand": None})
            await host.request("set_attributes", participantId=bob.participant_id, attributes={"hand": None})
            lowered = await bob.expect("attributes_changed", lambda m: "hand" not in m["attributes"])
            assert lowered["by"] == host.participant_id
            carol = await joined(hub, "carol", room="chat3")
            b = next(p for p in carol.snapshot["participants"] if p["id"] == bob.participant_id)
            assert b["attributes"] == {"status": "away"} and b["permissions"]["canPublishData"] is False
            # The admin API shows and changes both.
            room_id = carol.snapshot["room"]["id"]
            status, _, _, p = hub.request("GET", f"/v1/rooms/{room_id}/participants/bob")
            assert status == 200 and p["attributes"] == {"status": "away"}
            status, _, _, p = hub.request("PATCH", f"/v1/rooms/{room_id}/participants/bob",
                                          {"canPublishData": True, "attributes": {"status": None, "badge": "speaker"}})
            assert status == 200 and p["attributes"] == {"badge": "speaker"}, p
            assert p["permissions"]["canPublishData"] is True
            await bob.request("send_data", topic="chat", payload="back")
            status, _, _, err = hub.request("PATCH", f"/v1/rooms/{room_id}/participants/bob",
                                            {"attributes": {"k": 7}})
            assert status == 422 and err["error"]["code"] == "invalid_field"
        finally:
            await close_all(*[c for c in (host, bob, carol) if c])

    run(go())


def test_the_chat_history_setting_round_trips_and_bounds_what_joiners_get(hub):
    status, _, _, room = hub.request("POST", "/v1/rooms", {"name": "chat4", "chatHistory": 2})
    assert status == 201 and room["chatHistory"] == 2
    status, _, _, err = hub.request("PATCH", f"/v1/rooms/{room['id']}", {"chatHistory": 1001})
    assert status == 422 and err["error"]["code"] == "invalid_field"

    async def go():
        alice = await joined(hub, "alice", room="chat4")
        bob = None
        try:
            for i in range(4):
                await alice.request("send_data", topic="chat", payload=f"m{i}")
            bob = await joined(hub, "bob", room="chat4")
            assert [m["payload"] for m in bob.snapshot["chat"]] == ["m2", "m3"]
        finally:
            await close_all(*[c for c in (alice, bob) if c])

    run(go())


def test_chat_webhooks_go_only_to_the_endpoints_that_ask(tmp_path):
    wants = Receiver(SECRET).start()
    plain = Receiver(SECRET).start()
    hooks = json.dumps([{"url": wants.url, "secret": SECRET, "chat": True}, {"url": plain.url, "secret": SECRET}])
    server = Server(str(tmp_path / "data"), "--dev", "--auto-create-rooms", "any", "--udp-port", "-1",
                    "--webhooks", hooks).start()
    try:
        async def go():
            alice = await joined(server, "alice", room="hooks")
            try:
                await alice.request("send_data", topic="chat", payload="minutes: ship it")
                await alice.request("send_data", topic="reaction", payload="+1")
                await alice.request("publish", source="camera")
            finally:
                await close_all(alice)

        run(go())
        events = wants.wait_for(lambda ev: any(e["type"] == "track_published" for e in ev))
        chats = [e for e in events if e["type"] == "chat_message"]
        assert len(chats) == 1 and chats[0]["data"]["message"]["payload"] == "minutes: ship it"
        other = plain.wait_for(lambda ev: any(e["type"] == "track_published" for e in ev))
        assert not [e for e in other if e["type"] == "chat_message"]
        assert not [e for e in events + other if e["type"] in ("data", "attributes_changed")]
    finally:
        stopped_cleanly(server)
        wants.stop()
        plain.stop()
