"""What the HTTP edge speaks: HTTP/1.1 only, so an `Upgrade: h2c` request is answered in
HTTP/1.1 and never runs with its body lost; over TLS ALPN offers only http/1.1; and the token
transports report what the docs say (a long `access_token` is `malformed_token`, `Bearer ` with no
token is `missing_token`)."""
import asyncio
import json
import os
import socket
import ssl
import subprocess

import pytest
import websockets

from conftest import Server
from signal_client import run, signal_url
from test_tls import make_cert


def curl(*args):
    r = subprocess.run(["curl", "-s", "-m", "5", "-i", *args], capture_output=True, timeout=10)
    return r.returncode, r.stdout.decode(errors="replace")


def test_curl_http2_upgrade_is_answered_in_http1(shared_server):
    rc, out = curl("--http2", f"http://127.0.0.1:{shared_server.port}/healthz")
    assert rc == 0 and out.startswith("HTTP/1.1 200 "), out
    assert "101" not in out.split("\r\n", 1)[0]
    # Keep-alive continues after the inline answer: two requests on one curl connection.
    rc, out = curl("--http2", f"http://127.0.0.1:{shared_server.port}/healthz",
                   f"http://127.0.0.1:{shared_server.port}/readyz")
    assert rc == 0 and out.count("HTTP/1.1 200 ") == 2, out


@pytest.mark.parametrize("method", ["POST", "PATCH"])
def test_h2c_upgrade_with_a_body_is_refused_not_run_empty(shared_server, method):
    path = "/v1/rooms" if method == "POST" else "/v1/rooms/h2c-target"
    shared_server.request("POST", "/v1/rooms", body={"name": "h2c-target"})
    rc, out = curl("--http2", "-X", method, "-H", f"Authorization: Bearer {shared_server.token}",
                   "-H", "Content-Type: application/json", "-d", '{"name":"made-over-h2c","maxParticipants":3}',
                   f"http://127.0.0.1:{shared_server.port}{path}")
    assert out.startswith("HTTP/1.1 400 "), out
    assert '"bad_request"' in out and "h2c" in out
    # Nothing was created or changed with an empty body.
    status, _, _, body = shared_server.request("GET", "/v1/rooms/made-over-h2c")
    assert status == 404
    status, _, _, body = shared_server.request("GET", "/v1/rooms/h2c-target")
    assert status == 200 and body["maxParticipants"] != 3


def test_h2c_upgrade_without_content_length_is_not_run(shared_server):
    """A bodiless POST with Upgrade: h2c is handled as HTTP/1.1 (an empty body is `{}`), never as HTTP/2."""
    with socket.create_connection(("127.0.0.1", shared_server.port), timeout=5) as s:
        s.sendall(b"POST /v1/rooms HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\n"
                  b"Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n")
        head = s.recv(4096)
    assert head.startswith(b"HTTP/1.1 401 "), head  # no token: refused as any HTTP/1.1 request would be
    assert b"101 Switching" not in head


def test_http2_prior_knowledge_is_not_served(shared_server):
    rc, out = curl("--http2-prior-knowledge", f"http://127.0.0.1:{shared_server.port}/healthz")
    assert "HTTP/2 200" not in out
    assert shared_server.healthy()


def test_tls_alpn_offers_only_http1(tmpdir_path):
    cert, key = make_cert(tmpdir_path)
    s = Server(os.path.join(tmpdir_path, "data"), "--dev", "--store", "memory", "--tls-cert", cert,
               "--tls-key", key).start()
    try:
        ctx = ssl.create_default_context(cafile=cert)
        ctx.set_alpn_protocols(["h2", "http/1.1"])
        with socket.create_connection(("127.0.0.1", s.port), timeout=5) as raw:
            with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                assert tls.selected_alpn_protocol() in (None, "http/1.1")
        rc, out = curl("--http2", "--cacert", cert, f"https://127.0.0.1:{s.port}/healthz")
        assert rc == 0 and out.startswith("HTTP/1.1 200 "), out
    finally:
        s.stop()


@pytest.mark.parametrize("length", [8193, 9000, 12000])
def test_long_access_token_is_malformed_not_auth_timeout(shared_server, length):
    token = "a" * length

    async def go():
        async with websockets.connect(signal_url(shared_server, token), ping_interval=None) as ws:
            # Hang guards: the code, malformed_token and not auth_timeout (sent at 10 s), is the check.
            first = json.loads(await asyncio.wait_for(ws.recv(), 30))
            assert first["type"] == "error" and first["error"]["code"] == "malformed_token", first
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 30)
            assert closed.value.rcvd.code == 4001
    run(go())


@pytest.mark.parametrize("header,code", [
    ("Bearer ", "missing_token"),
    ("Bearer", "missing_token"),
    ("Bearer \t ", "missing_token"),
    ("Basic dXNlcjpwYXNz", "malformed_token"),
])
def test_authorization_without_a_token(shared_server, header, code):
    with socket.create_connection(("127.0.0.1", shared_server.port), timeout=5) as s:
        s.sendall(b"GET /v1/rooms HTTP/1.1\r\nHost: x\r\nAuthorization: " + header.encode() + b"\r\n\r\n")
        reply = b""
        while b"}}" not in reply:
            chunk = s.recv(4096)
            if not chunk:
                break
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 401 "), reply
    assert json.loads(reply.split(b"\r\n\r\n", 1)[1])["error"]["code"] == code
    challenge = [l for l in reply.split(b"\r\n") if l.lower().startswith(b"www-authenticate:")][0]
    assert (b"invalid_token" in challenge) == (code != "missing_token")
