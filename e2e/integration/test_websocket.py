"""The signaling WebSocket endpoint with a real client (the `websockets` library)."""
import asyncio
import json
import os
import subprocess

import pytest
import websockets

from conftest import ATRIUM_BIN, Server


def mint(server, room="standup", identity="alice", extra=()):
    return subprocess.run([ATRIUM_BIN, "token", "create", "--key", server.key, "--secret", server.secret,
                           "--room", room, "--identity", identity, *extra],
                          capture_output=True, text=True, check=True).stdout.strip()


def url(server, query=""):
    return f"ws://127.0.0.1:{server.port}/v1/signal" + query


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 20))


def test_query_token_is_welcomed(shared_server):
    async def go():
        async with websockets.connect(url(shared_server, "?access_token=" + mint(shared_server))) as ws:
            welcome = json.loads(await ws.recv())
            assert welcome["type"] == "welcome"
            assert welcome["identity"] == "alice" and welcome["room"] == "standup"
            assert welcome["protocol"] == 1
            await ws.send(json.dumps({"type": "ping", "id": 1}))
            pong = json.loads(await ws.recv())
            assert pong["type"] == "result" and pong["id"] == 1 and isinstance(pong["data"]["pong"], int)
    run(go())


def test_first_message_token(shared_server):
    async def go():
        async with websockets.connect(url(shared_server)) as ws:
            await ws.send(json.dumps({"type": "auth", "token": mint(shared_server, identity="bob")}))
            welcome = json.loads(await ws.recv())
            assert welcome["type"] == "welcome" and welcome["identity"] == "bob"
    run(go())


@pytest.mark.parametrize("case,code,close", [
    ("garbage", "malformed_token", 4001),
    ("forged", "bad_signature", 4001),
    ("expired", "token_expired", 4001),
    ("admin-only", "missing_grant", 4003),
])
def test_refusals(shared_server, case, code, close):
    if case == "garbage":
        token = "not.a.token"
    elif case == "forged":
        token = subprocess.run([ATRIUM_BIN, "token", "create", "--key", shared_server.key, "--secret", "x" * 40,
                                "--room", "r", "--identity", "eve"], capture_output=True, text=True).stdout.strip()
    elif case == "expired":
        import base64, hmac, hashlib, time
        def b64(b): return base64.urlsafe_b64encode(b).rstrip(b"=")
        head = b64(b'{"alg":"HS256","typ":"JWT"}')
        body = b64(json.dumps({"iss": shared_server.key, "sub": "old", "exp": int(time.time()) - 3600,
                               "grants": {"room": "r", "roomJoin": True}}).encode())
        sig = b64(hmac.new(shared_server.secret.encode(), head + b"." + body, hashlib.sha256).digest())
        token = (head + b"." + body + b"." + sig).decode()
    else:
        token = shared_server.token  # an admin token has no roomJoin grant

    async def go():
        async with websockets.connect(url(shared_server, "?access_token=" + token)) as ws:
            err = json.loads(await ws.recv())
            assert err["type"] == "error" and err["error"]["code"] == code
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await ws.recv()
            assert closed.value.rcvd.code == close
    run(go())


def test_auth_timeout(tmpdir_path):
    s = Server(os.path.join(tmpdir_path, "data"), "--dev", "--store", "memory", "--signal-auth-timeout", "1").start()
    try:
        async def go():
            async with websockets.connect(url(s)) as ws:
                err = json.loads(await ws.recv())
                assert err["error"]["code"] == "auth_timeout"
                with pytest.raises(websockets.ConnectionClosed) as closed:
                    await ws.recv()
                assert closed.value.rcvd.code == 4008
        run(go())
    finally:
        s.stop()


def test_unknown_path_is_refused(shared_server):
    async def go():
        with pytest.raises((websockets.InvalidStatus, websockets.InvalidHandshake, OSError, websockets.ConnectionClosed)):
            async with websockets.connect(f"ws://127.0.0.1:{shared_server.port}/v1/elsewhere") as ws:
                await ws.recv()
    run(go())
    assert shared_server.healthy()


def test_oversized_message_closes_with_1009(shared_server):
    async def go():
        async with websockets.connect(url(shared_server, "?access_token=" + mint(shared_server)), max_size=None) as ws:
            await ws.recv()
            await ws.send("x" * (65 * 1024))
            with pytest.raises(websockets.ConnectionClosed) as closed:
                while True:
                    await ws.recv()
            assert closed.value.rcvd.code == 1009
    run(go())
    assert shared_server.healthy()


def test_invalid_utf8_text_frame_is_refused(shared_server):
    async def go():
        async with websockets.connect(url(shared_server, "?access_token=" + mint(shared_server))) as ws:
            await ws.recv()
            # A text frame that is not UTF-8 (RFC 6455 section 8.1): lws validates and closes with 1007.
            frame = websockets.frames.Frame(websockets.frames.Opcode.TEXT, b"\xff\xfe")
            ws.protocol.send_frame(frame)
            ws.send_data()
            with pytest.raises(websockets.ConnectionClosed) as closed:
                while True:
                    await ws.recv()
            assert closed.value.rcvd is None or closed.value.rcvd.code in (1002, 1007)
    run(go())
    assert shared_server.healthy()


def test_fragmented_message_is_reassembled(shared_server):
    async def go():
        async with websockets.connect(url(shared_server)) as ws:
            token = mint(shared_server, identity="frag")
            text = json.dumps({"type": "auth", "token": token})
            await ws.send([text[:10], text[10:40], text[40:]])
            assert json.loads(await ws.recv())["identity"] == "frag"
    run(go())


def test_many_clients_and_metrics(shared_server):
    async def go():
        conns = [await websockets.connect(url(shared_server, "?access_token=" + mint(shared_server, identity=f"u{i}")))
                 for i in range(20)]
        for c in conns:
            assert json.loads(await c.recv())["type"] == "welcome"
        _, _, body, _ = shared_server.request("GET", "/metrics", token=None)
        text = body.decode()
        line = next(l for l in text.splitlines() if l.startswith("atrium_websocket_connections "))
        assert float(line.split()[1]) >= 20
        for c in conns:
            await c.close()
    run(go())
