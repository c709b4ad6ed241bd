"""openapi.yaml: valid, covering every route the server answers, and matched by the running server
(schemathesis generates requests from the spec and checks every response against it)."""
import os
import re
import subprocess
import sys
import tempfile

import yaml
from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename

from conftest import ATRIUM_BIN, ROOT, Server

SPEC = os.path.join(ROOT, "openapi.yaml")


def test_spec_is_valid_openapi():
    spec, _ = read_from_filename(SPEC)
    assert spec["openapi"].startswith("3.1")
    validate(spec)


def test_spec_covers_every_route():
    router = open(os.path.join(ROOT, "Sources", "AtriumAdminAPI", "Router.swift")).read()
    routes = set(re.findall(r'case \w+ = "(/[^"]*)"', router))
    # The web handler's routes (the page, its assets, the JS client, the dev token endpoint).
    web = open(os.path.join(ROOT, "Sources", "AtriumWeb", "WebHandler.swift")).read()
    for route, literal in (("/", '"/"'), ("/sdk/atrium.js", '"/sdk/atrium.js"'), ("/dev/token", '"/dev/token"'),
                           ("/app/{name}", '"/app/"')):
        assert literal in web, f"WebHandler no longer serves {route}"
        routes.add(route)
    # WHIP's routes (AtriumSignal's WHIPEndpoint).
    whip = open(os.path.join(ROOT, "Sources", "AtriumSignal", "WHIPEndpoint.swift")).read()
    assert "case whip, whep" in whip and "Kind(rawValue: parts[4])" in whip, \
        "WHIPEndpoint no longer serves /v1/rooms/{roomId}/whip and /whep"
    for kind in ("whip", "whep"):
        routes |= {f"/v1/rooms/{{roomId}}/{kind}", f"/v1/rooms/{{roomId}}/{kind}/{{sessionId}}"}
    paths = set(yaml.safe_load(open(SPEC))["paths"])
    assert routes == paths, f"only in the server: {routes - paths}; only in the spec: {paths - routes}"


def test_every_error_code_the_server_emits_is_documented():
    spec = yaml.safe_load(open(SPEC))
    documented = set(spec["components"]["schemas"]["ErrorCode"]["enum"])
    sources = ""
    for d in ("AtriumAdminAPI", "AtriumAuth", "AtriumEdge"):
        for f in os.listdir(os.path.join(ROOT, "Sources", d)):
            sources += open(os.path.join(ROOT, "Sources", d, f)).read()
    emitted = set(re.findall(r'code: "([a-z_]+)"', sources)) | set(re.findall(r'case \.\w+(?:\([^)]*\))?: "([a-z_]+)"', sources))
    missing = {c for c in emitted if c not in documented}
    assert not missing, missing


def test_schemathesis_conformance(tmpdir_path):
    server = Server(os.path.join(tmpdir_path, "data"), "--dev", "--store", "memory").start()
    scratch = tempfile.mkdtemp(prefix="atrium-schemathesis-")
    keeper = None
    try:
        token = subprocess.run([ATRIUM_BIN, "token", "create", "--key", server.key, "--secret", server.secret,
                                "--room", "demo", "--identity", "alice"], capture_output=True, text=True,
                               check=True).stdout.strip()
        keeper = subprocess.Popen([sys.executable, os.path.join(ROOT, "e2e", "integration", "live_participant.py"),
                                   str(server.port), token, server.token, "600"])
        # Schemathesis cannot upgrade to WebSocket: a plain GET of /v1/signal is answered 426 by design.
        with open(os.path.join(scratch, "schemathesis.toml"), "w") as f:
            f.write('[[operations]]\ninclude-path = "/v1/signal"\n'
                    'checks.positive_data_acceptance.expected-statuses = '
                    '["2xx", "3xx", "401", "403", "404", "409", "426", "429", "5xx"]\n')
        env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "e2e", "integration"),
               "SCHEMATHESIS_HOOKS": "schemathesis_hooks"}
        r = subprocess.run(["schemathesis", "--config-file", os.path.join(scratch, "schemathesis.toml"), "run", SPEC,
                            "--url", f"http://127.0.0.1:{server.port}", "-H", f"Authorization: Bearer {server.token}",
                            "--checks", "all", "--max-examples", "30", "--seed", "1", "--workers", "1",
                            "--generation-allow-x00", "false", "--no-color"],
                           cwd=scratch, env=env, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
        assert server.alive()
    finally:
        if keeper:
            keeper.terminate()
            keeper.wait(10)
        server.stop()
        subprocess.run(["rm", "-rf", scratch])
