"""Several media workers: a server with `--media-workers 2` places two rooms on its two
workers, each with its own UDP port (the one in that room's candidates); real aiortc publishers and
viewers in both rooms receive their own room's camera and microphone, recognised by content, and
/metrics shows each worker's samples under its `worker` label. A room spread over both workers
(`--media-room-spread 2`: the publisher and one viewer on the home worker, later viewers on the other,
fed through the pipe) decodes its own camera and microphone at every viewer, and a key-frame request
from a viewer on the far worker reaches the publisher."""
import asyncio
import os

from conftest import MEDIA_BASE_ARGS, Server
from signal_client import run
from test_media import Session, assert_carries, metric, wait_metric_above, TEST_TIMEOUT
from test_media_bad_datagrams import media_port


def test_two_rooms_on_two_workers_each_carry_their_own_media(tmp_path):
    server = Server(os.path.join(tmp_path, "data"), *MEDIA_BASE_ARGS, "--media-workers", "2").start()
    sources = ["camera", "microphone"]

    async def room(name):
        s = Session(server, name)
        try:
            publisher = await s.join(f"{name}-pub")
            viewer = await s.join(f"{name}-viewer")
            sub = s.subscribe(viewer)
            pub = await s.publish(publisher, sources)
            ids = {src: pub.track_id(src) for src in sources}
            await sub.wait_frames([ids["camera"]], 30, timeout=15)
            await sub.wait_frames([ids["microphone"]], 25, timeout=10)
            assert_carries(sub, ids, publisher.participant_id)
            return media_port(pub.result["sdp"])
        finally:
            await s.close()

    async def scenario():
        # The first room is placed (on worker 0) before the second is asked for.
        first = await asyncio.wait_for(room("workers-a"), TEST_TIMEOUT)
        ports = await asyncio.gather(room("workers-b"), room("workers-c"))
        # The second room goes to the idle worker: another port. (The first closed; whichever worker
        # the third lands on, two rooms at once use both ports.)
        assert len({first, *ports}) == 2, (first, ports)
        assert ports[0] != ports[1], ports
        for w in ("0", "1"):
            assert await metric(server, "atrium_media_packets_total", worker=w, direction="out") > 0

    try:
        run(scenario(), TEST_TIMEOUT * 2)
    finally:
        server.stop()


def test_a_room_spread_over_two_workers_decodes_at_every_viewer_and_far_key_frame_requests_reach_the_publisher(
        tmp_path):
    server = Server(os.path.join(tmp_path, "data"), *MEDIA_BASE_ARGS, "--media-workers", "2",
                    "--media-room-spread", "2").start()
    sources = ["camera", "microphone"]

    async def scenario():
        s = Session(server, "spread")
        try:
            publisher = await s.join("spread-pub")
            viewers = [await s.join(f"spread-viewer-{i}") for i in range(3)]
            subs = [s.subscribe(v) for v in viewers]
            pub = await s.publish(publisher, sources)
            ids = {src: pub.track_id(src) for src in sources}
            for sub in subs:
                await sub.wait_frames([ids["camera"]], 30, timeout=20)
                await sub.wait_frames([ids["microphone"]], 25, timeout=10)
                assert_carries(sub, ids, publisher.participant_id)
            # The publisher and the first viewer on the home worker; the others on the second worker,
            # whose port their offers carry.
            home = media_port(pub.result["sdp"])
            ports = [media_port(sub.pc.remoteDescription.sdp) for sub in subs]
            assert ports[0] == home and ports[1] == ports[2] != home, (home, ports)
            assert await metric(server, "atrium_media_pipe_packets_total", worker="0", direction="out") > 0
            assert await metric(server, "atrium_media_pipe_packets_total", worker="1", direction="in") > 0
            # A PLI from a viewer on the far worker: that worker asks home through the pipe, and the
            # publisher's camera sender gets a key-frame request.
            far = subs[1]
            receiver = next(t.receiver for t in far.pc.getTransceivers()
                            if t.receiver.track is not None and t.receiver.track.kind == "video")
            ssrc = receiver.getSynchronizationSources()[0].source
            before = (await pub.stats())["keyFrameRequests"]["camera"]
            received = await metric(server, "atrium_media_plis_total", worker="1", direction="received")
            sent = await metric(server, "atrium_media_plis_total", worker="0", direction="sent")
            await receiver._send_rtcp_pli(ssrc)
            await wait_metric_above(server, received, "atrium_media_plis_total", worker="1", direction="received")
            await wait_metric_above(server, sent, "atrium_media_plis_total", worker="0", direction="sent")
            deadline = asyncio.get_running_loop().time() + 10
            while (await pub.stats())["keyFrameRequests"]["camera"] <= before:
                assert asyncio.get_running_loop().time() < deadline, "the far viewer's PLI never reached the publisher"
                await asyncio.sleep(0.2)
            await far.wait_more_frames([ids["camera"]], 10, timeout=10)
            assert_carries(far, ids, publisher.participant_id)
        finally:
            await s.close()

    try:
        run(scenario(), TEST_TIMEOUT * 2)
    finally:
        server.stop()
