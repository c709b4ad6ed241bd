"""The real server over real HTTP: quick start, persistence across restart, shutdown, the CLI."""
import asyncio
import json
import os
import signal
import socket
import subprocess

from conftest import ATRIUM_BIN, Server
from signal_client import joined, run


def test_quick_start_create_and_list(dev_server):
    status, headers, _, room = dev_server.request("POST", "/v1/rooms", {"name": "demo", "shareMode": "multi",
                                                                         "maxConcurrentShares": 2})
    assert status == 201, room
    assert room["name"] == "demo" and room["id"].startswith("rm_")
    assert headers["location"] == f"/v1/rooms/{room['id']}"
    status, _, _, listing = dev_server.request("GET", "/v1/rooms")
    assert status == 200
    assert [r["name"] for r in listing["rooms"]] == ["demo"]
    assert listing["nextPageToken"] is None


def test_dev_banner_prints_a_working_curl(dev_server):
    out = open(dev_server.out_path).read()
    line = next(l for l in out.splitlines() if l.strip().startswith("curl -s -X POST"))
    result = subprocess.run(line.strip(), shell=True, capture_output=True, text=True, timeout=10)
    room = json.loads(result.stdout)
    assert room["name"] == "demo"


def test_rooms_survive_a_restart(tmpdir_path):
    data = os.path.join(tmpdir_path, "data")
    s1 = Server(data, "--dev").start()
    ids = [s1.request("POST", "/v1/rooms", {"name": f"keep-{i}"})[3]["id"] for i in range(3)]
    s1.request("PATCH", f"/v1/rooms/{ids[0]}", {"shareLocked": True})
    assert s1.stop() == 0
    s2 = Server(data, "--dev").start()
    try:
        assert s2.key == s1.key and s2.secret == s1.secret, "dev key is reused across restarts"
        # The old admin token is still valid because the dev key is kept.
        status, _, _, listing = s2.request("GET", "/v1/rooms", token=s1.token)
        assert status == 200
        # The listing's order is by id, and ids made within one millisecond order by their random part.
        rooms = {r["id"]: r for r in listing["rooms"]}
        assert sorted(rooms) == sorted(ids)
        assert rooms[ids[0]]["shareLocked"] is True
    finally:
        s2.stop()


def test_memory_store_forgets(tmpdir_path):
    data = os.path.join(tmpdir_path, "data")
    s1 = Server(data, "--dev", "--store", "memory").start()
    s1.request("POST", "/v1/rooms", {"name": "gone"})
    s1.stop()
    s2 = Server(data, "--dev", "--store", "memory").start()
    try:
        assert s2.request("GET", "/v1/rooms")[3]["rooms"] == []
    finally:
        s2.stop()


def test_sigterm_stops_with_exit_0_and_closes_websockets_with_1001(dev_server):
    """SIGTERM: every WebSocket is closed with 1001 "server shutting down", and the process exits 0
    (`stop` waits a minute before it kills, a hang guard)."""
    dev_server.request("POST", "/v1/rooms", {"name": "x"})

    async def go():
        client = await joined(dev_server, "alice", room="x")
        code = await asyncio.to_thread(dev_server.stop, signal.SIGTERM)
        assert code == 0
        assert await client.wait_closed() == (1001, "server shutting down")
        await client.close()
    run(go())
    assert "msg=stopped" in dev_server.stderr_text


def test_sigint_stops_with_exit_0(dev_server):
    assert dev_server.stop(signal.SIGINT) == 0


def test_sigterm_with_open_connections(dev_server):
    """Idle HTTP connections do not hold the shutdown: the server closes each (it reads EOF) and exits 0."""
    idle = [socket.create_connection(("127.0.0.1", dev_server.port), timeout=60) for _ in range(5)]
    try:
        assert dev_server.stop(signal.SIGTERM) == 0
        for s in idle:
            try:
                assert s.recv(4096) == b""
            except ConnectionResetError:
                pass    # closed by the server all the same
    finally:
        for s in idle:
            s.close()


def test_serve_without_keys_refuses_to_start(tmpdir_path):
    r = subprocess.run([ATRIUM_BIN, "serve", "--port", "0", "--data-dir", tmpdir_path],
                       capture_output=True, text=True, timeout=10, env={"PATH": os.environ["PATH"]})
    assert r.returncode == 1
    assert "no API keys configured" in r.stderr


def test_invalid_configuration_is_reported_with_fields(tmpdir_path):
    r = subprocess.run([ATRIUM_BIN, "serve", "--port", "99999", "--store", "postgres"],
                       capture_output=True, text=True, timeout=10, env={"PATH": os.environ["PATH"]})
    assert r.returncode == 2
    assert "port:" in r.stderr and "store:" in r.stderr


def test_keys_from_environment_and_token_cli(tmpdir_path):
    secret = "s" * 40
    s = Server(os.path.join(tmpdir_path, "data"), env={"ATRIUM_KEYS": f"prod:{secret}"}).start()
    try:
        token = subprocess.run([ATRIUM_BIN, "token", "create", "--key", "prod", "--secret", secret,
                                "--room", "standup", "--identity", "ops", "--admin", "--ttl", "60"],
                               capture_output=True, text=True, check=True).stdout.strip()
        status, _, _, room = s.request("POST", "/v1/rooms", {"name": "standup"}, token=token)
        assert status == 201
        # The token is scoped to "standup": another room is refused.
        status, _, _, err = s.request("POST", "/v1/rooms", {"name": "other"}, token=token)
        assert status == 403 and err["error"]["code"] == "wrong_room"
        # A token signed with another secret is refused.
        forged = subprocess.run([ATRIUM_BIN, "token", "create", "--key", "prod", "--secret", "x" * 40,
                                 "--room", "standup", "--identity", "ops", "--admin"],
                                capture_output=True, text=True, check=True).stdout.strip()
        status, _, _, err = s.request("GET", "/v1/rooms/standup", token=forged)
        assert status == 401 and err["error"]["code"] == "bad_signature"
    finally:
        s.stop()


def test_config_file_and_precedence(tmpdir_path):
    cfg = os.path.join(tmpdir_path, "atrium.json")
    with open(cfg, "w") as f:
        json.dump({"store": "memory", "keys": {"file": "f" * 32}, "log": {"format": "json"}}, f)
    s = Server(os.path.join(tmpdir_path, "data"), "--config", cfg, "--log-format", "text").start()
    try:
        assert "msg=listening" in open(s.err_path).read()  # flag beat the file's json
        assert "store=memory" in open(s.err_path).read()  # file beat the default
    finally:
        s.stop()


def test_config_check(tmpdir_path):
    good = os.path.join(tmpdir_path, "good.json")
    bad = os.path.join(tmpdir_path, "bad.json")
    json.dump({"port": 8800, "keys": {"k": "k" * 32}}, open(good, "w"))
    json.dump({"port": "x", "tls": {"cert": "/c"}, "nonsense": 1}, open(bad, "w"))
    r = subprocess.run([ATRIUM_BIN, "config", "check", good], capture_output=True, text=True)
    assert r.returncode == 0 and "ok" in r.stdout
    r = subprocess.run([ATRIUM_BIN, "config", "check", bad], capture_output=True, text=True)
    assert r.returncode == 1
    for field in ("port:", "tls.key:", "nonsense:"):
        assert field in r.stdout, r.stdout


def test_metrics_count_requests_rooms_and_sockets(shared_server):
    shared_server.request("GET", "/healthz", token=None)
    status, headers, body, _ = shared_server.request("GET", "/metrics", token=None)
    text = body.decode()
    assert status == 200 and headers["content-type"].startswith("text/plain")
    assert 'atrium_http_requests_total{route="/healthz",method="GET",status="200"}' in text
    assert "atrium_http_request_duration_seconds_bucket" in text
    assert "atrium_rooms " in text and "atrium_websocket_connections " in text
    assert "atrium_build_info{" in text


def test_readyz(shared_server):
    status, _, _, body = shared_server.request("GET", "/readyz", token=None)
    assert status == 200 and body == {"status": "ready"}


def test_head_and_keep_alive(shared_server):
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", shared_server.port, timeout=5)
    for _ in range(3):
        conn.request("HEAD", "/healthz")
        r = conn.getresponse()
        assert r.status == 200 and r.read() == b""
        conn.request("GET", "/v1/rooms", headers={"Authorization": f"Bearer {shared_server.token}"})
        r = conn.getresponse()
        assert r.status == 200 and json.loads(r.read())["rooms"] is not None
    conn.close()
