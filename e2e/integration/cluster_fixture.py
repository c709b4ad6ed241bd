"""A real Redis and Atrium nodes on 127.0.0.1 for the cluster tests (docs/cluster.md).

`RedisServer` runs Debian's `redis-server` on a free port without persistence; `Cluster` starts N
nodes (`--redis`, `--node-id n1..nN`, ephemeral HTTP and UDP ports) sharing one data directory, so
they share the dev API key the first node creates and every token works on every node.
"""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from conftest import Server

REDIS_BIN = shutil.which("redis-server") or "/usr/bin/redis-server"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    def __init__(self, port=None):
        self.port = port or free_port()
        self.proc = None

    @property
    def url(self):
        return f"redis://127.0.0.1:{self.port}"

    def listen_args(self):
        """How redis-server listens (a subclass listens on TLS)."""
        return ["--port", str(self.port)]

    def cli_args(self):
        """How redis-cli reaches it."""
        return ["-p", str(self.port)]

    def start(self):
        self.proc = subprocess.Popen(
            [REDIS_BIN, *self.listen_args(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--loglevel", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.cli("PING") == "PONG":
                return self
            time.sleep(0.05)
        raise RuntimeError("redis-server did not answer")

    def stop(self, sig=signal.SIGKILL):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(10)

    def cli(self, *args):
        """One command through redis-cli (Debian's redis-tools, installed with redis-server); its
        reply as text, None for a nil reply or when Redis does not answer."""
        r = subprocess.run(["redis-cli", "-h", "127.0.0.1", *self.cli_args(), "--raw", *args],
                           capture_output=True, text=True, timeout=10)
        out = r.stdout.rstrip("\n")
        if r.returncode != 0 or out.startswith("Could not connect") or out == "":
            return None
        return out


class Cluster:
    def __init__(self, redis, count=3, extra=()):
        self.redis = redis
        self.dir = tempfile.mkdtemp(prefix="atrium-cluster-")
        self.data = os.path.join(self.dir, "data")
        self.extra = list(extra)
        self.nodes = []
        for i in range(count):
            self.nodes.append(self.start_node(f"n{i + 1}"))

    def start_node(self, node_id):
        # Two media workers on every node whatever the machine's cores: each announces both addresses.
        s = Server(self.data, "--dev", "--redis", self.redis.url, "--node-id", node_id, "--auto-create-rooms", "any",
                   "--media-bind", "127.0.0.1", "--media-workers", "2", *self.extra).start()
        s.node_id = node_id
        return s

    def node(self, node_id):
        return next(n for n in self.nodes if n.node_id == node_id)

    def owner(self, room_id):
        return self.redis.cli("GET", f"atrium:room-owner:{room_id}")

    def wait_nodes(self, count, timeout=15):
        """Until every live node lists `count` nodes."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            listed = [n.request("GET", "/v1/nodes")[3] for n in self.nodes if n.alive()]
            if all(l and len(l["nodes"]) == count for l in listed):
                return listed
            time.sleep(0.1)
        raise AssertionError(f"nodes did not all list {count} nodes: {listed}")

    def stop(self):
        """Stops every node (SIGTERM), then fails if any did not exit 0 or ThreadSanitizer reported
        on any. A node a test killed with SIGKILL was dead already and is expected to show it."""
        errors = []
        for n in self.nodes:
            killed = not n.alive() and n.proc.returncode == -signal.SIGKILL
            try:
                code = n.stop()
                if code != 0 and not killed:
                    errors.append(f"{n.node_id} exited with {code}:\n{n.stderr_text[-2000:]}")
            except Exception as e:      # stop's ThreadSanitizer check, among others
                errors.append(f"{n.node_id}: {e}")
        shutil.rmtree(self.dir, ignore_errors=True)
        assert not errors, "\n".join(errors)


def running(count, extra=()):
    """A redis-server and `count` nodes for one test, stopped after it: `yield from running(...)` in a
    pytest fixture."""
    redis = RedisServer().start()
    c = Cluster(redis, count, extra=extra)
    try:
        c.wait_nodes(count)
        yield c
    finally:
        c.stop()
        redis.stop()


def media_worker(cluster, port):
    """(node id, worker index) of the live node whose record announces 127.0.0.1:`port` for media."""
    address = f"127.0.0.1:{port}"
    for n in cluster.nodes:
        if not n.alive():
            continue
        for listed in n.request("GET", "/v1/nodes")[3]["nodes"]:
            if address in listed["mediaAddresses"]:
                return listed["id"], listed["mediaAddresses"].index(address)
    raise AssertionError(f"no node announces {address}")


def nominated_port(sub):
    """The server port of a subscriber's nominated ICE pair."""
    t = sub.pc.getTransceivers()[0].receiver.transport.transport
    return next(iter(t._connection._nominated.values())).remote_candidate.port


async def place_room(cluster, room):
    """Places `room` (a probe joins through the first node and leaves) and returns its id."""
    from signal_client import joined
    probe = await joined(cluster.nodes[0], "probe", room=room)
    room_id = probe.snapshot["room"]["id"]
    await probe.leave()
    return room_id
