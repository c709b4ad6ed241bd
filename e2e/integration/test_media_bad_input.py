"""Bad input to the media requests of `/v1/signal` (docs/protocol.md, "Media negotiation"):
`publish_offer`, `subscriber_answer` and `ice_candidate`. Each is answered with its documented error
(or, for a bad transceiver, a result whose `rejected` names it), the server keeps serving, and the
participant and its room go on working: a ping and an update seen by another participant, and in
the tests that say so a real publish (aiortc, media_peer.py) whose frames a subscriber decodes.

The offers are real aiortc offers made in this process (the peer connection only gathers its
127.0.0.1 candidate and is closed), edited line by line; the captured offers and answers of
Tests/AtriumTestSupport/Fixtures/sdp and 300 seeded byte-level mutations of an aiortc offer are fed as
offers too.

Runs alone with `python3 -m pytest e2e/integration/test_media_bad_input.py`.
"""
import collections
import glob
import json
import os
import random
import re
import time

import pytest
from aiortc import RTCSessionDescription

from conftest import ROOT
from media_peer import Publisher, _Worker, peer_connection
from signal_client import SignalError, close_all, connect, joined, run
from test_media import assert_carries, run_in_room

FIXTURES = sorted(glob.glob(os.path.join(ROOT, "Tests", "AtriumTestSupport", "Fixtures", "sdp", "*.sdp")))
FUZZ_SEED = 20261130
FUZZ_CASES = 300

# What a publish_offer may be refused with when its SDP is bad (the whole request), and what a
# section of an accepted offer may be rejected with (docs/protocol.md section 10 and the media section).
SDP_ERRORS = {"invalid_sdp", "sdp_unsupported"}
SECTION_CODES = {"unbound_mid", "kind_mismatch", "no_common_codec", "track_not_found", "not_allowed",
                 "share_locked", "too_many_shares", "share_in_progress", "no_active_share",
                 "already_published", "invalid_field"}


@pytest.fixture(scope="module")
def server(media_server):
    """The module's media server (conftest), under the name these tests use."""
    return media_server


# -- offers and SDP editing ------------------------------------------------------------------------

async def aiortc_offer(kinds=("video", "audio"), datachannel=False):
    """A real aiortc offer with one sendonly transceiver per kind (mids "0", "1", ... in order)
    and, when asked, a data channel."""
    pc = peer_connection()
    try:
        for kind in kinds:
            pc.addTransceiver(kind, direction="sendonly")
        if datachannel:
            pc.createDataChannel("chat")
        await pc.setLocalDescription(await pc.createOffer())
        return pc.localDescription.sdp
    finally:
        await pc.close()


async def aiortc_answer(offer_sdp):
    """(answer sdp, the peer connection): a subscriber's real answer to a server offer. The caller
    closes the peer connection."""
    pc = peer_connection()
    await pc.setRemoteDescription(RTCSessionDescription(sdp=offer_sdp, type="offer"))
    await pc.setLocalDescription(await pc.createAnswer())
    return pc.localDescription.sdp, pc


def sdp_lines(sdp):
    return sdp.replace("\r\n", "\n").rstrip("\n").split("\n")


def sdp_text(lines):
    return "\r\n".join(lines) + "\r\n"


def without(sdp, *prefixes):
    """The SDP without every line starting with one of `prefixes`."""
    return sdp_text([l for l in sdp_lines(sdp) if not l.startswith(prefixes)])


def edit_section(sdp, mid, edit):
    """Applies `edit(lines) -> lines` to the media section whose a=mid is `mid`."""
    out, section = [], None
    for line in sdp_lines(sdp) + ["m=__end"]:
        if line.startswith("m="):
            if section is not None:
                out += edit(section) if f"a=mid:{mid}" in section else section
            section = [line]
        elif section is not None:
            section.append(line)
        else:
            out.append(line)
    return sdp_text(out)


def only_codec(sdp, mid, keep):
    """The section `mid` offering only the payload types whose rtpmap line satisfies `keep`
    (their rtcp-fb and fmtp lines kept, every other format's removed)."""
    def edit(section):
        pts = [re.match(r"a=rtpmap:(\d+) ", l).group(1) for l in section if l.startswith("a=rtpmap:") and keep(l)]
        assert pts, "no format kept"

        def other_format(line):
            m = re.match(r"a=(rtpmap|rtcp-fb|fmtp):(\d+) ", line)
            return m is not None and m.group(2) not in pts
        head = section[0].split()
        return [" ".join(head[:3] + pts)] + [l for l in section[1:] if not other_format(l)]
    return edit_section(sdp, mid, edit)


def sections_of(sdp, with_direction=False):
    """[(kind, port, mid)] (and the direction, when asked) of an SDP's media sections, in order."""
    out = []
    for line in sdp_lines(sdp):
        if line.startswith("m="):
            kind, port = line[2:].split()[:2]
            out.append([kind, int(port), None, "sendrecv"])
        elif line.startswith("a=mid:") and out and out[-1][2] is None:
            out[-1][2] = line[6:].strip()
        elif line.strip() in ("a=sendrecv", "a=sendonly", "a=recvonly", "a=inactive") and out:
            out[-1][3] = line.strip()[2:]
    return [tuple(s) if with_direction else tuple(s[:3]) for s in out]


def check_answer(offer_sdp, result, accepted, rejected):
    """The result accepts exactly `accepted` ({mid: source}) and rejects exactly `rejected`
    ({mid: code}); its answer has the offer's sections in order: each accepted one `recvonly` with a
    port, each refused by policy `inactive` on the same transport (it stays in the BUNDLE group), a
    data channel section accepted (a port and `a=sctp-port:5000`, docs/protocol.md "Data channels"),
    and every other one (no forwarded codec, stopped, not media) at port 0."""
    assert {t["mid"]: t["source"] for t in result["tracks"]} == accepted, result["tracks"]
    assert all(t["trackId"].startswith("tr_") for t in result["tracks"]), result["tracks"]
    assert {r["mid"]: r["code"] for r in result["rejected"]} == rejected, result["rejected"]
    offered = [(kind, mid) for kind, _, mid in sections_of(offer_sdp)]
    answered = sections_of(result["sdp"])
    assert [(kind, mid) for kind, _, mid in answered] == offered, result["sdp"]
    data_mids = {mid for kind, _, mid in answered if kind == "application"}
    for _, port, mid, direction in sections_of(result["sdp"], with_direction=True):
        if mid in data_mids:
            assert port != 0 and "a=sctp-port:5000" in result["sdp"], result["sdp"]
        elif mid in accepted:
            assert port != 0 and direction == "recvonly", f"mid {mid} at port {port} {direction}: {result['sdp']}"
        elif mid in rejected and rejected[mid] != "no_common_codec":
            assert port != 0 and direction == "inactive", f"mid {mid} at port {port} {direction}: {result['sdp']}"
        else:
            assert port == 0, f"mid {mid} at port {port}: {result['sdp']}"


# -- the room still works --------------------------------------------------------------------------

def server_state(server):
    err = open(server.err_path).read()
    return f"server {'running' if server.alive() else 'exited %s' % server.proc.returncode}; stderr tail: {err[-1500:]}"


async def still_serving(server, client, observer=None):
    """The server runs, `client`'s socket is open and answers a ping, and (with an observer in the
    room) an update of `client` reaches the observer."""
    assert server.alive(), server_state(server)
    assert not client.is_closed, f"{client.label}: socket closed {client.close_code} {client.close_reason!r}"
    assert "pong" in await client.request("ping")
    if observer is not None:
        name = f"still-{time.monotonic_ns()}"
        await client.request("update", name=name)
        await observer.expect("participant_updated", lambda m: m["participant"]["id"] == client.participant_id
                              and m["participant"]["name"] == name)


async def in_room(server, room, scenario, identity="alice", role=None, **join):
    """Runs `scenario(client, observer)` with `identity` and an observer joined to `room`; then checks
    that both still work."""
    observer = await joined(server, "observer", room=room)
    client = await joined(server, identity, room=room, role=role, **join)
    try:
        await scenario(client, observer)
        await still_serving(server, client, observer)
    finally:
        await close_all(client, observer)


def tracks_for(sdp, sources=("camera", "screen_share")):
    """A `tracks` list binding every audio/video section of an offer: video sections to `sources` in
    turn, audio ones to the microphone."""
    entries, videos = [], iter(sources)
    for kind, port, mid in sections_of(sdp):
        if mid is None:
            continue
        if kind == "audio":
            entries.append({"mid": mid, "source": "microphone"})
        elif kind == "video":
            source = next(videos, None)
            if source:
                entries.append({"mid": mid, "source": source})
    return entries


CAMERA_MIC = [{"mid": "0", "source": "camera"}, {"mid": "1", "source": "microphone"}]


# -- publish_offer: errors of the whole request ----------------------------------------------------

def _garbage_offer(o):
    return "".join(chr((i * 37 + 11) % 256) for i in range(400))


def _truncated_in_m_line(o):
    return o[: o.index("m=audio") + 5]


def _second_mid_as_first(o):
    return o.replace("a=mid:1", "a=mid:0")


WHOLE_REQUEST_CASES = {
    # name: (fields of the request from the real offer `o`, expected code, field named by invalid_field)
    "sdp missing": (lambda o: {"tracks": CAMERA_MIC}, "invalid_field", "sdp"),
    "sdp null": (lambda o: {"sdp": None, "tracks": CAMERA_MIC}, "invalid_field", "sdp"),
    "sdp a number": (lambda o: {"sdp": 4611, "tracks": CAMERA_MIC}, "invalid_field", "sdp"),
    "sdp the description object": (lambda o: {"sdp": {"type": "offer", "sdp": o}, "tracks": CAMERA_MIC},
                                   "invalid_field", "sdp"),
    "sdp an array": (lambda o: {"sdp": sdp_lines(o), "tracks": CAMERA_MIC}, "invalid_field", "sdp"),
    "sdp empty": (lambda o: {"sdp": "", "tracks": CAMERA_MIC}, "invalid_sdp", None),
    "sdp garbage text": (lambda o: {"sdp": "hello, this is not an offer", "tracks": CAMERA_MIC}, "invalid_sdp", None),
    "sdp garbage bytes": (lambda o: {"sdp": _garbage_offer(o), "tracks": CAMERA_MIC}, "invalid_sdp", None),
    "sdp with a NUL": (lambda o: {"sdp": o.replace("s=-", "s=\x00"), "tracks": CAMERA_MIC}, "invalid_sdp", None),
    "offer truncated in an m= line": (lambda o: {"sdp": _truncated_in_m_line(o), "tracks": CAMERA_MIC},
                                      "invalid_sdp", None),
    "offer truncated in a fingerprint": (lambda o: {"sdp": o[: o.rindex("a=fingerprint:sha-256") + 40],
                                                    "tracks": CAMERA_MIC}, "invalid_sdp", None),
    "offer truncated to its session part": (lambda o: {"sdp": o[: o.index("m=")], "tracks": CAMERA_MIC},
                                            "sdp_unsupported", None),
    "offer truncated before the last section's rtcp-mux": (
        lambda o: {"sdp": o[: o.rindex("a=rtcp-mux")], "tracks": CAMERA_MIC}, "sdp_unsupported", None),
    "no BUNDLE": (lambda o: {"sdp": without(o, "a=group:BUNDLE"), "tracks": CAMERA_MIC}, "sdp_unsupported", None),
    "BUNDLE without the audio": (lambda o: {"sdp": o.replace("a=group:BUNDLE 0 1", "a=group:BUNDLE 0"),
                                            "tracks": CAMERA_MIC}, "sdp_unsupported", None),
    "BUNDLE of another semantics": (lambda o: {"sdp": o.replace("a=group:BUNDLE", "a=group:LS"),
                                               "tracks": CAMERA_MIC}, "sdp_unsupported", None),
    "no rtcp-mux": (lambda o: {"sdp": without(o, "a=rtcp-mux"), "tracks": CAMERA_MIC}, "sdp_unsupported", None),
    "no rtcp-mux on the audio": (lambda o: {"sdp": edit_section(o, "1", lambda s: [l for l in s if l != "a=rtcp-mux"]),
                                            "tracks": CAMERA_MIC}, "sdp_unsupported", None),
    "no fingerprint": (lambda o: {"sdp": without(o, "a=fingerprint"), "tracks": CAMERA_MIC}, "sdp_unsupported", None),
    "no ice-ufrag": (lambda o: {"sdp": without(o, "a=ice-ufrag"), "tracks": CAMERA_MIC}, "sdp_unsupported", None),
    "no ice-pwd": (lambda o: {"sdp": without(o, "a=ice-pwd"), "tracks": CAMERA_MIC}, "sdp_unsupported", None),
    "duplicate mids": (lambda o: {"sdp": _second_mid_as_first(o), "tracks": CAMERA_MIC[:1]}, "sdp_unsupported", None),
    "a section without a mid": (lambda o: {"sdp": without(o, "a=mid:1"), "tracks": CAMERA_MIC[:1]},
                                "sdp_unsupported", None),
    # tracks
    "tracks an object": (lambda o: {"sdp": o, "tracks": {"mid": "0", "source": "camera"}}, "invalid_field", "tracks"),
    "tracks a string": (lambda o: {"sdp": o, "tracks": "0"}, "invalid_field", "tracks"),
    "tracks null": (lambda o: {"sdp": o, "tracks": None}, "invalid_field", "tracks"),
    "17 tracks": (lambda o: {"sdp": o, "tracks": [{"mid": str(i), "source": "camera"} for i in range(17)]},
                  "invalid_field", "tracks"),
    "a track that is not an object": (lambda o: {"sdp": o, "tracks": [CAMERA_MIC[0], "1"]}, "invalid_field", "tracks"),
    "a track without mid": (lambda o: {"sdp": o, "tracks": [CAMERA_MIC[0], {"source": "microphone"}]},
                            "invalid_field", "mid"),
    "a track whose mid is a number": (lambda o: {"sdp": o, "tracks": [{"mid": 0, "source": "camera"}]},
                                      "invalid_field", "mid"),
    "a track of an unknown mid": (lambda o: {"sdp": o, "tracks": CAMERA_MIC + [{"mid": "7", "source": "screen_share"}]},
                                  "invalid_field", "tracks"),
    "a mid bound twice": (lambda o: {"sdp": o, "tracks": CAMERA_MIC + [{"mid": "0", "source": "screen_share"}]},
                          "invalid_field", "tracks"),
    "an unknown source": (lambda o: {"sdp": o, "tracks": [{"mid": "0", "source": "hologram"}, CAMERA_MIC[1]]},
                          "invalid_field", "source"),
    "neither source nor trackId": (lambda o: {"sdp": o, "tracks": [{"mid": "0"}, CAMERA_MIC[1]]},
                                   "invalid_field", "source"),
}


async def refused_offer(client, observer, fields, code, field):
    """Sends a publish_offer that must be refused as a whole, with nothing published."""
    e = await client.refused("publish_offer", code, **fields)
    if field is not None:
        assert e.field == field, f"invalid_field names {e.field!r} ({e.message}), expected {field!r}"
    assert e.message, e.reply
    if code == "invalid_sdp":
        assert "line" in e.message or "v=" in e.message, f"invalid_sdp should name the line: {e.message}"
    await observer.no_event("track_published")
    return e


@pytest.mark.parametrize("case", list(WHOLE_REQUEST_CASES))
def test_a_bad_offer_is_refused_and_nothing_is_published(server, case):
    build, code, field = WHOLE_REQUEST_CASES[case]
    room = "bad-offer-" + re.sub(r"\W+", "-", case)

    async def scenario(alice, observer):
        o = await aiortc_offer()
        await refused_offer(alice, observer, build(o), code, field)
        # The same participant's correct offer is then accepted.
        result = await alice.request("publish_offer", sdp=o, tracks=CAMERA_MIC)
        check_answer(o, result, {"0": "camera", "1": "microphone"}, {})
        for t in result["tracks"]:
            await observer.expect("track_published", lambda m, t=t: m["track"]["id"] == t["trackId"])

    run(in_room(server, room, scenario))


def test_after_every_bad_offer_the_same_participant_publishes_for_real(server):
    """Every refused offer above from the same participant, then it publishes a camera and a
    microphone with a real peer connection and a subscriber decodes them."""
    async def scenario(s):
        alice = await s.join("alice")
        bob = await s.join("bob")
        sub = s.subscribe(bob)
        o = await aiortc_offer()
        for case, (build, code, field) in WHOLE_REQUEST_CASES.items():
            try:
                await refused_offer(alice, bob, build(o), code, field)
            except AssertionError as e:
                raise AssertionError(f"{case}: {e}") from e
        await still_serving(s.server, alice, bob)

        pub = await s.publish(alice, ["camera", "microphone"])
        assert pub.rejected == [], pub.rejected
        ids = {src: pub.track_id(src) for src in ("camera", "microphone")}
        await sub.wait_frames([ids["camera"]], 30, timeout=10)
        await sub.wait_frames([ids["microphone"]], 25, timeout=5)
        assert_carries(sub, ids, alice.participant_id)

    run_in_room(server, "bad-offers-then-real", scenario)


def test_a_new_peer_connection_after_an_accepted_offer_gets_its_media_through(server):
    """An offer from one peer connection is accepted (here a data channel only, so nothing is bound),
    then the participant publishes from a new peer connection (a client that recreates its publisher
    connection, or probed with a throwaway one): new ICE credentials and a new DTLS certificate for
    the transport the first offer opened. The answer is accepted, so the media must flow: the server
    must start a new DTLS association with the new fingerprint (a server that keeps the endpoint made
    for the first one logs `dtls failed ... the peer certificate does not match the signaled
    fingerprint`, the new connection stays `connecting` and nothing is forwarded)."""
    async def scenario(s):
        alice = await s.join("alice")
        bob = await s.join("bob")
        sub = s.subscribe(bob)
        dc = await aiortc_offer(kinds=(), datachannel=True)
        check_answer(dc, await alice.request("publish_offer", sdp=dc), {}, {})
        await still_serving(s.server, alice, bob)

        pub = await s.publish(alice, ["camera"])
        camera = pub.track_id("camera")
        try:
            await sub.wait_frames([camera], 30, timeout=10)
        except AssertionError as e:
            stats = await pub.stats()
            log = [l for l in open(s.server.err_path).read().splitlines() if "dtls" in l or "ice restart" in l]
            raise AssertionError(f"{e}\npublisher: {stats['connectionState']}, sent {stats['sent']}\n"
                                 f"server log: {log[-4:]}") from e
        assert_carries(sub, {"camera": camera}, alice.participant_id)

    run_in_room(server, "new-pc-after-offer", scenario)


def test_an_offer_over_the_message_limit_closes_1009_and_the_session_resumes(server):
    """The sdp field's limit (65536 bytes) is above what one message may carry (65536 bytes,
    envelope included): a 70,000-byte offer closes the socket with 1009 as any oversized message
    does, the participant resumes on a new socket and publishes. An offer of about 62,000 bytes
    (padded with an attribute the server ignores) fits and is accepted."""
    async def go():
        observer = await joined(server, "observer", room="huge-offer")
        alice = await joined(server, "alice", room="huge-offer")
        resumed = None
        try:
            o = await aiortc_offer()
            pad = "".join(f"a=x-padding:{'p' * 88}\r\n" for _ in range(700))
            huge = o + pad
            assert len(huge.encode()) >= 70_000
            await alice.send_json({"type": "publish_offer", "id": "huge", "sdp": huge, "tracks": CAMERA_MIC})
            assert await alice.wait_closed() == (1009, "message larger than 65536 bytes")
            assert server.alive(), server_state(server)

            resumed = await connect(server, "alice", room="huge-offer")
            await resumed.resume(alice.resume_token)
            big = o + pad[: 62_000 - len(o)]
            assert len(json.dumps({"type": "publish_offer", "id": 99999, "sdp": big, "tracks": CAMERA_MIC})) < 65536
            result = await resumed.request("publish_offer", sdp=big, tracks=CAMERA_MIC)
            check_answer(o, result, {"0": "camera", "1": "microphone"}, {})
            await still_serving(server, resumed, observer)
        finally:
            await close_all(resumed, alice, observer)
    run(go())


# -- publish_offer: sections rejected --------------------------------------------------------------

def test_a_data_channel_section_beside_the_media_is_accepted(server):
    async def scenario(alice, observer):
        o = await aiortc_offer(datachannel=True)
        assert [k for k, _, _ in sections_of(o)] == ["video", "audio", "application"]
        result = await alice.request("publish_offer", sdp=o, tracks=CAMERA_MIC)
        # The application section is accepted (data channels); it is not a transceiver, so not listed.
        check_answer(o, result, {"0": "camera", "1": "microphone"}, {})
        await observer.expect("track_published")
    run(in_room(server, "dc-beside-media", scenario))


def test_unbound_sections_are_rejected_and_can_be_bound_by_the_next_offer(server):
    async def scenario(alice, observer):
        o = await aiortc_offer()
        check_answer(o, await alice.request("publish_offer", sdp=o, tracks=[]),
                     {}, {"0": "unbound_mid", "1": "unbound_mid"})
        check_answer(o, await alice.request("publish_offer", sdp=o, tracks=CAMERA_MIC[1:]),
                     {"1": "microphone"}, {"0": "unbound_mid"})
        await observer.expect("track_published", lambda m: m["track"]["source"] == "microphone")
        # mid 1 stays bound to its track: a later offer needs no entry for it.
        check_answer(o, await alice.request("publish_offer", sdp=o, tracks=CAMERA_MIC[:1]),
                     {"0": "camera", "1": "microphone"}, {})
        await observer.expect("track_published", lambda m: m["track"]["source"] == "camera")
    run(in_room(server, "unbound", scenario))


def test_transceivers_rejected_then_bound_by_the_next_offer_carry_media(server):
    """A client whose first offer binds nothing (every section rejected unbound_mid) offers the same
    transceivers again with their tracks and applies that answer: the server forwards them, though it
    was told to drop the very same SSRCs and mids a moment before."""
    async def scenario(s):
        alice = await s.join("alice")
        bob = await s.join("bob")
        sub = s.subscribe(bob)
        worker = await _Worker.spawn()
        try:
            offer = await worker.call("offer", sources=["camera", "microphone"])
            mids = offer["mids"]
            first = await alice.request("publish_offer", sdp=offer["sdp"], tracks=[])
            check_answer(offer["sdp"], first, {}, {mids["camera"]: "unbound_mid", mids["microphone"]: "unbound_mid"})
            tracks = [{"mid": mids["camera"], "source": "camera"}, {"mid": mids["microphone"], "source": "microphone"}]
            second = await alice.request("publish_offer", sdp=offer["sdp"], tracks=tracks)
            check_answer(offer["sdp"], second, {mids["camera"]: "camera", mids["microphone"]: "microphone"}, {})
            await worker.call("answer", sdp=second["sdp"])
        except BaseException:
            await worker.close()
            raise
        pub = Publisher(alice, worker, mids, second)
        s._opened.append(pub)
        ids = {src: pub.track_id(src) for src in ("camera", "microphone")}
        await sub.wait_frames([ids["camera"]], 30, timeout=10)
        await sub.wait_frames([ids["microphone"]], 25, timeout=5)
        assert_carries(sub, ids, alice.participant_id)

    run_in_room(server, "reject-then-bind", scenario)


def test_an_audio_transceiver_bound_to_the_camera_is_a_kind_mismatch(server):
    async def scenario(alice, observer):
        o = await aiortc_offer(kinds=("audio", "video"))
        result = await alice.request("publish_offer", sdp=o, tracks=[{"mid": "0", "source": "camera"},
                                                                        {"mid": "1", "source": "microphone"}])
        check_answer(o, result, {}, {"0": "kind_mismatch", "1": "kind_mismatch"})
        await observer.no_event("track_published")
        # The mismatch published nothing: the camera is still free for the video transceiver.
        result = await alice.request("publish_offer", sdp=o, tracks=[{"mid": "1", "source": "camera"},
                                                                        {"mid": "0", "source": "microphone"}])
        check_answer(o, result, {"0": "microphone", "1": "camera"}, {})
    run(in_room(server, "kind-mismatch", scenario))


@pytest.mark.parametrize("which", ["video", "audio"])
def test_a_section_without_a_forwarded_codec_is_rejected(server, which):
    async def scenario(alice, observer):
        o = await aiortc_offer()
        if which == "video":     # H264 High profile only: Atrium forwards baseline and main
            bad = only_codec(o, "0", lambda l: "H264" in l)
            bad = re.sub(r"profile-level-id=42[0-9a-f]{4}", "profile-level-id=64001f", bad)
            expected = ({"1": "microphone"}, {"0": "no_common_codec"})
        else:                    # PCMU and PCMA only
            bad = only_codec(o, "1", lambda l: "PCM" in l)
            expected = ({"0": "camera"}, {"1": "no_common_codec"})
        result = await alice.request("publish_offer", sdp=bad, tracks=CAMERA_MIC)
        check_answer(bad, result, *expected)
    run(in_room(server, f"no-codec-{which}", scenario))


def test_binding_announced_tracks_by_track_id(server):
    """`{"mid", "trackId"}` binds a track announced with `publish`: only the participant's own, not
    yet bound, of the transceiver's kind."""
    async def scenario(alice, observer):
        theirs = (await observer.request("publish", source="camera"))["track"]["id"]
        camera = (await alice.request("publish", source="camera"))["track"]["id"]
        mic = (await alice.request("publish", source="microphone"))["track"]["id"]
        o = await aiortc_offer(kinds=("video", "audio", "video", "video", "audio"))

        async def offer(tracks):
            return await alice.request("publish_offer", sdp=o, tracks=tracks)

        result = await offer([{"mid": "0", "trackId": theirs}, {"mid": "1", "trackId": "tr_nosuchtrack"},
                              {"mid": "2", "trackId": 42}, {"mid": "3", "trackId": mic},
                              {"mid": "4", "trackId": camera}])
        check_answer(o, result, {}, {"0": "track_not_found", "1": "track_not_found", "2": "track_not_found",
                                     "3": "kind_mismatch", "4": "kind_mismatch"})
        result = await offer([{"mid": "0", "trackId": camera}, {"mid": "1", "trackId": mic},
                              {"mid": "2", "trackId": camera}])
        check_answer(o, result, {"0": "camera", "1": "microphone"},
                     {"2": "invalid_field", "3": "unbound_mid", "4": "unbound_mid"})
        assert {t["trackId"] for t in result["tracks"]} == {camera, mic}
        # observer's track is untouched: still its own, still published.
        snapshot = await joined(server, "late", room="by-track-id")
        try:
            owners = {t["id"]: p["id"] for p in snapshot.snapshot["participants"] for t in p["tracks"]}
            assert owners.get(theirs) == observer.participant_id, owners
        finally:
            await snapshot.close()
    run(in_room(server, "by-track-id", scenario))


def test_a_viewer_gets_every_section_rejected_with_not_allowed(server):
    async def scenario(vic, observer):
        o = await aiortc_offer(kinds=("video", "audio", "video"))
        tracks = [{"mid": "0", "source": "camera"}, {"mid": "1", "source": "microphone"},
                  {"mid": "2", "source": "screen_share", "width": 1280, "height": 720}]
        result = await vic.request("publish_offer", sdp=o, tracks=tracks)
        check_answer(o, result, {}, {"0": "not_allowed", "1": "not_allowed", "2": "not_allowed"})
        await observer.no_event("track_published")
        await observer.no_event("share_started")
    run(in_room(server, "viewer-offer", scenario, identity="vic", role="viewer"))


# -- publish_offer: captured SDPs and mutations ----------------------------------------------------

def check_publish_outcome(outcome, label):
    """A publish_offer answer is a result of the documented shape or a documented SDP error."""
    if isinstance(outcome, SignalError):
        assert outcome.code in SDP_ERRORS | {"invalid_field"}, f"{label}: {outcome.code}: {outcome.message}"
        return outcome.code
    assert isinstance(outcome.get("sdp"), str) and outcome["sdp"].startswith("v=0\r\n"), f"{label}: {outcome}"
    for r in outcome["rejected"]:
        assert r["code"] in SECTION_CODES, f"{label}: rejected with {r}"
    return "result"


async def publish_outcome(client, **fields):
    try:
        return await client.request("publish_offer", **fields)
    except SignalError as e:
        return e


@pytest.mark.parametrize("path", FIXTURES, ids=[os.path.basename(p) for p in FIXTURES])
def test_every_captured_sdp_as_an_offer_gets_a_result_or_a_documented_error(server, path):
    """Offers, answers, pre-gathering and after-setLocalDescription captures of Chrome, Firefox,
    aiortc and Janus: offered as they are, once binding every section and once binding none. An
    accepted offer's answer has the offer's sections in order."""
    text = open(path, newline="").read()
    assert len(FIXTURES) >= 30

    async def scenario(alice, observer):
        for tracks in (tracks_for(text), []):
            outcome = await publish_outcome(alice, sdp=text, tracks=tracks)
            check_publish_outcome(outcome, os.path.basename(path))
            if not isinstance(outcome, SignalError):
                assert [m for _, _, m in sections_of(outcome["sdp"])] == [m for _, _, m in sections_of(text)]
            assert not alice.is_closed and server.alive(), server_state(server)

    run(in_room(server, "fixture-" + re.sub(r"[^\w.-]+", "-", os.path.basename(path)), scenario))


def mutate(data, rng):
    """One to three random byte-level edits of `data` (bytes)."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        if not b:
            b = bytearray(b"v")
        op = rng.randrange(10)
        i = rng.randrange(len(b))
        if op == 0:                                     # overwrite a byte
            b[i] = rng.randrange(256)
        elif op == 1:                                   # insert bytes
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
        elif op == 2:                                   # delete a span
            del b[i:i + rng.randint(1, 40)]
        elif op == 3:                                   # duplicate a span
            b[i:i] = b[i:i + rng.randint(1, 200)]
        elif op == 4:                                   # truncate
            del b[i:]
        elif op == 5:                                   # a line break, NUL, space or '=' inserted
            b[i:i] = rng.choice([b"\r\n", b"\n", b"\r", b"\x00", b" ", b"="])
        elif op in (6, 7):                              # lines dropped, doubled or swapped
            lines = bytes(b).split(b"\r\n")
            j, k = rng.randrange(len(lines)), rng.randrange(len(lines))
            if op == 6:
                lines[j:j + 1] = [] if rng.random() < 0.5 else [lines[j], lines[j]]
            else:
                lines[j], lines[k] = lines[k], lines[j]
            b = bytearray(b"\r\n".join(lines))
        elif op == 8:                                   # a number made huge, negative or empty
            numbers = list(re.finditer(rb"\d+", bytes(b)))
            if numbers:
                m = rng.choice(numbers)
                b[m.start():m.end()] = rng.choice([b"4294967296", b"-1", b"", b"99999999999999999999", b"0"])
        else:                                           # a span's case flipped
            b[i:i + 8] = bytes(b[i:i + 8]).swapcase()
    return bytes(b)


def test_random_mutations_of_a_real_offer_never_break_the_server(server):
    """FUZZ_CASES seeded mutations of an aiortc offer (video, video, audio), each sent as a
    publish_offer (half binding the three mids, half binding none), on a few sockets so that the rate
    limit (burst 100) is never reached. Every one gets a result or a documented error within the
    request timeout; no socket closes; afterwards the server still serves and accepts a clean offer."""
    async def go():
        rng = random.Random(FUZZ_SEED)
        base = (await aiortc_offer(kinds=("video", "video", "audio"))).encode()
        tracks = [{"mid": "0", "source": "camera"}, {"mid": "1", "source": "screen_share"},
                  {"mid": "2", "source": "microphone"}]
        outcomes = collections.Counter()
        clients = []
        try:
            for n in range(FUZZ_CASES):
                if n % 50 == 0:
                    clients.append(await joined(server, f"fuzz{n}", room=f"fuzz-{n // 50}"))
                c = clients[-1]
                mutated = mutate(base, rng).decode("latin-1")    # every byte becomes one character
                label = f"mutation {n} (seed {FUZZ_SEED})"
                try:
                    outcome = await publish_outcome(c, sdp=mutated, tracks=tracks if n % 2 else [])
                except AssertionError as e:
                    raise AssertionError(f"{label}: {e}\n{server_state(server)}\nsdp: {mutated!r}") from e
                outcomes[check_publish_outcome(outcome, f"{label}: {mutated!r}")] += 1
                assert not c.is_closed, f"{label}: socket closed {c.close_code} {c.close_reason}"
            assert server.alive(), server_state(server)
            print(f"mutation outcomes: {dict(outcomes)}")
            assert outcomes["result"] > 0 and sum(outcomes[c] for c in SDP_ERRORS) > 0, outcomes
            for c in clients:
                await still_serving(server, c)
            fresh = await joined(server, "after-fuzz", room="fuzz-after")
            clients.append(fresh)
            clean = await aiortc_offer()
            check_answer(clean, await fresh.request("publish_offer", sdp=clean, tracks=CAMERA_MIC),
                         {"0": "camera", "1": "microphone"}, {})
        finally:
            await close_all(*clients)
    run(go(), 120)


# -- subscriber_answer -----------------------------------------------------------------------------

def test_subscriber_answer_without_a_pending_offer_is_stale(server):
    async def scenario(alice, observer):
        o = await aiortc_offer()
        for revision in (0, 1, 2 ** 31 - 1):
            await alice.refused("subscriber_answer", "stale_revision", revision=revision, sdp=o)
        await alice.refused("subscriber_answer", "invalid_field", revision=-1, sdp=o)
        await alice.refused("subscriber_answer", "invalid_field", revision="1", sdp=o)
        await alice.refused("subscriber_answer", "invalid_field", revision=1.5, sdp=o)
        await alice.refused("subscriber_answer", "invalid_field", sdp=o)
        await alice.refused("subscriber_answer", "invalid_field", revision=1)
    run(in_room(server, "answer-nothing-pending", scenario, autoSubscribe=False))


def test_bad_answers_leave_the_offer_pending_for_a_good_one(server):
    """bob's answers to his pending subscriber offer: a wrong revision, garbage, mids that do not
    match the offer's, no fingerprint, no rtcp-mux; each refused, and the offer is then answered by a
    real subscriber, which decodes alice's camera. A second answer to it is stale; the next offer
    (carol publishes) is answered too."""
    async def scenario(s):
        bob = await s.join("bob")
        alice = await s.join("alice")
        pub = await s.publish(alice, ["camera"])
        camera = pub.track_id("camera")
        offer = await bob.expect("subscriber_offer", lambda m: any(t["trackId"] == camera for t in m["tracks"]),
                                 timeout=5)
        revision = offer["revision"]
        answer, pc = await aiortc_answer(offer["sdp"])
        try:
            mids = [m for _, _, m in sections_of(offer["sdp"])]
            renamed = answer
            for mid in mids:
                renamed = renamed.replace(f"a=mid:{mid}\r\n", f"a=mid:x{mid}\r\n")
            cases = [
                ({"revision": revision + 1, "sdp": answer}, "stale_revision"),
                ({"revision": revision - 1, "sdp": answer}, "stale_revision"),
                ({"revision": str(revision), "sdp": answer}, "invalid_field"),
                ({"revision": revision}, "invalid_field"),
                ({"revision": revision, "sdp": 12}, "invalid_field"),
                ({"revision": revision, "sdp": ""}, "invalid_sdp"),
                ({"revision": revision, "sdp": "v=0\r\ngarbage\r\n"}, "invalid_sdp"),
                ({"revision": revision, "sdp": answer[: answer.index("m=") + 9]}, "invalid_sdp"),
                ({"revision": revision, "sdp": renamed}, "sdp_unsupported"),
                ({"revision": revision, "sdp": answer[: answer.index("m=")]}, "sdp_unsupported"),
                ({"revision": revision, "sdp": without(answer, "a=fingerprint")}, "sdp_unsupported"),
                ({"revision": revision, "sdp": without(answer, "a=ice-ufrag")}, "sdp_unsupported"),
                ({"revision": revision, "sdp": without(answer, "a=rtcp-mux")}, "sdp_unsupported"),
            ]
            for fields, code in cases:
                e = await bob.refused("subscriber_answer", code, **fields)
                assert e.message, e.reply
            await still_serving(s.server, bob, alice)
        finally:
            await pc.close()

        # The offer is still pending: a real subscriber answers it (it is put back for it to find).
        bob.events.insert(0, offer)
        sub = s.subscribe(bob)
        await sub.wait_frames([camera], 20, timeout=10)
        assert sub.revisions[0] == revision, sub.revisions
        assert_carries(sub, {"camera": camera}, alice.participant_id)
        await bob.refused("subscriber_answer", "stale_revision", revision=revision, sdp=answer)

        carol = await s.join("carol")
        o = await aiortc_offer(kinds=("audio",))
        added = await carol.request("publish_offer", sdp=o, tracks=[{"mid": "0", "source": "microphone"}])
        mic = added["tracks"][0]["trackId"]
        await sub.wait_until(lambda: any(t["trackId"] == mic for t in sub.live.values())
                             and len(sub.revisions) >= 2, "an answered offer with carol's microphone", 5)
        assert sub.revisions[1] > revision, sub.revisions
        await sub.wait_more_frames([camera], 10, timeout=5)

    run_in_room(server, "bad-answers", scenario)


# -- ice_candidate ---------------------------------------------------------------------------------

GOOD_CANDIDATE = "candidate:1 1 udp 2130706431 127.0.0.1 50000 typ host"

ICE_CASES = {
    # name: (fields, expected code or None for a result {}, field)
    "target missing": ({"candidate": GOOD_CANDIDATE}, "invalid_field", "target"),
    "target unknown": ({"target": "both", "candidate": GOOD_CANDIDATE}, "invalid_field", "target"),
    "target empty": ({"target": "", "candidate": GOOD_CANDIDATE}, "invalid_field", "target"),
    "target upper case": ({"target": "PUBLISHER", "candidate": GOOD_CANDIDATE}, "invalid_field", "target"),
    "target a number": ({"target": 0, "candidate": GOOD_CANDIDATE}, "invalid_field", "target"),
    "target long": ({"target": "publisher" * 10, "candidate": GOOD_CANDIDATE}, "invalid_field", "target"),
    "candidate missing": ({"target": "publisher"}, "invalid_field", "candidate"),
    "candidate null": ({"target": "publisher", "candidate": None}, "invalid_field", "candidate"),
    "candidate an RTCIceCandidate object": ({"target": "publisher", "candidate": {"candidate": GOOD_CANDIDATE,
                                             "sdpMid": "0", "sdpMLineIndex": 0}}, "invalid_field", "candidate"),
    "candidate garbage": ({"target": "publisher", "candidate": "garbage"}, "invalid_field", "candidate"),
    "candidate prefix only": ({"target": "subscriber", "candidate": "candidate:"}, "invalid_field", "candidate"),
    "candidate without typ": ({"target": "publisher", "candidate": "candidate:1 1 udp 2130706431 127.0.0.1 50000 host"},
                              "invalid_field", "candidate"),
    "candidate port out of range": ({"target": "publisher",
                                     "candidate": "candidate:1 1 udp 2130706431 127.0.0.1 70000 typ host"},
                                    "invalid_field", "candidate"),
    "candidate priority not a number": ({"target": "publisher",
                                         "candidate": "candidate:1 1 udp high 127.0.0.1 50000 typ host"},
                                        "invalid_field", "candidate"),
    "candidate dangling raddr": ({"target": "subscriber",
                                  "candidate": GOOD_CANDIDATE.replace("host", "srflx") + " raddr"},
                                 "invalid_field", "candidate"),
    "candidate over 1024 bytes": ({"target": "publisher", "candidate": GOOD_CANDIDATE + " x" * 600},
                                  "invalid_field", "candidate"),
    "end of candidates": ({"target": "publisher", "candidate": ""}, None, None),
    "end of candidates, subscriber": ({"target": "subscriber", "candidate": ""}, None, None),
    "a host candidate": ({"target": "publisher", "candidate": GOOD_CANDIDATE}, None, None),
    "with a=": ({"target": "subscriber", "candidate": "a=" + GOOD_CANDIDATE}, None, None),
    "without candidate:": ({"target": "publisher", "candidate": GOOD_CANDIDATE[len("candidate:"):]}, None, None),
    "an mDNS tcp candidate": ({"target": "publisher", "candidate":
                               "candidate:2 1 tcp 1518280447 0b3f2c1e-6c1d-4f3a-9b1e-1c2d3e4f5a6b.local 9 typ host "
                               "tcptype active generation 0 network-id 1"}, None, None),
}


@pytest.mark.parametrize("case", list(ICE_CASES))
def test_ice_candidate_input(server, case):
    fields, code, field = ICE_CASES[case]

    async def scenario(alice, observer):
        if code is None:
            assert await alice.request("ice_candidate", **fields) == {}
        else:
            e = await alice.refused("ice_candidate", code, **fields)
            assert e.field == field, e.message
    run(in_room(server, "ice-" + re.sub(r"\W+", "-", case), scenario))


def test_ice_candidates_around_a_real_publish(server):
    """Trickled candidates (good, bad, end-of-candidates) before and after a real publish change
    nothing: the publisher connection is up and the subscriber decodes its camera."""
    async def scenario(s):
        alice = await s.join("alice")
        bob = await s.join("bob")
        sub = s.subscribe(bob)
        for target in ("publisher", "subscriber"):
            assert await alice.request("ice_candidate", target=target, candidate=GOOD_CANDIDATE) == {}
            await alice.refused("ice_candidate", "invalid_field", target=target, candidate="candidate:1 2 3")
        pub = await s.publish(alice, ["camera"])
        camera = pub.track_id("camera")
        for target in ("publisher", "subscriber"):
            assert await alice.request("ice_candidate", target=target, candidate="") == {}
            await alice.refused("ice_candidate", "invalid_field", target=target, candidate="nope")
            assert await bob.request("ice_candidate", target=target,
                                     candidate="candidate:9 1 udp 1 192.0.2.1 9 typ relay raddr 0.0.0.0 rport 0") == {}
        await sub.wait_frames([camera], 30, timeout=10)
        assert_carries(sub, {"camera": camera}, alice.participant_id)

    run_in_room(server, "ice-real", scenario)
