"""Recording a screen share with ffmpeg (docs/admin-api.md, "Recordings"): an aiortc sharer's screen
(blue with white stripes, media_peer.py) is recorded, paused once in the middle; `ffprobe` reports
one video stream of the screen's size with frames on both sides of the pause, lasting no longer than
the server says the recording ran, and the frames ffmpeg decodes from the file show the source's
colour and stripes. The recording's start and end
reach a webhook receiver with the file's path, duration and size; stopping the share ends a second
recording by itself. A participant's H264 camera and Opus microphone go into MKV and MP4 (the red
camera decoded from the file), and the recording ends when the participant leaves."""
import asyncio
import json
import os
import re
import signal
import subprocess
import time

import numpy as np
import pytest

from conftest import MEDIA_ARGS, Server, stopped_cleanly
from media_peer import BLUE, RED, STRIPE_PERIOD, STRIPE_WIDTH, VIDEO, WHITE, SCREEN_MEAN
from test_media import run_in_room, wait_metric_above
from webhook_receiver import Receiver

SECRET = "whsec_recording_test_0123456789"
W, H = VIDEO["screen_share"]["width"], VIDEO["screen_share"]["height"]
PAUSE = 3.5         # seconds: longer than ffmpeg's listen timeout (3 s)
SLACK = 2.0         # seconds a file may run past the server's durationMs: its frames carry capture times


@pytest.fixture
def recording_server(tmp_path):
    rx = Receiver(SECRET).start()
    hooks = json.dumps([{"url": rx.url, "secret": SECRET}])
    s = Server(os.path.join(tmp_path, "data"), *MEDIA_ARGS, "--webhooks", hooks).start()
    yield s, rx
    stopped_cleanly(s)
    rx.stop()


async def wait_state(server, room, rec_id, states, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        status, _, _, body = server.request("GET", f"/v1/rooms/{room}/recordings/{rec_id}")
        assert status == 200, body
        if body["state"] in states:
            return body
        assert time.monotonic() < deadline, f"recording stayed {body['state']}: {body}"
        await asyncio.sleep(0.2)


def ffprobe(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-show_streams", "-show_format", "-of", "json", path],
                         capture_output=True, check=True, timeout=30).stdout
    return json.loads(out)


def video_times(path):
    """The presentation times (seconds) of the file's video frames, in order."""
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time",
                          "-of", "csv=p=0", path], capture_output=True, check=True, timeout=60, text=True).stdout
    return sorted(float(x) for x in out.split())


async def receiving(server, track_id):
    """Waits until the server has received RTP of the track (the recording has something to record)."""
    await wait_metric_above(server, 0, "atrium_media_track_packets_total", track=track_id, direction="in")


def decoded_frames(path, count=8, w=W, h=H):
    """`count` RGB frames spread over the file, decoded by ffmpeg (one a second from the start)."""
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-vf", "fps=1", "-frames:v", str(count),
                          "-f", "rawvideo", "-pix_fmt", "rgb24", "-"], capture_output=True, check=True,
                         timeout=60).stdout
    n = len(raw) // (w * h * 3)
    return [np.frombuffer(raw, np.uint8, w * h * 3, i * w * h * 3).reshape(h, w, 3) for i in range(n)]


def shows_the_screen(rgb):
    """The screen's mean colour (within the media tests' tolerance) and its stripes: the columns of
    a stripe bright, the others blue."""
    mean = rgb.reshape(-1, 3).mean(axis=0)
    if not np.all(np.abs(mean - np.array(SCREEN_MEAN)) <= 40):
        return False
    stripe = (np.arange(W) % STRIPE_PERIOD) < STRIPE_WIDTH
    columns = rgb[::8].mean(axis=0)           # per column, mean RGB
    white_ok = np.mean(np.abs(columns[stripe] - np.array(WHITE)).max(axis=1) <= 60) >= 0.9
    blue_ok = np.mean(np.abs(columns[~stripe] - np.array(BLUE)).max(axis=1) <= 60) >= 0.9
    return bool(white_ok and blue_ok)


def test_a_share_recorded_across_a_pause(recording_server):
    server, rx = recording_server
    room = "rec-share"

    async def scenario(s):
        alice = await s.join("alice")
        pub = await s.publish(alice, ["screen_share"])
        share = (await alice.expect("share_started"))["share"]
        assert share["trackId"] == pub.track_id("screen_share")
        await receiving(server, share["trackId"])

        status, _, _, rec = server.request("POST", f"/v1/rooms/{room}/recordings", {"what": "share"})
        assert status == 201, rec
        assert rec["what"] == "share" and rec["shareId"] == share["id"] and rec["container"] == "webm"
        assert rec["trackIds"] == [share["trackId"]]
        await wait_state(server, room, rec["id"], ["recording"])
        await asyncio.sleep(2)
        # Paused for longer than ffmpeg's listen timeout (3 s): the server's keepalives hold it open.
        await alice.request("pause_share", shareId=share["id"])
        paused_at = time.monotonic()
        await asyncio.sleep(PAUSE)
        resumed_at = time.monotonic()
        await alice.request("resume_share", shareId=share["id"])
        await asyncio.sleep(2)
        status, _, _, stopping = server.request("DELETE", f"/v1/rooms/{room}/recordings/{rec['id']}")
        assert status == 200 and stopping["state"] in ("stopping", "finished"), stopping
        done = await wait_state(server, room, rec["id"], ["finished", "failed"])
        assert done["state"] == "finished", done
        assert done["stopReason"] == "stopped"
        path = done["path"]
        assert os.path.isabs(path) and path.endswith(".webm") and os.path.getsize(path) == done["sizeBytes"]

        probe = ffprobe(path)
        video = [st for st in probe["streams"] if st["codec_type"] == "video"]
        assert len(video) == 1 and video[0]["codec_name"] == "vp8", probe
        assert (video[0]["width"], video[0]["height"]) == (W, H)
        # No longer than the server's own measure of the recording (the frames' times are the sharer's
        # capture clock, which may run late at the start and catch up: a slack for that); frames on
        # both sides of the pause, which no frame crosses (what the sharer captured then was dropped).
        times = video_times(path)
        gaps = [b - a for a, b in zip(times, times[1:])]
        longest = max(range(len(gaps)), key=gaps.__getitem__)
        print(f"file {probe['format']['duration']} s for a recording of {done['durationMs']} ms; "
              f"{len(times)} frames, the longest gap {gaps[longest]:.2f} s after frame {longest}; "
              f"paused for {resumed_at - paused_at:.2f} s")
        assert float(probe["format"]["duration"]) <= done["durationMs"] / 1000 + SLACK, (probe["format"], done)
        assert gaps[longest] >= (resumed_at - paused_at) / 2, (gaps[longest], resumed_at - paused_at)
        assert 0 < longest < len(gaps) - 1, times
        frames = decoded_frames(path)
        assert len(frames) >= 2, len(frames)     # one a second: the pause alone spans more than one
        assert all(shows_the_screen(f) for f in frames), [f.reshape(-1, 3).mean(axis=0) for f in frames]

        # The list holds it; a second recording ends when the share does.
        status, _, _, listed = server.request("GET", f"/v1/rooms/{room}/recordings")
        assert status == 200 and [r["id"] for r in listed["recordings"]] == [rec["id"]]
        status, _, _, second = server.request("POST", f"/v1/rooms/{room}/recordings",
                                              {"what": "share", "shareId": share["id"], "container": "mkv"})
        assert status == 201, second
        await wait_state(server, room, second["id"], ["recording"])
        await asyncio.sleep(1.5)
        await alice.request("stop_share", shareId=share["id"])
        ended = await wait_state(server, room, second["id"], ["finished", "failed"])
        assert ended["state"] == "finished" and ended["stopReason"] == "share_ended", ended
        assert ended["path"].endswith(".mkv") and ended["sizeBytes"] > 0

        # Webhooks: started and finished for both, with the file's path, duration and size.
        events = rx.wait_for(lambda ev: sum(e["type"] == "recording_finished" for e in ev) >= 2)
        started = [e["data"]["recording"] for e in events if e["type"] == "recording_started"]
        finished = [e["data"]["recording"] for e in events if e["type"] == "recording_finished"]
        assert [r["id"] for r in started] == [rec["id"], second["id"]]
        assert [r["id"] for r in finished] == [rec["id"], second["id"]]
        assert finished[0]["path"] == path and finished[0]["sizeBytes"] == done["sizeBytes"]
        assert finished[0]["durationMs"] == done["durationMs"] and finished[0]["state"] == "finished"
        assert all(r["valid"] for r in rx.requests)

    run_in_room(server, room, scenario, 120)


def test_recording_refusals(recording_server):
    server, _ = recording_server
    status, _, _, _ = server.request("POST", "/v1/rooms", {"name": "rec-empty"})
    assert status == 201
    status, _, _, body = server.request("POST", "/v1/rooms/rec-empty/recordings", {"what": "room"})
    assert status == 409 and body["error"]["code"] == "room_not_live"
    status, _, _, body = server.request("POST", "/v1/rooms/rec-empty/recordings", {"what": "everything"})
    assert status == 422 and body["error"]["code"] == "invalid_field"
    status, _, _, body = server.request("GET", "/v1/rooms/rec-empty/recordings/rec_nope")
    assert status == 404 and body["error"]["code"] == "recording_not_found"
    status, _, _, body = server.request("GET", "/v1/rooms/rec-empty/recordings")
    assert status == 200 and body == {"recordings": []}
    status, _, _, body = server.request("GET", "/v1/rooms/rec-empty/recordings", token=None)
    assert status == 401


@pytest.mark.parametrize("container", ["mkv", "mp4"])
def test_a_participant_recorded_h264_and_opus(recording_server, container):
    """A participant's H264 camera and Opus microphone into MKV or MP4 (WebM refuses H264); the
    recording ends when the participant leaves."""
    server, _ = recording_server
    room = f"rec-h264-{container}"

    async def scenario(s):
        bob = await s.join("bob")
        pub = await s.publish(bob, ["camera", "microphone"], codecs={"camera": ["H264"]}, fast_h264=True)
        await receiving(server, pub.track_id("camera"))
        status, _, _, body = server.request("POST", f"/v1/rooms/{room}/recordings",
                                            {"what": "participant", "participantId": "bob", "container": "webm"})
        assert status == 422 and body["error"]["code"] == "codec_unsupported", body
        status, _, _, rec = server.request("POST", f"/v1/rooms/{room}/recordings",
                                           {"what": "participant", "participantId": "bob", "container": container})
        assert status == 201, rec
        assert rec["trackIds"] == [pub.track_id("camera"), pub.track_id("microphone")]
        await wait_state(server, room, rec["id"], ["recording"])
        await asyncio.sleep(4)
        await bob.leave()
        done = await wait_state(server, room, rec["id"], ["finished", "failed"])
        assert done["state"] == "finished" and done["stopReason"] == "participant_left", done
        probe = ffprobe(done["path"])
        kinds = sorted((st["codec_type"], st["codec_name"]) for st in probe["streams"])
        assert kinds == [("audio", "opus"), ("video", "h264")], probe
        video = next(st for st in probe["streams"] if st["codec_type"] == "video")
        assert (video["width"], video["height"]) == (VIDEO["camera"]["width"], VIDEO["camera"]["height"])
        assert 0 < float(probe["format"]["duration"]) <= done["durationMs"] / 1000 + SLACK, (probe["format"], done)
        # The camera's uniform red, decoded from the file.
        frames = decoded_frames(done["path"], w=video["width"], h=video["height"])
        assert frames and all(np.all(np.abs(f.reshape(-1, 3).mean(axis=0) - np.array(RED)) <= 40) for f in frames)

    run_in_room(server, room, scenario, 120)


def test_an_ffmpeg_crash_fails_the_recording(recording_server):
    """ffmpeg killed mid-recording: the recording is `failed` with the reason, and reported."""
    server, rx = recording_server
    room = "rec-crash"

    async def scenario(s):
        alice = await s.join("alice")
        await s.publish(alice, ["screen_share"])
        await alice.expect("share_started")
        status, _, _, rec = server.request("POST", f"/v1/rooms/{room}/recordings", {"what": "share"})
        assert status == 201, rec
        await wait_state(server, room, rec["id"], ["recording"])
        log = open(server.err_path).read()
        line = next(ln for ln in log.splitlines() if "recording started" in ln and rec["id"] in ln)
        pid = int(re.search(r"pid=(\d+)", line).group(1))
        os.kill(pid, signal.SIGKILL)
        failed = await wait_state(server, room, rec["id"], ["finished", "failed"])
        assert failed["state"] == "failed" and failed["stopReason"] == "ffmpeg_exited", failed
        assert "status 137" in failed["error"], failed
        events = rx.wait_for(lambda ev: any(e["type"] == "recording_finished" for e in ev))
        reported = next(e["data"]["recording"] for e in events if e["type"] == "recording_finished")
        assert reported["id"] == rec["id"] and reported["state"] == "failed"

    run_in_room(server, room, scenario, 90)
