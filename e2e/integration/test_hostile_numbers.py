"""Validly signed tokens and request bodies carrying extreme numbers: each is answered with
its documented code, the process stays up, and a meeting in progress is undisturbed.

Before the fix, one token with `exp` within the leeway of INT64_MAX killed the server with an
arithmetic overflow, through `/v1/signal` and through the admin API alike."""
import asyncio
import base64
import hashlib
import hmac
import json
import os
import time

import pytest
import websockets

from conftest import Server, stopped_cleanly
from signal_client import close_all, joined, run, signal_url

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    d = tmp_path_factory.mktemp("numbers")
    s = Server(os.path.join(d, "data"), "--dev", "--store", "memory", "--auto-create-rooms", "any").start()
    yield s
    stopped_cleanly(s)


def signed(server, payload_text):
    """A token whose payload is `payload_text` verbatim (so 1e300 stays a real), signed with the dev key."""
    def b64(b):
        return base64.urlsafe_b64encode(b).rstrip(b"=")
    head = b64(b'{"alg":"HS256","typ":"JWT"}')
    body = b64(payload_text.encode())
    sig = b64(hmac.new(server.secret.encode(), head + b"." + body, hashlib.sha256).digest())
    return (head + b"." + body + b"." + sig).decode()


def payload(server, exp, nbf=None, iat=None, room="numbers", admin=False):
    grants = ('{"roomList":true,"roomAdmin":true}' if admin
              else '{"room":"%s","roomJoin":true}' % room)
    parts = ['"iss":"%s"' % server.key, '"sub":"n-%d"' % time.monotonic_ns(), '"exp":%s' % exp,
             '"grants":%s' % grants]
    if nbf is not None:
        parts.append('"nbf":%s' % nbf)
    if iat is not None:
        parts.append('"iat":%s' % iat)
    return "{" + ",".join(parts) + "}"


# (exp, nbf, iat, expected): "ok" or the documented code.
CASES = [
    (str(INT64_MAX), None, None, "ok"),
    (str(INT64_MAX - 29), None, None, "ok"),
    (str(INT64_MAX - 30), None, None, "ok"),
    (str(INT64_MAX), str(INT64_MIN), str(INT64_MAX), "ok"),
    (str(INT64_MIN), None, None, "token_expired"),
    ("-1", None, None, "token_expired"),
    (str(INT64_MAX + 1), None, None, "malformed_token"),
    (str(INT64_MIN - 1), None, None, "malformed_token"),
    ("1e300", None, None, "malformed_token"),
    ("-1e300", None, None, "malformed_token"),
    ("9.3e18", None, None, "malformed_token"),
    (str(INT64_MAX), str(INT64_MAX), None, "token_not_yet_valid"),
    (str(INT64_MAX), "1e300", None, "malformed_token"),
    (str(INT64_MAX), None, "-1e300", "malformed_token"),
]


async def meeting(server, room):
    """Two participants in a room, one publishing: the meeting the hostile clients must not disturb."""
    a = await joined(server, "host-a", room=room, role="host")
    b = await joined(server, "guest-b", room=room)
    await a.request("publish", source="camera")
    await b.expect("track_published")
    return a, b


async def still_in_progress(server, a, b):
    assert server.alive()
    assert "pong" in await a.request("ping")
    await b.request("publish", source="microphone")
    await a.expect("track_published", lambda m: m["track"]["source"] == "microphone")
    await a.no_event("participant_left")
    assert server.healthy()


@pytest.mark.parametrize("exp,nbf,iat,expected", CASES)
def test_extreme_time_claims_through_signal(hub, exp, nbf, iat, expected):
    async def go():
        room = f"numbers-{time.monotonic_ns()}"
        a, b = await meeting(hub, room)
        try:
            token = signed(hub, payload(hub, exp, nbf, iat, room=room))
            for how in ("query", "message"):
                url = signal_url(hub, token) if how == "query" else signal_url(hub)
                async with websockets.connect(url, ping_interval=None) as ws:
                    if how == "message":
                        await ws.send(json.dumps({"type": "auth", "token": token}))
                    first = json.loads(await asyncio.wait_for(ws.recv(), 5))
                    if expected == "ok":
                        assert first["type"] == "welcome", first
                        assert first["expiresAt"] == int(exp)
                    else:
                        assert first["type"] == "error" and first["error"]["code"] == expected, first
                        with pytest.raises(websockets.ConnectionClosed) as closed:
                            await asyncio.wait_for(ws.recv(), 5)
                        assert closed.value.rcvd.code == 4001
            await still_in_progress(hub, a, b)
        finally:
            await close_all(a, b)
    run(go())


@pytest.mark.parametrize("exp,nbf,iat,expected", CASES)
def test_extreme_time_claims_through_admin_api(hub, exp, nbf, iat, expected):
    async def go():
        a, b = await meeting(hub, f"numbers-admin-{time.monotonic_ns()}")
        try:
            token = signed(hub, payload(hub, exp, nbf, iat, admin=True))
            status, headers, _, body = hub.request("GET", "/v1/rooms", token=token)
            if expected == "ok":
                assert status == 200
            else:
                assert status == 401, body
                assert body["error"]["code"] == expected
                assert "invalid_token" in headers["www-authenticate"]
            await still_in_progress(hub, a, b)
        finally:
            await close_all(a, b)
    run(go())


# Numeric request fields at their extremes: refused with invalid_field naming the field.
ADMIN_BODIES = [
    ("POST", "/v1/rooms", {"name": "x1", "maxParticipants": INT64_MAX}, "maxParticipants"),
    ("POST", "/v1/rooms", {"name": "x2", "maxParticipants": INT64_MIN}, "maxParticipants"),
    ("POST", "/v1/rooms", {"name": "x3", "emptyTimeout": 1e300}, "emptyTimeout"),
    ("POST", "/v1/rooms", {"name": "x4", "emptyTimeout": -1}, "emptyTimeout"),
    ("POST", "/v1/rooms", {"name": "x5", "maxConcurrentShares": -1e300}, "maxConcurrentShares"),
    ("POST", "/v1/tokens", {"room": "numbers-admin", "identity": "t", "ttl": INT64_MAX}, "ttl"),
    ("POST", "/v1/tokens", {"room": "numbers-admin", "identity": "t", "ttl": INT64_MIN}, "ttl"),
    ("POST", "/v1/tokens", {"room": "numbers-admin", "identity": "t", "ttl": 1e300}, "ttl"),
    ("POST", "/v1/tokens", {"room": "numbers-admin", "identity": "t", "ttl": -1}, "ttl"),
]


@pytest.mark.parametrize("method,path,body,field", ADMIN_BODIES)
def test_extreme_numeric_fields_through_admin_api(hub, method, path, body, field):
    async def go():
        a, b = await meeting(hub, f"numbers-admin-{time.monotonic_ns()}")
        try:
            status, _, _, reply = hub.request(method, path, body=body)
            assert status == 422, reply
            assert reply["error"]["code"] == "invalid_field" and reply["error"]["field"] == field
            await still_in_progress(hub, a, b)
        finally:
            await close_all(a, b)
    run(go())


def test_huge_content_length_is_refused(hub):
    """Content-Length beyond 64 bits, or negative, is 400 bad_request; the server stays up."""
    import socket
    for value in [str(2**64), str(INT64_MAX), "-1", "1e300", "+5", "-0"]:
        with socket.create_connection(("127.0.0.1", hub.port), timeout=5) as s:
            s.sendall(b"POST /v1/rooms HTTP/1.1\r\nHost: x\r\nContent-Length: " + value.encode() + b"\r\n\r\n")
            head = s.recv(4096)
            assert head.startswith(b"HTTP/1.1 4"), (value, head)
    assert hub.healthy()


def test_extreme_numbers_in_signal_requests(hub):
    async def go():
        a, b = await meeting(hub, f"numbers-signal-{time.monotonic_ns()}")
        try:
            for fields in [{"source": "camera", "width": INT64_MAX}, {"source": "camera", "height": INT64_MIN},
                           {"source": "camera", "width": 1e300}, {"source": "camera", "width": -1e300}]:
                await a.refused("publish", "invalid_field", **fields)
            await a.refused("set_share_policy", "invalid_field", maxConcurrentShares=INT64_MAX)
            await still_in_progress(hub, a, b)
        finally:
            await close_all(a, b)
    run(go())
