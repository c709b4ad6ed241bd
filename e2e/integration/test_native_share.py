"""`atrium share`: a native participant (AtriumKit with Atrium's own ICE, DTLS and SRTP, libvpx and
libopus) shares a test pattern with a tone; an aiortc viewer decodes the stripes and the 880 Hz tone
(the frames' content proves the source); SIGUSR1 and SIGUSR2 pause and resume the share; SIGINT stops
it with `user_stopped` and the process exits 0."""
import asyncio
import json
import os
import signal
import subprocess

import pytest

from conftest import ATRIUM_BIN, MEDIA_ARGS, Server, stopped_cleanly
from media_peer import Subscriber
from signal_client import joined, mint, run

TEST_TIMEOUT = 90


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = Server(os.path.join(tmp_path_factory.mktemp("native"), "data"), *MEDIA_ARGS).start()
    yield s
    stopped_cleanly(s)


def test_a_native_share_is_decoded_by_a_viewer_and_follows_signals(server):
    async def go():
        room = "native-share"
        viewer = await joined(server, "viewer", room=room)
        sub = Subscriber(viewer)
        proc = await asyncio.create_subprocess_exec(
            ATRIUM_BIN, "share", "--url", f"ws://127.0.0.1:{server.port}", "--token", mint(server, room, "bot"),
            "--tone", "880", "--seconds", "80", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            started = await viewer.expect("share_started", timeout=20)
            video = started["share"]["trackId"]
            published = await viewer.expect(
                "track_published", lambda m: m["track"]["source"] == "screen_share_audio", timeout=10)
            audio = published["track"]["id"]
            await sub.wait_frames([video], 30, timeout=30)
            await sub.wait_frames([audio], 50, timeout=30)
            v, a = sub.by_track(video), sub.by_track(audio)
            assert v.classes["screen_share"] >= 0.9 * v.frames, v
            assert a.classes["screen_share_audio"] >= 0.8 * a.frames, a
            proc.send_signal(signal.SIGUSR1)
            assert (await viewer.expect("share_paused", timeout=10))["share"]["id"] == started["share"]["id"]
            proc.send_signal(signal.SIGUSR2)
            await viewer.expect("share_resumed", timeout=10)
            await sub.wait_more_frames([video], 10, timeout=20)
            proc.send_signal(signal.SIGINT)
            stopped = await viewer.expect("share_stopped", timeout=10)
            assert stopped["reason"] == "user_stopped", stopped
            assert await asyncio.wait_for(proc.wait(), 20) == 0
            lines = [json.loads(l) for l in (await proc.stdout.read()).decode().splitlines() if l.startswith("{")]
            events = [l["event"] for l in lines]
            assert events[0] == "published" and "share_paused" in events and "share_resumed" in events, events
            stop = next(l for l in lines if l["event"] == "stopping")
            assert stop["framesSent"] >= 30 and stop["keyFrames"] >= 1, stop
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            await sub.close()
            await viewer.close()

    run(go(), TEST_TIMEOUT)


def test_a_lossy_native_publisher_is_repaired_by_nack(server):
    """Every 10th video packet dropped before it leaves (`--drop-every 10`): the server NACKs the
    publisher, which sends them again from its ring; the viewer still decodes the pattern."""
    async def go():
        room = "native-loss"
        viewer = await joined(server, "viewer", room=room)
        sub = Subscriber(viewer)
        before = server.metric("atrium_media_nacks_total", direction="sent")
        proc = await asyncio.create_subprocess_exec(
            ATRIUM_BIN, "share", "--url", f"ws://127.0.0.1:{server.port}", "--token", mint(server, room, "bot"),
            "--drop-every", "10", "--seconds", "80", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            started = await viewer.expect("share_started", timeout=20)
            video = started["share"]["trackId"]
            await sub.wait_frames([video], 45, timeout=30)
            v = sub.by_track(video)
            assert v.classes["screen_share"] >= 0.9 * v.frames, v
            server.wait_metric("atrium_media_nacks_total", lambda n: n > before, timeout=20, direction="sent")
            proc.send_signal(signal.SIGINT)
            assert await asyncio.wait_for(proc.wait(), 20) == 0
            lines = [json.loads(l) for l in (await proc.stdout.read()).decode().splitlines() if l.startswith("{")]
            stop = next(l for l in lines if l["event"] == "stopping")
            assert stop["retransmitted"] > 0, stop
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            await sub.close()
            await viewer.close()

    run(go(), TEST_TIMEOUT)
