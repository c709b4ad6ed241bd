"""https and wss with a certificate made by the test (openssl, self-signed, P-256)."""
import asyncio
import json
import os
import ssl
import subprocess
import http.client

import websockets

from conftest import ATRIUM_BIN, Server


def make_cert(d):
    key, cert = os.path.join(d, "key.pem"), os.path.join(d, "cert.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return cert, key


def test_https_and_wss(tmpdir_path):
    cert, key = make_cert(tmpdir_path)
    s = Server(os.path.join(tmpdir_path, "data"), "--dev", "--store", "memory", "--tls-cert", cert, "--tls-key", key).start()
    try:
        assert "url=https://127.0.0.1:" in open(s.err_path).read()
        ctx = ssl.create_default_context(cafile=cert)
        conn = http.client.HTTPSConnection("127.0.0.1", s.port, context=ctx, timeout=5)
        conn.request("POST", "/v1/rooms", body=b'{"name":"secure"}',
                     headers={"Authorization": f"Bearer {s.token}", "Content-Type": "application/json"})
        r = conn.getresponse()
        assert r.status == 201 and json.loads(r.read())["name"] == "secure"
        token = subprocess.run([ATRIUM_BIN, "token", "create", "--key", s.key, "--secret", s.secret, "--room", "secure",
                                "--identity", "tls"], capture_output=True, text=True, check=True).stdout.strip()

        async def go():
            async with websockets.connect(f"wss://127.0.0.1:{s.port}/v1/signal?access_token={token}", ssl=ctx) as ws:
                assert json.loads(await ws.recv())["type"] == "welcome"
        asyncio.run(asyncio.wait_for(go(), 10))
        # Plain HTTP on the TLS port is not served.
        plain = http.client.HTTPConnection("127.0.0.1", s.port, timeout=5)
        try:
            plain.request("GET", "/healthz")
            status = plain.getresponse().status
        except (ConnectionError, http.client.HTTPException, OSError):
            status = None
        assert status != 200
        assert s.alive()
    finally:
        assert s.stop() == 0


def test_missing_certificate_fails_to_start(tmpdir_path):
    r = subprocess.run([ATRIUM_BIN, "serve", "--dev", "--store", "memory", "--port", "0", "--data-dir", tmpdir_path,
                        "--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem"],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 1
    assert "cannot read TLS file /nonexistent/cert.pem" in r.stderr
