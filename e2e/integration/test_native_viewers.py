"""The native load peers (`atrium-viewers`, the benchmark's cheap viewers and publisher) against a
real server, so that the benchmark's clients cannot rot unnoticed: the native publisher publishes a
camera, a screen share and a microphone; three native viewers in one process connect (ICE checks,
DTLS, SRTP) and receive all three, each packet proving its source by content: the stamp at the end
of every payload carries the publisher's id, the source and the publisher's own sequence number,
which must fall inside what the publisher sent; the viewers' receiver reports give the server their
round trips. Nothing about speed is asserted."""
import asyncio
import os

from conftest import MEDIA_ARGS, Server
from native_peer import AtriumViewer, NativePeers, SOURCES, atrium_publish, wait_connected
from signal_client import joined, run

PUBLISHER_ID = 4242
VIEWERS = 3


def test_native_viewers_receive_the_native_publisher_through_atrium(tmp_path):
    server = Server(os.path.join(tmp_path, "data"), *MEDIA_ARGS).start()

    async def scenario():
        publisher_side = await NativePeers.spawn()
        viewer_side = await NativePeers.spawn()
        clients, viewers = [], []
        try:
            pub = await joined(server, "native-pub", room="native")
            clients.append(pub)
            ssrcs, _ = await atrium_publish(pub, publisher_side, "pub", PUBLISHER_ID)
            await wait_connected(publisher_side, ["pub"])
            for i in range(VIEWERS):
                c = await joined(server, f"native-viewer-{i}", room="native")
                viewers.append(AtriumViewer(c, viewer_side, f"v{i}"))
            ids = [f"v{i}" for i in range(VIEWERS)]
            await wait_connected(viewer_side, ids, timeout=30)
            # Until every viewer has 20 packets of every source (no deadline on the rate: the test's
            # own timeout bounds it).
            while True:
                stats = await viewer_side.call("stats")
                got = {i: {s["source"]: s for s in stats["peers"][i]["sources"]} for i in ids}
                if all(len(g) == len(SOURCES) and all(s["packets"] >= 20 for s in g.values()) for g in got.values()):
                    break
                await asyncio.sleep(0.2)
            sent = await publisher_side.call("stats")
            sent_by_source = {s["source"]: s["packets"] for s in sent["peers"]["pub"]["sent"]}
            for i in ids:
                peer = stats["peers"][i]
                assert peer["undecryptable"] == 0, peer
                assert peer["unstamped"] == 0, peer
                for index, _, _, _ in SOURCES:
                    s = got[i][index]
                    assert s["publisher"] == PUBLISHER_ID, s
                    # The publisher's sequence numbers: what it sent, nothing invented.
                    assert 0 <= s["first"] <= s["highest"] < sent_by_source[index], (s, sent_by_source)
                    assert s["packets"] <= s["highest"] - s["first"] + 1, s
            assert stats["latency"]["count"] > 0
            # The viewers answer the server's sender reports as a browser does: the server has a round
            # trip for each of their transports (what it sizes their retransmission hold by).
            while True:
                _, _, body, _ = server.request("GET", "/metrics", token=None)
                rtts = [
                    line for line in body.decode().splitlines()
                    if line.startswith("atrium_media_rtt_seconds{") and '/sub"}' in line
                ]
                if len(rtts) == VIEWERS:
                    break
                await asyncio.sleep(0.2)
            for v in viewers:
                assert v.error is None, v.error
        finally:
            for v in viewers:
                await v.close()
            for c in clients:
                await c.close()
            await viewer_side.close()
            await publisher_side.close()

    try:
        run(scenario(), 90)
    finally:
        server.stop()
