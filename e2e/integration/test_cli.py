"""The command line as a new user meets it and the invalid room name code
(item 4): `--help` per command, refusals of unknown words and single-dash options, start-up errors
that name the port and the flag, `--bind` checks, `config check` warnings, and `token create`
refusing the README's placeholders and short secrets. Exact messages."""
import asyncio
import json
import os
import socket
import subprocess

from conftest import ATRIUM_BIN
from signal_client import connect, mint_jwt

ENV = {"PATH": os.environ["PATH"]}


def run(*args, timeout=10, env=ENV):
    return subprocess.run([ATRIUM_BIN, *args], capture_output=True, text=True, timeout=timeout, env=env)


def test_help_per_command_with_defaults_exits_0():
    r = run("serve", "--help")
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.startswith("Usage: atrium serve [--config FILE] [--dev] [settings]\n")
    lines = r.stdout.splitlines()
    bind = next(l for l in lines if l.strip().startswith("--bind "))
    assert bind.split() == ["--bind", "ATRIUM_BIND", "bind", "default", "127.0.0.1"]
    port = next(l for l in lines if l.strip().startswith("--port "))
    assert port.split()[-2:] == ["default", "8800"]
    udp = next(l for l in lines if l.strip().startswith("--udp-port "))
    assert udp.split()[-2:] == ["default", "8801"]
    r = run("token", "create", "--help")
    assert r.returncode == 0 and r.stdout.startswith("Usage: atrium token create --key K --secret S --identity I")
    assert "--ttl SECONDS       lifetime; default: 21600 (6 h)" in r.stdout
    assert "--role ROLE         host, cohost, participant or viewer; default: participant" in r.stdout
    r = run("config", "check", "--help")
    assert r.returncode == 0 and r.stdout.startswith("Usage: atrium config check FILE\n")
    r = run("--help")
    assert r.returncode == 0 and "atrium serve [options]" in r.stdout


def test_single_dash_options_and_unknown_words_are_refused():
    # `atrium serve -h --dev` used to start a server.
    r = run("serve", "-h", "--dev", "--store", "memory", "--port", "0", "--udp-port", "-1")
    assert r.returncode == 2
    assert r.stderr == (
        "atrium: serve: unknown option -h (options start with two dashes, e.g. --help)\n"
        "Run 'atrium serve --help' for its usage.\n")
    r = run("serve", "--dev", "now")
    assert r.returncode == 2
    assert r.stderr == "atrium: serve: unexpected argument \"now\"\nRun 'atrium serve --help' for its usage.\n"
    r = run("serve", "--colour")
    assert r.returncode == 2
    assert r.stderr == "atrium: serve: unknown option --colour\nRun 'atrium serve --help' for its usage.\n"
    r = run("token", "create", "-k", "x")
    assert r.returncode == 2
    assert r.stderr == (
        "atrium: token create: unknown option -k (options start with two dashes, e.g. --help)\n"
        "Run 'atrium token create --help' for its usage.\n")
    r = run("config", "check", "a.json", "b.json")
    assert r.returncode == 2
    assert r.stderr == (
        "atrium: config check: unexpected argument \"b.json\"\nRun 'atrium config check --help' for its usage.\n")
    r = run("token", "make")
    assert r.returncode == 2
    assert r.stderr == (
        "atrium: unknown command \"token make\"; did you mean 'atrium token create'?\n"
        "Run 'atrium --help' for the commands.\n")
    r = run("srve")
    assert r.returncode == 2
    assert r.stderr == "atrium: unknown command \"srve\"\nRun 'atrium --help' for the commands.\n"
    r = run("-h")
    assert r.returncode == 2
    assert r.stderr == (
        "atrium: unknown option -h (options start with two dashes, e.g. --help)\n"
        "Run 'atrium --help' for the commands.\n")


def cannot_start(r):
    """The error of a server that refused to start (exit 1, no banner, nothing listening)."""
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert "is running" not in r.stdout, r.stdout
    line = next(l for l in r.stderr.splitlines() if 'msg="cannot start"' in l)
    return json.loads(line.split(" error=", 1)[1])


def test_a_tcp_port_in_use_names_the_port_and_the_flag(tmpdir_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = run("serve", "--dev", "--store", "memory", "--data-dir", tmpdir_path, "--port", str(port),
                "--udp-port", "0")
    assert cannot_start(r) == (
        f"TCP port {port} is already in use on 127.0.0.1 (another atrium running?): stop that process, "
        "or choose another port with --port N (--port 0 picks a free one)")


def test_a_udp_port_in_use_names_the_port_and_the_flag(tmpdir_path):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        r = run("serve", "--dev", "--store", "memory", "--data-dir", tmpdir_path, "--port", "0",
                "--udp-port", str(port))
    assert cannot_start(r) == (
        f"UDP port {port} is already in use on 127.0.0.1 (another atrium running?): stop that process, "
        "or choose another port with --udp-port N (--udp-port 0 picks a free one)")


# 192.0.2.1 (TEST-NET-1, RFC 5737) is never an address of this machine; nothing is sent to it.
FOREIGN = "192.0.2.1"


def test_bind_to_an_address_of_another_machine_is_refused_before_the_banner(tmpdir_path):
    r = run("serve", "--dev", "--store", "memory", "--data-dir", tmpdir_path, "--bind", FOREIGN,
            "--port", "0", "--udp-port", "0")
    assert cannot_start(r) == (
        f"--bind {FOREIGN} is not an address of this machine: use 127.0.0.1 (this machine only), "
        "0.0.0.0 (every interface) or one of the machine's own addresses")
    r = run("serve", "--dev", "--store", "memory", "--bind", "localhost")
    assert r.returncode == 2
    assert "bind: \"localhost\" is not an IPv4 or IPv6 address" in r.stderr


def test_config_check_reports_bind_tls_files_and_keys(tmpdir_path):
    path = os.path.join(tmpdir_path, "atrium.json")
    with open(path, "w") as f:
        json.dump({"bind": FOREIGN, "tls": {"cert": "/nonexistent/cert.pem", "key": "/nonexistent/key.pem"}}, f)
    r = run("config", "check", path)
    assert r.returncode == 1
    assert r.stdout.splitlines() == [
        f"{path}: bind: --bind {FOREIGN} is not an address of this machine: use 127.0.0.1 (this machine only), "
        "0.0.0.0 (every interface) or one of the machine's own addresses",
        f"{path}: warning: tls.cert: cannot read /nonexistent/cert.pem: serve refuses to start without it",
        f"{path}: warning: tls.key: cannot read /nonexistent/key.pem: serve refuses to start without it",
        f"{path}: warning: keys: no API keys (in the file's \"keys\" or ATRIUM_KEYS): serve refuses to start "
        "without --keys, ATRIUM_KEYS or dev",
    ]
    # The same file with a local address and keys from the environment: only the TLS warnings, ok.
    with open(path, "w") as f:
        json.dump({"bind": "0.0.0.0", "tls": {"cert": "/nonexistent/cert.pem", "key": "/nonexistent/key.pem"}}, f)
    r = run("config", "check", path, env={**ENV, "ATRIUM_KEYS": "k:" + "s" * 32})
    assert r.returncode == 0
    assert r.stdout.splitlines()[-1] == f"{path}: ok"
    assert not any("keys" in l for l in r.stdout.splitlines())


def test_token_create_refuses_the_readme_placeholders_and_short_secrets():
    r = run("token", "create", "--key", "devxxxxxxx", "--secret", "...", "--room", "demo", "--identity", "alice",
            "--sources", "camera,microphone,screen_share")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == (
        "atrium: token create: --key devxxxxxxx and --secret ... are the README's placeholders: use the API key "
        "and secret the server printed (\"API key:\", \"API secret:\") or the ones it was given with --keys\n")
    r = run("token", "create", "--key", "k", "--secret", "short-secret", "--room", "demo", "--identity", "alice")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == (
        "atrium: token create: the secret is 12 bytes; secrets must have at least 32 bytes "
        "(the server refuses shorter ones outside --dev)\n")
    r = run("token", "create", "--key", "k", "--secret", "s" * 32, "--room", "Team standup", "--identity", "a")
    assert r.returncode == 2
    assert r.stderr == (
        "atrium: token create: --room \"Team standup\" is not a valid room name: 1 to 128 characters of "
        "A-Z a-z 0-9 _ - . (no spaces)\n")
    r = run("token", "create", "--key", "k", "--secret", "s" * 32, "--room", "team-standup", "--identity", "a")
    assert r.returncode == 0 and r.stdout.count(".") == 2


def test_an_invalid_room_name_has_its_own_code(dev_server):
    """Admin API, /dev/token and a join with a token for such a room: `invalid_room_name`."""
    want = "\"Team standup\" is not a valid room name: 1 to 128 characters of A-Z a-z 0-9 _ - . (no spaces)"
    status, _, _, err = dev_server.request("POST", "/v1/rooms", {"name": "Team standup"})
    assert status == 422 and err["error"] == {"code": "invalid_room_name", "message": "name: " + want,
                                              "field": "name"}
    status, _, _, err = dev_server.request("GET", "/dev/token?room=Team%20standup&name=Ada", token=None)
    assert status == 422 and err["error"] == {"code": "invalid_room_name", "message": want, "field": "room"}

    async def go():
        token = mint_jwt(dev_server, "ada", {"room": "Team standup", "roomJoin": True, "roomCreate": True})
        c = await connect(dev_server, "ada", token=token)
        try:
            e = await c.refused("join", "invalid_room_name", protocol=1)
            assert e.message == want
        finally:
            await c.close()
    asyncio.run(go())
