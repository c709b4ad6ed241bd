"""Several media workers (issue 14): a server with `--media-workers 2` places two rooms on its two
workers, each with its own UDP port (the one in that room's candidates); real aiortc publishers and
viewers in both rooms receive their own room's camera and microphone, recognised by content, and
/metrics shows each worker's samples under its `worker` label."""
import asyncio
import os

from conftest import MEDIA_ARGS, Server
from signal_client import run
from test_media import Session, assert_carries, metric, TEST_TIMEOUT
from test_media_bad_datagrams import media_port


def test_two_rooms_on_two_workers_each_carry_their_own_media(tmp_path):
    server = Server(os.path.join(tmp_path, "data"), *MEDIA_ARGS, "--media-workers", "2").start()
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
