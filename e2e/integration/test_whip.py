"""WHIP ingest with a third-party WebRTC stack: GStreamer's webrtcbin (gst_whip.py) publishes a solid
magenta picture into a room as a screen share with one POST; an aiortc viewer decodes it (the frames'
content is checked against the pattern); DELETE ends the share with `user_stopped`; a publisher that
disappears without DELETE loses its share with `disconnected` once ICE consent runs out (30 s). WHEP
players, GStreamer's (gst_whep.py) and aiortc's, follow the room's share from the WHIP publisher to
a participant's, each on the one stream per kind it opened.

libnice (under webrtcbin) gathers no loopback candidate, so this runs in the private namespace of
`make netns`, where the test adds a veth address (10.9.0.1) that both the server and GStreamer use;
aiortc keeps to 127.0.0.1. Debian 12's `simple-whip-client` cannot run here (it links libsoup2, the
GStreamer 1.22 webrtc plugin libsoup3: libsoup aborts), so gst_whip.py drives the same webrtcbin.
"""
import os
import socket
import subprocess

import pytest

from conftest import Server, stopped_cleanly
from media_peer import WHIP_PATTERN, Publisher, Subscriber
from signal_client import joined, mint, run
from whep_peer import WhepPlayer
from whip_peer import GstWhep, GstWhip

_OTHERS = [name for _, name in socket.if_nameindex() if name != "lo"]
pytestmark = pytest.mark.skipif(bool(_OTHERS), reason=f"needs a loopback-only network namespace, not {_OTHERS}")

VETH_ADDRESS = "10.9.0.1"
TEST_TIMEOUT = 120


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    subprocess.run(["ip", "link", "add", "whip0", "type", "veth", "peer", "name", "whip1"], check=True)
    try:
        subprocess.run(["ip", "addr", "add", f"{VETH_ADDRESS}/24", "dev", "whip0"], check=True)
        for dev in ("whip0", "whip1"):
            # No IPv6 link-local address arriving later: ICE agents gathering meanwhile see no change.
            with open(f"/proc/sys/net/ipv6/conf/{dev}/disable_ipv6", "w") as f:
                f.write("1")
            subprocess.run(["ip", "link", "set", dev, "up"], check=True)
        d = tmp_path_factory.mktemp("whip")
        s = Server(os.path.join(d, "data"), "--dev", "--store", "memory", "--auto-create-rooms", "any",
                   "--udp-port", "0", "--media-bind", "0.0.0.0", "--media-announce", f"127.0.0.1,{VETH_ADDRESS}"
                   ).start()
        yield s
        stopped_cleanly(s)
    finally:
        subprocess.run(["ip", "link", "del", "whip0"], check=False)


def url(server, room):
    return f"http://127.0.0.1:{server.port}/v1/rooms/{room}/whip"


def test_gstreamer_publishes_a_share_that_a_viewer_decodes_and_delete_ends_it(server):
    async def go():
        viewer = await joined(server, "viewer", room="whip-media")
        sub = Subscriber(viewer)
        pub = await GstWhip.start(url(server, "whip-media"), mint(server, "whip-media", "obs", name="OBS"))
        try:
            e = await pub.event()
            assert e["event"] == "published" and e["status"] == 201, e
            started = await viewer.expect("share_started")
            joined_msg = await viewer.expect("participant_joined")
            assert joined_msg["participant"]["identity"] == "obs"
            track = started["share"]["trackId"]
            await sub.wait_frames([track], 20, timeout=30)
            st = sub.by_track(track)
            assert st.source == "screen_share" and st.info["participantId"] == started["share"]["participantId"]
            assert st.classes[WHIP_PATTERN] >= 0.9 * st.frames, st
            d = await pub.stop()
            assert d == {"event": "deleted", "status": 200}, d
            stopped = await viewer.expect("share_stopped")
            assert stopped["reason"] == "user_stopped" and stopped["share"]["id"] == started["share"]["id"]
            assert server.metric("atrium_whip_sessions") == 0
        finally:
            await pub.close()
            await sub.close()
            await viewer.close()

    run(go(), TEST_TIMEOUT)


def test_a_publisher_gone_without_delete_loses_its_share_when_consent_runs_out(server):
    async def go():
        viewer = await joined(server, "viewer", room="whip-gone")
        viewer.start_keepalive()  # it waits longer than the idle timeout
        pub = await GstWhip.start(url(server, "whip-gone"), mint(server, "whip-gone", "obs"))
        try:
            assert (await pub.event())["status"] == 201
            started = await viewer.expect("share_started")
            server.wait_metric("atrium_media_packets_total", lambda v: v > 0, timeout=30, direction="in")
            pub.kill()
            # ICE consent (RFC 7675) runs out after 30 s without a check; the timeout is a hang guard.
            stopped = await viewer.expect("share_stopped", timeout=75)
            assert stopped["reason"] == "disconnected" and stopped["share"]["id"] == started["share"]["id"]
            left = await viewer.expect("participant_left", timeout=10)
            assert left["reason"] == "disconnected"
        finally:
            await pub.close()
            await viewer.close()

    run(go(), TEST_TIMEOUT)


def test_whep_players_follow_the_share_from_a_whip_publisher_to_a_participant(server):
    async def go():
        room = "whep-follow"
        alice = await joined(server, "alice", room=room)
        gst = await GstWhep.start(f"http://127.0.0.1:{server.port}/v1/rooms/{room}/whep", mint(server, room, "tv"))
        player = await WhepPlayer.start(server.port, room, mint(server, room, "fan"))
        pubs = []
        try:
            # Stats come every second from the start; the POST's answer once ICE has gathered.
            while (e := await gst.event())["event"] == "stats":
                pass
            assert e["event"] == "playing" and e["status"] == 201, e
            assert player.status == 201, player.error
            pubs.append(await GstWhip.start(url(server, room), mint(server, room, "obs")))
            assert (await pubs[0].event())["status"] == 201
            first = (await alice.expect("share_started"))["share"]
            await gst.wait_class("video", WHIP_PATTERN, 15, timeout=40)
            await player.wait_class("video", WHIP_PATTERN, 15, timeout=40)
            assert (await pubs[0].stop())["status"] == 200
            await alice.expect("share_stopped", lambda m: m["share"]["id"] == first["id"])

            pubs.append(await Publisher.start(alice, ["screen_share", "microphone"]))
            await gst.wait_class("video", "screen_share", 15, timeout=40)
            await gst.wait_class("audio", "microphone", 2, timeout=40)
            await player.wait_class("video", "screen_share", 15, timeout=40)
            # One stream of each kind for the session's life: the share changed under it.
            assert sorted(gst.pads) == ["audio", "video"], gst.pads
            assert not player.stats["video"].ended
            gst.proc.stdin.write(b"stop\n")
            await gst.proc.stdin.drain()
            while (e := await gst.event())["event"] != "deleted":
                pass
            assert e["status"] == 200
        finally:
            await gst.close()
            await player.close()
            for p in pubs:
                await p.close()
            await alice.close()

    run(go(), TEST_TIMEOUT)
