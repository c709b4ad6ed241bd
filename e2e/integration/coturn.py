"""coturn (Debian's `coturn`, `turnserver`) for the TURN tests, started and stopped by the test: on
127.0.0.1 only, relaying to loopback peers (the media server), with the TURN REST API shared secret
(`use-auth-secret`) that `atrium serve --turn-secret` signs credentials with (docs/firewalls.md)."""
import base64
import hashlib
import hmac
import os
import shutil
import socket
import subprocess
import tempfile
import time

TURNSERVER = shutil.which("turnserver") or "/usr/bin/turnserver"
REALM = "atrium.test"
# Relay ports, a fixed range so that a firewall rule can tell coturn's relayed flows from others.
RELAY_MIN, RELAY_MAX = 49900, 49999


def free_port(kind=socket.SOCK_STREAM):
    """A port free for both TCP and UDP on 127.0.0.1 now."""
    for _ in range(50):
        with socket.socket(socket.AF_INET, kind) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if RELAY_MIN <= port <= RELAY_MAX:
            continue
        try:
            for k in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
                with socket.socket(socket.AF_INET, k) as s:
                    s.bind(("127.0.0.1", port))
        except OSError:
            continue
        return port
    raise RuntimeError("no free port")


def rest_credential(secret, username):
    """coturn's TURN REST API password: base64(HMAC-SHA1(secret, username))."""
    return base64.b64encode(hmac.new(secret.encode(), username.encode(), hashlib.sha1).digest()).decode()


class Coturn:
    def __init__(self, secret):
        self.secret = secret
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="atrium-coturn-")
        self.log = os.path.join(self.dir, "turn.log")
        self.proc = None

    def start(self):
        cmd = [
            TURNSERVER, "-n", "--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1",
            f"--listening-port={self.port}", "--use-auth-secret", f"--static-auth-secret={self.secret}",
            f"--realm={REALM}", "--no-cli", "--no-tls", "--no-dtls", "--allow-loopback-peers",
            f"--min-port={RELAY_MIN}", f"--max-port={RELAY_MAX}", f"--log-file={self.log}", "--simple-log",
            "--no-stdout-log", f"--pidfile={os.path.join(self.dir, 'turn.pid')}",
        ]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"turnserver exited ({self.proc.returncode}): {self.log_text()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"turnserver did not listen on {self.port}: {self.log_text()}")

    def log_text(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def urls(self):
        return [f"turn:127.0.0.1:{self.port}?transport=udp", f"turn:127.0.0.1:{self.port}?transport=tcp"]

    def server_flags(self, ttl=None):
        """`atrium serve` flags that hand out this coturn's credentials."""
        flags = ["--turn-urls", ",".join(self.urls()), "--turn-secret", self.secret]
        return flags + (["--turn-ttl", str(ttl)] if ttl else [])
