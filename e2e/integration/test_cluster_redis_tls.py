"""The cluster over TLS to Redis (`rediss://`, docs/cluster.md): a real redis-server that listens only
on its TLS port and asks clients for certificates, and two nodes that reach it through their stunnel
(Debian's stunnel4; hiredis 0.14 has no TLS). The certificates are made here with the openssl tool.

- Both nodes (one data directory, as the fixture runs them) list each other and share a room's
  settings, which Redis holds (read back with redis-cli over TLS): everything they said to Redis
  went over TLS, since Redis has no plain port. Each has its own stunnel, a child in a directory of
  its own, both gone when the nodes stop.
- A node that trusts another CA, or that names Redis by a host its certificate does not carry
  (`localhost`; the certificate names 127.0.0.1 only), never reaches Redis: it is not ready
  (`/readyz` 503 `cluster_unavailable`) and its stunnel says the certificate did not verify. Its
  start removes the tunnel directory a dead node left (its lock free), not a live node's (locked)
  nor one a node is making now (no lock yet).
"""
import fcntl
import glob
import os
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from cluster_fixture import Cluster, RedisServer
from conftest import Server

pytestmark = pytest.mark.skipif(shutil.which("stunnel") is None, reason="stunnel4 is not installed")


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_ca(d, name):
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
            "-subj", f"/CN={name}", "-keyout", f"{name}.key", "-out", f"{name}.crt", cwd=d)


def issue(d, ca, name, san):
    """A certificate for `name` signed by `ca`, with `san` (e.g. IP:127.0.0.1) as its subject names."""
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", f"/CN={name}",
            "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=d)
    with open(os.path.join(d, f"{name}.ext"), "w") as f:
        f.write(f"subjectAltName={san}\n")
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key", "-CAcreateserial",
            "-days", "2", "-extfile", f"{name}.ext", "-out", f"{name}.crt", cwd=d)


class TLSRedis(RedisServer):
    """redis-server with only a TLS port, clients' certificates required."""

    def __init__(self, certs):
        super().__init__()
        self.certs = certs

    @property
    def url(self):
        return f"rediss://127.0.0.1:{self.port}"

    def path(self, name):
        return os.path.join(self.certs, name)

    def listen_args(self):
        return ["--port", "0", "--tls-port", str(self.port), "--tls-cert-file", self.path("redis.crt"),
                "--tls-key-file", self.path("redis.key"), "--tls-ca-cert-file", self.path("ca.crt"),
                "--tls-auth-clients", "yes"]

    def cli_args(self):
        return ["-p", str(self.port), "--tls", "--cacert", self.path("ca.crt"), "--cert", self.path("node.crt"),
                "--key", self.path("node.key")]


@pytest.fixture(scope="module")
def certs():
    d = tempfile.mkdtemp(prefix="atrium-redis-tls-")
    make_ca(d, "ca")
    make_ca(d, "other-ca")
    issue(d, "ca", "redis", "IP:127.0.0.1")
    issue(d, "ca", "node", "DNS:node")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def tls_flags(certs, ca="ca.crt"):
    return ["--redis-ca", os.path.join(certs, ca), "--redis-cert", os.path.join(certs, "node.crt"),
            "--redis-key", os.path.join(certs, "node.key")]


def stunnel_children(pid):
    """The pids of `pid`'s stunnel children."""
    out = subprocess.run(["pgrep", "-P", str(pid), "stunnel"], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def test_two_nodes_share_a_room_through_tls_only_redis(certs):
    redis = TLSRedis(certs).start()
    cluster = Cluster(redis, 2, extra=tls_flags(certs))
    try:
        cluster.wait_nodes(2)
        n1, n2 = cluster.nodes
        status, _, _, room = n1.request("POST", "/v1/rooms", {"name": "over-tls"})
        assert status == 201, room
        status, _, _, got = n2.request("GET", "/v1/rooms/over-tls")
        assert status == 200 and got == room
        assert '"over-tls"' in (redis.cli("GET", f"atrium:room:{room['id']}") or "")
        # Each node's tunnel is its child, in a directory of its own.
        tunnels = {n.node_id: stunnel_children(n.proc.pid) for n in cluster.nodes}
        assert all(len(t) == 1 for t in tunnels.values()), tunnels
        dirs = glob.glob(os.path.join(cluster.data, "redis-tls-*", "stunnel.conf"))
        assert len(dirs) == 2, dirs
        # A tunnel that dies is started again, and the node reaches Redis through the new one.
        (old,) = tunnels["n1"]
        os.kill(old, signal.SIGKILL)
        deadline = time.time() + 20
        while time.time() < deadline and stunnel_children(n1.proc.pid) in ([], [old]):
            time.sleep(0.1)
        (new,) = stunnel_children(n1.proc.pid)
        assert new != old
        tunnels["n1"] = [new]
        status = None
        while time.time() < deadline and status != 201:
            status, _, _, _ = n1.request("POST", "/v1/rooms", {"name": "after-the-restart"})
            time.sleep(0.1)
        assert status == 201
        assert "the TLS tunnel to Redis exited: started again" in open(n1.err_path).read()
    finally:
        cluster.stop()
        redis.stop()
    for pids in tunnels.values():
        for pid in pids:
            assert not os.path.exists(f"/proc/{pid}"), f"stunnel {pid} outlived its node"
    assert glob.glob(os.path.join(cluster.data, "redis-tls-*")) == []


@pytest.mark.parametrize("ca,host,why", [
    ("other-ca.crt", "127.0.0.1", "Rejected by CERT"),                  # the chain: another CA
    ("ca.crt", "localhost", "Subject checks failed"),                   # the name: not in the certificate
])
def test_a_node_that_cannot_verify_redis_does_not_reach_it(certs, ca, host, why):
    redis = TLSRedis(certs).start()
    data = tempfile.mkdtemp(prefix="atrium-redis-tls-node-")
    node = None
    try:
        # What a node killed long ago left (its lock free), what a live node has (its lock held here), what
        # one starting now has (no lock yet): only the first goes, however old the others are.
        held = None
        for name, age in (("redis-tls-left", 120), ("redis-tls-live", 120), ("redis-tls-starting", 0)):
            d = os.path.join(data, name)
            os.makedirs(d)
            for f in ("stunnel.conf",) + (() if name.endswith("starting") else ("lock",)):
                open(os.path.join(d, f), "w").close()
                os.utime(os.path.join(d, f), (time.time() - age, time.time() - age))
            os.utime(d, (time.time() - age, time.time() - age))
        held = open(os.path.join(data, "redis-tls-live", "lock"), "r+")
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        node = Server(data, "--dev", "--redis", f"rediss://{host}:{redis.port}", "--node-id", "mistrustful",
                      *tls_flags(certs, ca=ca))
        node.start(timeout=15)
        assert not os.path.exists(os.path.join(data, "redis-tls-left"))
        assert os.path.exists(os.path.join(data, "redis-tls-live", "stunnel.conf"))
        assert os.path.exists(os.path.join(data, "redis-tls-starting", "stunnel.conf"))
        held.close()
        status, _, _, body = node.request("GET", "/readyz")
        assert status == 503 and body["error"]["code"] == "cluster_unavailable", body
        deadline = time.time() + 20
        text = ""
        while time.time() < deadline and "certificate verify failed" not in text:
            logs = glob.glob(os.path.join(data, "redis-tls-*", "stunnel.log"))
            text = open(logs[0]).read() if logs else ""
            time.sleep(0.1)
        assert "certificate verify failed" in text and why in text, text[-2000:]
        assert redis.cli("SCARD", "atrium:nodes") == "0"
    finally:
        if node is not None:
            node.stop()
        redis.stop()
        shutil.rmtree(data, ignore_errors=True)
