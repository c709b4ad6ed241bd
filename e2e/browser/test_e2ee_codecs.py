"""End-to-end encryption with every video codec the server forwards (docs/e2ee.md): in a room created
with `e2ee`, alice's Chromium page publishes its canvas camera in H264 (simulcast; the NAL units up to
the slice header clear, the rest escaped), VP9 and AV1 (one SVC encoding, L3T3_KEY; AV1's OBU headers
clear) in turn. Bob's page receives each in the codec asked for, decrypts and decodes it (content
checked), and still does on the low layer the server switches him to (a simulcast layer for H264, a
spatial layer for VP9 and AV1): the server reads what it needs through the encryption. The server
keeps an H264 share's picture (its key frames found through the encryption) and a late joiner decodes
it; an outsider's page with another passphrase decodes none of it.
"""
import time

from test_e2ee_page import (
    ERRORS, PUBLISH_SHARE, check_canvas, join_unable_to_decrypt, metric, open_e2ee_room)
from test_simulcast import CONNECT, PUBLISH_CANVAS, inbound, size_is, wait_inbound, wait_remote

# The MIME type of the codec a viewer receives a track in (its inbound-rtp's codec).
CODEC_OF = """
const [name, trackId] = arguments;
const peer = window.peers[name];
const remote = peer.remoteTracks.find((t) => t.trackId === trackId);
if (!remote) return null;
const stats = await peer.subscriber.getStats();
let codecId = null;
stats.forEach((s) => { if (s.type === "inbound-rtp" && s.mid === remote.mid && s.framesDecoded > 0) codecId = s.codecId; });
const codec = codecId && stats.get(codecId);
return codec ? codec.mimeType : null;
"""

PASSPHRASE = {"e2ee": {"passphrase": "codec room"}}


def starts(server):
    """Video viewers started from the cache (at once or as a fallback) or from a key frame asked for."""
    return sum(metric(server, "atrium_media_key_frame_cache_starts_total", result=r)
               for r in ("served", "fallback", "fresh"))


def received_codec(page, name, track, want):
    deadline = time.time() + 30
    while (got := page.js_async(CODEC_OF, name, track)) != want:
        assert time.time() < deadline, f"{name} decodes {track} as {got}, not {want}"
        time.sleep(0.3)


def test_h264_vp9_and_av1_decrypt_and_switch_layers(dev_server, browsers):
    room = "e2ee-codecs"
    a, b = browsers("a"), browsers("b")
    open_e2ee_room(dev_server, room, a, b)
    a.js_async(CONNECT, room, "alice", "participant", PASSPHRASE)
    b.js_async(CONNECT, room, "bob", "participant", PASSPHRASE)
    b.js_async(ERRORS, "bob")
    for codec, mime, options in (
        ("h264", "video/H264", {"codec": "h264"}),
        ("vp9", "video/VP9", {"codec": "vp9", "scalabilityMode": "L3T3_KEY"}),
        ("av1", "video/AV1", {"codec": "av1", "scalabilityMode": "L3T3_KEY"}),
    ):
        track = a.js_async(PUBLISH_CANVAS, "alice", options)["trackId"]
        wait_remote(b, "bob", track)
        received_codec(b, "bob", track, mime)
        check_canvas(b, "bob", track)
        assert b.js_async("return await window.peers.bob.setQuality(arguments[0], 'low');", track)
        wait_inbound(b, "bob", track, lambda st: size_is(st, 320, 180), 40, f"bob on alice's low {codec} layer")
        check_canvas(b, "bob", track)
        assert a.js_async("await window.peers.alice.unpublish(arguments[0]); return true;", track)
    assert b.js("return window.peers.bob.e2eeErrors") == []

    # An H264 share: the server finds its key frames through the encryption and keeps the picture
    # for new viewers; a late joiner starts from it, or from a key frame the server asks for when
    # the cached one is old and the sharer answers (ViewerStart), and decodes it. (The VP8 test,
    # test_e2ee_page.py, asserts the replay itself.)
    share = a.js_async(PUBLISH_SHARE, "alice", {"codec": "h264"}, "screen_share")["trackId"]
    wait_remote(b, "bob", share)
    received_codec(b, "bob", share, "video/H264")
    check_canvas(b, "bob", share)
    deadline = time.time() + 15  # the metrics snapshot is copied about once a second
    while metric(dev_server, "atrium_media_track_key_frame_cache_bytes", track=share) <= 0:
        assert time.time() < deadline, "no cached H264 picture of the share"
        time.sleep(0.3)
    started = starts(dev_server)
    b.js_async(CONNECT, room, "carol", "participant", PASSPHRASE)
    wait_remote(b, "carol", share)
    check_canvas(b, "carol", share)
    deadline = time.time() + 15
    while starts(dev_server) <= started:
        assert time.time() < deadline, "carol's start was not counted"
        time.sleep(0.3)

    # Another passphrase: the packets arrive, no H264 frame decodes, the failure is reported.
    join_unable_to_decrypt(b, room, "mallory", "another", share)
    got = inbound(b, "mallory").get(share) or {}
    assert got.get("packets", 0) > 0 and got.get("frames", 0) == 0, got
