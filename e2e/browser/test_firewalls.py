"""Viewers behind firewalls (docs/firewalls.md): headless Chromium for which UDP to the media
server is blocked (nftables rules on lo, inside the loopback-only namespace these tests run in) gets the
camera and the share over ICE-TCP (RFC 6544, the server's passive candidate on --media-tcp-port), and,
with UDP and the media server's TCP port both blocked, through coturn over TCP (a relayed pair). The
publisher's page connects over UDP before the rules go in; `ct state new` keeps its flow open.

Misbehaving TCP peers (garbage, a silent connection, half a frame) are dropped while the ICE-TCP viewer
keeps decoding.

    unshare -n -- sh -c 'ip link set lo up && python3 -m pytest e2e/browser/test_firewalls.py'
"""
import json
import os
import socket
import subprocess
import sys
import time

import pytest

from conftest import start_server
from test_key_frame_cache import counter
from test_meeting_page import assert_sources_by_content, join, sample_sources, wait_decoding, wait_stage, \
    wait_tile_video

# B decodes frames on each source within 30 s, then more on each within 20 s: patient, since a loaded
# machine can hold a picture back for a few seconds (no rate is asserted).
PATIENT = {"timeout": 30, "growth": 20}

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
from coturn import RELAY_MAX, RELAY_MIN, Coturn, free_port  # noqa: E402

TABLE = "atrium_firewall_test"

# The subscriber (or publisher) connection's selected candidate pair, as getStats has it.
SELECTED_PAIR = """
const [which] = arguments;
const pc = window.atriumApp.room[which];
if (!pc) return null;
const stats = await pc.getStats();
let pair = null;
stats.forEach((s) => { if (s.type === "transport" && s.selectedCandidatePairId) pair = stats.get(s.selectedCandidatePairId); });
if (!pair) return null;
const l = stats.get(pair.localCandidateId), r = stats.get(pair.remoteCandidateId);
return {state: pair.state, bytesReceived: pair.bytesReceived,
        local: {type: l.candidateType, protocol: l.protocol, relayProtocol: l.relayProtocol || null, port: l.port},
        remote: {type: r.candidateType, protocol: r.protocol, tcpType: r.tcpType || null, port: r.port}};
"""


def nft(*rules):
    """Installs `rules` in an output chain of a table of our own (replacing it)."""
    subprocess.run(["nft", "delete", "table", "inet", TABLE], capture_output=True)
    subprocess.run(["nft", "add", "table", "inet", TABLE], check=True)
    subprocess.run(["nft", "add", "chain", "inet", TABLE, "out", "{ type filter hook output priority 0; }"], check=True)
    for r in rules:
        subprocess.run(["nft", "add", "rule", "inet", TABLE, "out", *r.split()], check=True)


def nft_clear():
    subprocess.run(["nft", "delete", "table", "inet", TABLE], capture_output=True)


def publish_camera_and_share(a):
    a.click("camera-toggle")
    a.wait("return document.querySelector('[data-testid=\"camera-toggle\"]').dataset.state === 'on'", 15, "camera on")
    a.click("share-toggle")
    a.wait("return document.querySelector('[data-testid=\"share-toggle\"]').dataset.state === 'on'", 15, "sharing")
    a.wait("const p = window.atriumApp.room.publisher; return !!p && p.connectionState === 'connected';", 20,
           "the publisher connection to connect")


def selected_pair(b, which="subscriber", timeout=15):
    deadline = time.time() + timeout
    pair = None
    while time.time() < deadline:
        pair = b.js_async(SELECTED_PAIR, which)
        if pair and pair["state"] == "succeeded":
            return pair
        time.sleep(0.3)
    raise AssertionError(f"{b.name}: no selected {which} pair: {pair}")


def receive_camera_and_share(b, a_id, camera):
    wait_tile_video(b, a_id, timeout=30)
    wait_stage(b, a_id, timeout=30)
    wait_decoding(b, ["camera", "screen_share"], **PATIENT)
    samples = sample_sources(b, a_id)
    assert_sources_by_content(samples, camera)


def closed_by_server(sock, timeout):
    """True when the server closes the connection (end of stream or reset) within `timeout`."""
    sock.settimeout(timeout)
    try:
        while True:
            data = sock.recv(4096)
            if not data:
                return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False
    finally:
        sock.close()


@pytest.mark.timeout(600)
def test_a_viewer_without_udp_receives_camera_and_share_over_ice_tcp(server_dir, browsers, artifacts, camera_y4m, figures):
    udp, tcp = free_port(), free_port()
    s = start_server(server_dir, "--dev", "--udp-port", str(udp), "--media-tcp-port", str(tcp), "--media-workers", "1")
    try:
        base = f"http://127.0.0.1:{s.port}"
        a = browsers("a", camera=camera_y4m)
        a_id = join(a, base, "ice-tcp", "Alice", "host")
        publish_camera_and_share(a)
        assert selected_pair(a, "publisher")["local"]["protocol"] == "udp"
        # No new UDP flow to the media port from here on: the viewer's checks over UDP never arrive.
        nft(f"udp dport {udp} ct state new counter drop")
        b = browsers("b")
        join(b, base, "ice-tcp", "Bob", "participant")
        c = browsers("c")
        join(c, base, "ice-tcp", "Carol", "participant")
        receive_camera_and_share(b, a_id, camera_y4m)
        wait_decoding(c, ["camera", "screen_share"], **PATIENT)
        pair = selected_pair(b)
        print(f"viewer's selected pair: {json.dumps(pair)}")
        assert pair["local"]["protocol"] == "tcp" and pair["remote"]["protocol"] == "tcp", pair
        assert pair["remote"]["tcpType"] == "passive" and pair["remote"]["port"] == tcp, pair
        # Chromium's active candidate has port 9; the server's answer tells it its real port (prflx).
        assert pair["local"]["type"] in ("host", "prflx"), pair
        # The publisher's pair stayed on UDP.
        assert selected_pair(a, "publisher")["local"]["protocol"] == "udp"
        assert counter(s, "atrium_media_tcp_connections") >= 1
        assert counter(s, "atrium_media_tcp_frames_total", direction="out") > 0

        # Misbehaving TCP peers: an HTTP request (its first two bytes announce an 18 KB frame), a frame
        # that is not STUN, half a frame and then nothing, a connection that says nothing.
        http = socket.create_connection(("127.0.0.1", tcp))
        http.sendall(b"GET / HTTP/1.1\r\nHost: atrium\r\n\r\n")
        not_stun = socket.create_connection(("127.0.0.1", tcp))
        not_stun.sendall(b"\x00\x08" + b"\xff" * 8)
        half = socket.create_connection(("127.0.0.1", tcp))
        half.sendall(b"\x00\x64" + b"\x00\x01" * 5)
        silent = socket.create_connection(("127.0.0.1", tcp))
        # (Hang guards: the server drops the first two at once and the last two at its 10 s check.)
        assert closed_by_server(http, 60), "a peer sending HTTP was not dropped"
        assert closed_by_server(not_stun, 60), "a peer sending a non-STUN frame first was not dropped"
        assert closed_by_server(half, 120), "a peer that stalled in the middle of a frame was not dropped"
        assert closed_by_server(silent, 120), "a silent peer was not dropped"
        # A viewer whose connection stops taking data (what the server sends it is dropped before it
        # arrives, so nothing it is sent is acknowledged): dropped as stalled, by the kernel's
        # TCP_USER_TIMEOUT however little it is sent, or once the connection's queue waited 5 s (which
        # comes only after the kernel's buffer filled: once in CI that took over 30 s).
        c_port = selected_pair(c)["local"]["port"]
        stalled_before = counter(s, "atrium_media_tcp_closed_total", reason="stalled")
        nft(f"udp dport {udp} ct state new counter drop", f"tcp sport {tcp} tcp dport {c_port} counter drop")
        cut = time.time()
        while counter(s, "atrium_media_tcp_closed_total", reason="stalled") <= stalled_before:
            assert time.time() < cut + 240, "a viewer that took nothing was not dropped as stalled"
            time.sleep(0.5)
        figures("ice_tcp_stalled_viewer_dropped_s", round(time.time() - cut, 1), "s", "<= 15")
        # The other viewer's media went on over its own connection.
        wait_decoding(b, ["camera", "screen_share"], **PATIENT)
        assert selected_pair(b)["local"]["protocol"] == "tcp"
        # The metrics snapshot is taken once a second: polled, with a hang guard.
        deadline = time.time() + 30
        while not (counter(s, "atrium_media_tcp_closed_total", reason="garbage") >= 2
                   and counter(s, "atrium_media_tcp_closed_total", reason="idle") >= 2):
            assert time.time() < deadline, "the garbage and idle closes were not counted"
            time.sleep(0.3)
        b.screenshot("ice-tcp-viewer")
    finally:
        nft_clear()
        s.stop()


def test_a_viewer_reaching_only_coturn_over_tcp_receives_through_turn(server_dir, browsers, artifacts, camera_y4m):
    turn = Coturn("coturn-shared-secret-for-the-browser-tests-0123").start()
    udp, tcp = free_port(), free_port()
    s = start_server(server_dir, "--dev", "--udp-port", str(udp), "--media-tcp-port", str(tcp), "--media-workers", "1", *turn.server_flags())
    try:
        base = f"http://127.0.0.1:{s.port}"
        a = browsers("a", camera=camera_y4m)
        a_id = join(a, base, "turn-tcp", "Alice", "host")
        publish_camera_and_share(a)
        servers = a.js("return window.atriumApp.room.iceServers")
        assert servers and servers[0]["urls"] == turn.urls(), servers
        # For the viewer: no UDP at all but coturn's relayed flows to the media port, no TCP to the media
        # server: only coturn's TCP port is open.
        nft(f"tcp dport {tcp} counter drop",
            f"udp dport {turn.port} counter drop",
            f"udp dport {udp} udp sport != {RELAY_MIN}-{RELAY_MAX} ct state new counter drop")
        b = browsers("b")
        join(b, base, "turn-tcp", "Bob", "participant")
        receive_camera_and_share(b, a_id, camera_y4m)
        pair = selected_pair(b)
        print(f"viewer's selected pair: {json.dumps(pair)}")
        assert pair["local"]["type"] == "relay" and pair["local"]["relayProtocol"] == "tcp", pair
        assert pair["remote"]["protocol"] == "udp" and pair["remote"]["port"] == udp, pair
        b.screenshot("turn-tcp-viewer")
    finally:
        nft_clear()
        s.stop()
        with open(os.path.join(artifacts, "coturn.log"), "w") as f:
            f.write(turn.log_text())
        turn.stop()
