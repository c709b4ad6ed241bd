"""One viewer's bad link must cost that viewer alone. An nftables rule drops 10 % of the datagrams the
server sends to one aiortc viewer's port (in the output hook, so the kernel refuses them with EPERM
inside the server's sendmmsg batches; one refused after the first of a call is sent again as the
first of the next, so the viewer loses far fewer, and the rest are counted refused). Every refusal
is counted against that viewer's connection and none against another viewer of the same camera,
none of whose retransmissions is refused either; the dropped viewer's NACKs are answered. The
clean viewer's loss, the refused retransmissions (repeats within a round trip, or over the budget
of 30 % of the media a connection is sent) and the lossy/clean byte ratio are printed."""
import asyncio
import socket
import subprocess

import pytest

from test_media import assert_carries, metric, run_in_room, sample_of, snapshot_after

# It changes the network: only in a private loopback-only namespace (`make netns`, part of `make test`:
# unshare --net -- sh -c 'ip link set lo up && python3 -m pytest e2e/integration/test_netns_media.py').
_OTHERS = [name for _, name in socket.if_nameindex() if name != "lo"]
pytestmark = pytest.mark.skipif(bool(_OTHERS), reason=f"needs a loopback-only network namespace, not {_OTHERS}")

DROP_PERCENT = 10


def nft(*args):
    subprocess.run(["nft", *args], check=True)


def local_port(sub):
    """The UDP port of the viewer's (only, loopback) ICE candidate."""
    dtls = sub.pc.getTransceivers()[0].receiver.transport
    return dtls.transport.iceGatherer.getLocalCandidates()[0].port


async def packets_lost(sub):
    lost = 0
    for t in sub.pc.getTransceivers():
        report = await t.receiver.getStats()
        lost += sum(s.packetsLost for s in report.values() if s.type == "inbound-rtp")
    return lost


def test_a_viewer_behind_a_lossy_firewall_costs_no_other_viewer(media_server):
    async def scenario(s):
        alice = await s.join("alice")
        pub = await s.publish(alice, ["camera"])
        camera = pub.track_id("camera")
        lossy_client, clean_client = await s.join("lossy"), await s.join("clean")
        lossy, clean = s.subscribe(lossy_client), s.subscribe(clean_client)
        await asyncio.gather(lossy.wait_frames([camera], 10, timeout=10), clean.wait_frames([camera], 10, timeout=10))
        port = local_port(lossy)
        nft("add", "table", "inet", "atrium_test")
        nft("add", "chain", "inet", "atrium_test", "out", "{ type filter hook output priority 0; }")
        nft("add", "rule", "inet", "atrium_test", "out", "udp", "dport", str(port),
            "numgen", "random", "mod", "100", "<", str(DROP_PERCENT), "drop")
        try:
            lost_before = await packets_lost(clean)
            label_lossy = f"{lossy_client.participant_id}/sub"
            label_clean = f"{clean_client.participant_id}/sub"
            out = "atrium_media_transport_bytes_total"
            start = {l: await metric(media_server, out, transport=l, direction="out") for l in (label_lossy, label_clean)}
            await asyncio.gather(lossy.wait_more_frames([camera], 150, timeout=20),
                                 clean.wait_more_frames([camera], 150, timeout=20))
            text = await snapshot_after(media_server, camera)     # taken after those frames
        finally:
            nft("delete", "table", "inet", "atrium_test")
        sent = {l: sample_of(text, out, transport=l, direction="out") - start[l] for l in (label_lossy, label_clean)}
        lost = await packets_lost(clean) - lost_before
        refused = sample_of(text, "atrium_media_dropped_packets_total", reason="send_refused")
        errors = {l: sample_of(text, "atrium_media_transport_send_errors_total", transport=l)
                  for l in (label_lossy, label_clean)}
        bounded = {l: sample_of(text, "atrium_media_transport_retransmissions_refused_total", transport=l)
                   for l in (label_lossy, label_clean)}
        ratio = sent[label_lossy] / sent[label_clean]
        print(f"clean viewer lost {lost}; refused sends {refused} ({errors[label_lossy]} to the lossy viewer, "
              f"{errors[label_clean]} to the clean one); retransmissions refused to lossy/clean "
              f"{bounded[label_lossy]}/{bounded[label_clean]}; "
              f"bytes to lossy/clean {sent[label_lossy]}/{sent[label_clean]} = {ratio:.2f}")
        assert refused > 0 and errors[label_lossy] == refused and errors[label_clean] == 0, (refused, errors)
        assert bounded[label_clean] == 0, bounded
        assert sample_of(text, "atrium_media_retransmissions_total") > 0
        assert_carries(clean, {"camera": camera}, alice.participant_id)
        assert_carries(lossy, {"camera": camera}, alice.participant_id)

    run_in_room(media_server, "netns-lossy-viewer", scenario)
