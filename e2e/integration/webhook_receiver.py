"""A real HTTP receiver for webhook tests, on 127.0.0.1: records every request (headers, body, the
status it answered) and checks each signature the way docs/webhooks.md tells an application to.

    rx = Receiver(secret="s3cret", statuses=[500, 500, 500]).start()   # 500 three times, then 200
    ...
    rx.wait_for(lambda events: any(e["type"] == "participant_left" for e in events))
    rx.stop()

`hang=True` accepts connections and never answers (a dead endpoint).
"""
import hashlib
import hmac
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def verify(secret, timestamp, body, signature, tolerance=300):
    """The receiver's check: HMAC-SHA256 over "<timestamp>.<body>", `v1=` and hex, compared in
    constant time, with the timestamp within `tolerance` seconds of now."""
    expected = "v1=" + hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    fresh = abs(time.time() - int(timestamp)) <= tolerance
    return fresh and hmac.compare_digest(expected, signature)


class Receiver:
    def __init__(self, secret, statuses=(), hang=False, port=0, tls=None):
        self.secret = secret
        self.tls = tls          # (certfile, keyfile): serve https
        self.statuses = list(statuses)
        self.hang = hang
        self.port = port
        self.requests = []      # every request: dict(headers, body, status, valid)
        self.lock = threading.Lock()
        self.down = False       # answer 503 to everything while true
        self._server = None
        self._hang_sock = None
        self._hang_conns = []

    def start(self):
        if self.hang:
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", self.port))
            s.listen(64)
            self.port = s.getsockname()[1]
            self._hang_sock = s

            def accept():
                while True:
                    try:
                        c, _ = s.accept()
                    except OSError:
                        return
                    self._hang_conns.append(c)   # read nothing, answer nothing
            threading.Thread(target=accept, daemon=True).start()
            return self
        rx = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(n)
                with rx.lock:
                    if rx.down:
                        status = 503
                    elif rx.statuses:
                        status = rx.statuses.pop(0)
                    else:
                        status = 200
                    ts = self.headers.get("X-Atrium-Timestamp", "0")
                    sig = self.headers.get("X-Atrium-Signature", "")
                    rx.requests.append(dict(
                        headers={k.lower(): v for k, v in self.headers.items()}, body=body, status=status,
                        valid=verify(rx.secret, ts, body, sig), path=self.path))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        if self.tls:
            import ssl
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*self.tls)
            self._server.socket = ctx.wrap_socket(self._server.socket, server_side=True)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    @property
    def url(self):
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}/hooks/atrium"

    def stop(self):
        if self._server:
            self._server.shutdown()
            self._server.server_close()
        if self._hang_sock:
            self._hang_sock.close()
            for c in self._hang_conns:
                c.close()

    def held(self):
        """With `hang=True`: the connections accepted and never answered (attempts in flight)."""
        return len(self._hang_conns)

    def accepted(self):
        """The events answered with a 2xx, parsed, in arrival order."""
        with self.lock:
            return [json.loads(r["body"]) for r in self.requests if 200 <= r["status"] < 300]

    def wait_for(self, predicate, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            events = self.accepted()
            if predicate(events):
                return events
            time.sleep(0.05)
        raise AssertionError(f"webhooks not received in time; got {[e['type'] for e in self.accepted()]}")
