"""End-to-end encryption in the JavaScript SDK (docs/e2ee.md): a room created with `e2ee`; two
Chromium pages with the same passphrase publish a canvas camera each (SFrame through
`RTCRtpScriptTransform`, VP8 with its header left clear) and decode each other's canvas (content
checked), through a simulcast switch and a mute and resume; a late joiner starts from the server's
cached picture of a share (ciphertext) and decodes it; the key rolls to a new index without a frame
failing to decrypt. A third page with another passphrase receives the packets but decodes no frame and is told
whose frames failed (`e2ee_error`); an aiortc subscriber without any key decodes no picture of the
canvas: the server forwards ciphertext. A page without the option cannot join (`e2ee_required`), and
one with it refuses a room that is not encrypted (`e2ee_mismatch`).
"""
import asyncio
import json
import os
import sys
import time

from test_simulcast import (
    CONNECT, PIXELS, PUBLISH_CANVAS, inbound, near, open_page, size_is, wait_inbound, wait_remote)
from test_simulcast_aiortc import classify_canvas

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
import media_peer  # noqa: E402
from metrics_text import sample_of  # noqa: E402
import signal_client  # noqa: E402

ERRORS = """
const [name] = arguments;
const peer = window.peers[name];
peer.e2eeErrors = [];
peer.addEventListener("e2ee_error", (e) => peer.e2eeErrors.push(e.detail));
return true;
"""

# PUBLISH_CANVAS with the source as a third argument.
PUBLISH_SHARE = PUBLISH_CANVAS.replace("const [name, options] = arguments;",
                                       "const [name, options, source] = arguments;").replace('"camera"', "source")

CONNECT_REFUSED = """
const [room, name, options] = arguments;
const { Room } = await import("/sdk/atrium.js");
const q = new URLSearchParams({room, name, role: "participant", identity: name});
const {token} = await (await fetch(`/dev/token?${q}`, {cache: "no-store"})).json();
try {
  await Room.connect(`ws://${location.host}/v1/signal`, token, {name, ...(options || {})});
  return "connected";
} catch (e) {
  return e.code;
}
"""


def test_two_pages_with_a_passphrase_decode_each_other_and_others_see_ciphertext(dev_server, browsers, monkeypatch):
    room = "e2ee-page"
    a, b, c = browsers("a"), browsers("b"), browsers("c")
    open_e2ee_room(dev_server, room, a, b, c)
    assert c.js_async(CONNECT_REFUSED, room, "plain") == "e2ee_required"
    # The other way: a page asked to encrypt refuses a room the server says is not encrypted.
    assert dev_server.request("POST", "/v1/rooms", {"name": "e2ee-page-plain"})[0] == 201
    assert c.js_async(CONNECT_REFUSED, "e2ee-page-plain", "careful", {"e2ee": {"passphrase": "x"}}) == "e2ee_mismatch"
    a.js_async(CONNECT, room, "alice", "participant", {"e2ee": {"passphrase": "correct horse"}})
    b.js_async(CONNECT, room, "bob", "participant", {"e2ee": {"passphrase": "correct horse"}})
    alice_cam = a.js_async(PUBLISH_CANVAS, "alice", {})["trackId"]
    bob_cam = b.js_async(PUBLISH_CANVAS, "bob", {})["trackId"]
    wait_remote(b, "bob", alice_cam)
    wait_remote(a, "alice", bob_cam)
    for page, name, track in ((b, "bob", alice_cam), (a, "alice", bob_cam)):
        page.wait(f"return window.peers[{json.dumps(name)}].remoteTracks.length >= 1", 20, "a remote track")
        check_canvas(page, name, track)

    # Under encryption the server still switches layers (VP8 headers clear): bob asks alice's low layer.
    assert b.js_async("return await window.peers.bob.setQuality(arguments[0], 'low');", alice_cam)
    wait_inbound(b, "bob", alice_cam, lambda st: size_is(st, 320, 180), 30, "bob on alice's low layer")
    check_canvas(b, "bob", alice_cam)
    # Paused (muted) and resumed: the server drops, then starts again at a key frame.
    a.js_async("return await window.peers.alice.setMuted(arguments[0], true);", alice_cam)
    before = inbound(b, "bob").get(alice_cam, {}).get("frames", 0)
    a.js_async("return await window.peers.alice.setMuted(arguments[0], false);", alice_cam)
    wait_inbound(b, "bob", alice_cam, lambda st: st["frames"] > before + 10, 30, "bob's frames after the resume")
    check_canvas(b, "bob", alice_cam)
    # A share (bob's canvas as a screen share): a late joiner starts from the server's cached picture
    # (ciphertext it never read) and decodes it.
    share = b.js_async(PUBLISH_SHARE, "bob", {}, "screen_share")["trackId"]
    wait_remote(a, "alice", share)
    check_canvas(a, "alice", share)
    served = cache_served(dev_server)
    a.js_async(CONNECT, room, "carol", "participant", {"e2ee": {"passphrase": "correct horse"}})
    wait_remote(a, "carol", share)
    check_canvas(a, "carol", share)
    deadline = time.time() + 15  # the metrics snapshot is copied about once a second
    while cache_served(dev_server) <= served:
        assert time.time() < deadline, "carol did not start from the key-frame cache"
        time.sleep(0.3)

    # The key rolls to index 1 (a key the app hands out by its own channel): every page adds it for
    # receiving, then each sender switches; nothing fails to decrypt meanwhile, and decoding goes on.
    b.js_async(ERRORS, "bob")
    roll = ("await window.peers[arguments[0]].setE2EEKey(new Uint8Array(32).fill(7), 1, {send: arguments[1]});"
            "return true;")
    for send in (False, True):
        for page, name in ((b, "bob"), (a, "alice"), (a, "carol")):
            assert page.js_async(roll, name, send)
    check_canvas(b, "bob", alice_cam)
    check_canvas(a, "alice", bob_cam)
    assert b.js("return window.peers.bob.e2eeErrors") == []
    # A newcomer with the passphrase alone cannot read index 1, until the app hands it the new key.
    join_unable_to_decrypt(c, room, "dave", "correct horse", alice_cam)
    assert c.js_async(roll, "dave", False)
    check_canvas(c, "dave", alice_cam)

    # A wrong passphrase: packets arrive, no frame decodes, and the page is told whose failed.
    join_unable_to_decrypt(c, room, "mallory", "wrong", alice_cam)
    got = inbound(c, "mallory").get(alice_cam) or {}
    assert got.get("packets", 0) > 0 and got.get("frames", 0) == 0, got

    # Without any key (aiortc): the packets carry ciphertext, no picture of the canvas.
    monkeypatch.setattr(media_peer, "classify_video", classify_canvas)

    async def outsider():
        eve = await signal_client.joined(dev_server, "eve", room=room)
        sub = media_peer.Subscriber(eve)
        try:
            await sub.wait_until(lambda: sub.by_track(alice_cam) is not None, "alice's camera", 20)
            await asyncio.sleep(4)
            st = sub.by_track(alice_cam)
            canvas = sum(n for cls, n in st.classes.items() if cls.endswith("-canvas"))
            assert canvas == 0, st
            packets = 0
            for t in sub.pc.getTransceivers():
                if t.mid == st.mid:
                    report = await t.receiver.getStats()
                    packets += sum(r.packetsReceived for r in report.values() if r.type == "inbound-rtp")
            assert packets > 0, f"no packets of alice's camera reached the outsider: {st}"
            return st, packets
        finally:
            await sub.close()
            await eve.close()

    print(asyncio.run(asyncio.wait_for(outsider(), 60)))


def open_e2ee_room(server, room, *pages):
    """Creates `room` with `e2ee` and opens the SDK's page in each of `pages` (Chromium or Firefox)."""
    status, _, _, created = server.request("POST", "/v1/rooms", {"name": room, "e2ee": True})
    assert status == 201 and created["e2ee"] is True, created
    for page in pages:
        open_page(page, f"http://127.0.0.1:{server.port}")


def join_unable_to_decrypt(page, room, name, passphrase, track):
    """`name` joins with a passphrase that is not the one `track` was encrypted with (or a key it
    lacks): it receives the track and is told its frames do not decrypt (`e2ee_error`)."""
    page.js_async(CONNECT, room, name, "participant", {"e2ee": {"passphrase": passphrase}})
    page.js_async(ERRORS, name)
    wait_remote(page, name, track)
    page.wait(f"return window.peers[{json.dumps(name)}].e2eeErrors.some((e) => e.trackId === {json.dumps(track)}"
              " && e.kind === 'video')", 30, f"{name} failing to decrypt {track}")


def metric(server, name, **labels):
    """One sample (the sum over matching labels) of the server's /metrics."""
    _, _, body, _ = server.request("GET", "/metrics", token=None)
    return sample_of(body.decode(), name, **labels)


def cache_served(server):
    """Viewers started from the key-frame cache, as the server's metrics say."""
    return metric(server, "atrium_media_key_frame_cache_starts_total", result="served")


def check_canvas(page, name, track):
    """Decoded frames of `track` on the page show the canvas (any simulcast layer: blue left, yellow
    right)."""
    r = None
    for _ in range(6):
        r = page.js_async(PIXELS, name, track, 5)
        if len(r.get("frames", [])) >= 5:
            break
    frames = r.get("frames", [])
    assert len(frames) >= 5, f"{name}: {r}"
    for f in frames:
        assert near(f["left"], (0, 0, 255)) and near(f["right"], (255, 255, 0)), f
