"""Fixtures that run the real `atrium` binary on 127.0.0.1 with an ephemeral port.

Every test that needs a server starts its own (or shares the module's) and stops it; nothing is left
running. The binary is `$ATRIUM_BIN`, by default the debug build the Makefile produced.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import http.client

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ATRIUM_BIN = os.environ.get("ATRIUM_BIN", os.path.join(ROOT, ".build", "debug", "atrium"))


class Server:
    """One `atrium serve` process. Reads the bound port from the `listening` log line and, in dev
    mode, the admin token and the API key from the banner."""

    def __init__(self, data_dir, *args, env=None, nofile=None):
        self.data_dir = data_dir
        self.args = list(args)
        self.env = env
        # A lower descriptor limit (RLIMIT_NOFILE) for the server process only.
        self.nofile = nofile
        self.proc = None
        self.port = None
        self.token = None
        self.key = None
        self.secret = None
        self.stdout_text = ""
        self.stderr_text = ""

    def start(self, timeout=10):
        env = {k: v for k, v in os.environ.items() if not k.startswith("ATRIUM_")}
        env.update(self.env or {})
        # Ephemeral ports for HTTP and media, so that servers of parallel runs never collide.
        udp = [] if "--udp-port" in self.args else ["--udp-port", "0"]
        cmd = [ATRIUM_BIN, "serve", "--port", "0", "--data-dir", self.data_dir] + udp + self.args
        self.out_path = os.path.join(self.data_dir, "..", f"stdout-{os.getpid()}-{time.time_ns()}.log")
        self.err_path = self.out_path.replace("stdout-", "stderr-")
        os.makedirs(self.data_dir, exist_ok=True)
        self._out = open(self.out_path, "w+")
        self._err = open(self.err_path, "w+")
        preexec = None
        if self.nofile:
            import resource
            limit = self.nofile
            preexec = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
        self.proc = subprocess.Popen(cmd, stdout=self._out, stderr=self._err, env=env, preexec_fn=preexec)
        deadline = time.time() + timeout
        while time.time() < deadline:
            err = open(self.err_path).read()
            m = re.search(r"msg=listening .*port=(\d+)", err)
            if m:
                self.port = int(m.group(1))
                break
            if self.proc.poll() is not None:
                raise RuntimeError(f"atrium exited with {self.proc.returncode}: {err}")
            time.sleep(0.02)
        else:
            raise RuntimeError("atrium did not start listening in time")
        if "--dev" in self.args:
            while time.time() < deadline:
                out = open(self.out_path).read()
                m = re.search(r"Admin token \(valid 24 h\):\s+(\S+)", out)
                if m:
                    self.token = m.group(1)
                    self.key = re.search(r"API key:\s+(\S+)", out).group(1)
                    self.secret = re.search(r"API secret:\s+(\S+)", out).group(1)
                    break
                time.sleep(0.02)
        return self

    def stop(self, sig=signal.SIGTERM, timeout=60):
        """Sends `sig` and waits for the exit (SIGKILL after `timeout`, a hang guard); returns the exit
        status, 0 for a clean stop on SIGTERM or SIGINT (negative: the signal that killed it)."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.stdout_text = open(self.out_path).read()
        self.stderr_text = open(self.err_path).read()
        # Under `make tsan` the server is built with ThreadSanitizer: any report fails the test.
        assert "ThreadSanitizer" not in self.stderr_text, self.stderr_text
        return self.proc.returncode

    def alive(self):
        return self.proc.poll() is None

    def metric(self, name, **labels):
        """The sum of the samples of `name` whose labels include `labels` in /metrics now (0 if none)."""
        status, _, body, _ = self.request("GET", "/metrics", token=None)
        assert status == 200, body
        return sample_of(body.decode(), name, **labels)

    def wait_metric(self, name, predicate, timeout=60, **labels):
        """Polls /metrics until `predicate(value)` holds for `name` (as `metric`); returns the value.
        `timeout` is a hang guard."""
        deadline = time.time() + timeout
        while not predicate(value := self.metric(name, **labels)):
            assert time.time() < deadline, f"{name}{labels} stayed at {value} for {timeout} s"
            time.sleep(0.1)
        return value

    def request(self, method, path, body=None, headers=None, token="admin", timeout=10):
        """One HTTP request on a fresh connection; returns (status, headers dict, body bytes, parsed JSON or None)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        h = dict(headers or {})
        if token == "admin":
            token = self.token
        if token:
            h["Authorization"] = f"Bearer {token}"
        if body is not None and not isinstance(body, (bytes, bytearray)):
            body = json.dumps(body).encode()
            h.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=body, headers=h)
        r = conn.getresponse()
        data = r.read()
        conn.close()
        parsed = None
        if r.getheader("content-type", "").startswith("application/json") and data:
            parsed = json.loads(data)
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data, parsed

    def healthy(self):
        status, _, _, _ = self.request("GET", "/healthz", token=None)
        return status == 200


# e2e/ itself: the benchmarks import this file outside pytest, which otherwise puts it on the path.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from metrics_text import sample_of  # noqa: E402,F401  (the tests import it from here)


def stopped_cleanly(server):
    """Stops `server` with SIGTERM: it exits 0 (and, as `stop` checks, ThreadSanitizer reported nothing)."""
    code = server.stop()
    assert code == 0, f"atrium exited with {code} on SIGTERM:\n{server.stderr_text[-3000:]}"


@pytest.fixture
def tmpdir_path():
    d = tempfile.mkdtemp(prefix="atrium-it-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def dev_server(tmpdir_path):
    """A dev-mode server with an SQLite store in a fresh data directory."""
    s = Server(os.path.join(tmpdir_path, "data"), "--dev").start()
    yield s
    stopped_cleanly(s)


@pytest.fixture(scope="module")
def shared_server():
    """One dev server for a whole module of read-mostly tests."""
    d = tempfile.mkdtemp(prefix="atrium-it-")
    s = Server(os.path.join(d, "data"), "--dev", "--store", "memory").start()
    yield s
    stopped_cleanly(s)
    shutil.rmtree(d, ignore_errors=True)


# A media server: dev mode, rooms created on join, media on an ephemeral UDP port bound to 127.0.0.1.
MEDIA_BASE_ARGS = ("--dev", "--store", "memory", "--auto-create-rooms", "any",
                   "--udp-port", "0", "--media-bind", "127.0.0.1")
# ATRIUM_TEST_MEDIA_WORKERS=N runs every media test's server with N media workers (`make tsan` uses 2);
# by default a server has one per core.
MEDIA_ARGS = MEDIA_BASE_ARGS + (("--media-workers", os.environ["ATRIUM_TEST_MEDIA_WORKERS"])
                                if os.environ.get("ATRIUM_TEST_MEDIA_WORKERS") else ())


@pytest.fixture(scope="module")
def media_server(tmp_path_factory):
    """One media server per test module; every test uses its own room."""
    s = Server(os.path.join(tmp_path_factory.mktemp("media"), "data"), *MEDIA_ARGS).start()
    yield s
    stopped_cleanly(s)
