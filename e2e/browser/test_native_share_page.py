"""Native participants and the meeting page, both ways: `atrium share` (AtriumKit, Atrium's own ICE,
DTLS and SRTP, libvpx) shares its stripes pattern and a Chromium meeting page shows it on the share
stage (the pictures Chromium decodes are the pattern, blue with white stripes, and carry its frame
numbers in order); a Chromium page shares its drawn screen and `atrium watch` decodes it (the page's
stamps, in order)."""
import json
import os
import signal
import subprocess
import sys

from picture_sampler import PICTURE_SAMPLER
from test_meeting_page import join, wait_stage

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
from signal_client import mint  # noqa: E402

# Per frame: the mean colour of the first white stripe and of the blue after it (1280 pixels wide:
# ten periods of 128, the first 32 of each white), and the frame number stamped in the top row
# (FrameStamp: 32 blocks of 16 pixels, 4 in the quarter-size canvas, white for a 1 bit).
STRIPES = PICTURE_SAMPLER + """
const video = document.querySelector('[data-testid="stage-video"]');
const s = await sampleFrames(video, 8, 8000, (meta, d, w, h) => {
  const period = w / 10, block = w / 80;
  let stamp = 0;
  for (let i = 0; i < 32; i++) {
    const k = (Math.floor(block / 2) * w + Math.floor(i * block + block / 2)) * 4;
    stamp = stamp * 2 + ((d[k] + d[k + 1] + d[k + 2]) / 3 >= 128 ? 1 : 0);
  }
  // The first period: white over its first quarter, blue over the rest (edges left out).
  return {white: meanColour(d, w, h, 0.05 * period / w, 0.2 * period / w, 0.2, 0.8),
          blue: meanColour(d, w, h, 0.4 * period / w, 0.95 * period / w, 0.2, 0.8), width: meta.width, stamp};
});
return s.frames;
"""


def test_atrium_share_plays_on_the_meeting_page(server_dir, browsers, artifacts):
    from conftest import ATRIUM_BIN, start_server
    server = start_server(server_dir, "--dev", "--auto-create-rooms", "any")
    proc = None
    try:
        base = f"http://127.0.0.1:{server.port}"
        b = browsers("viewer")
        join(b, base, "native-page", "Viewer", "participant")
        proc = subprocess.Popen([ATRIUM_BIN, "share", "--url", f"ws://127.0.0.1:{server.port}", "--token",
                                 mint(server, "native-page", "bot"), "--fps", "10", "--seconds", "60"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        sharer = b.wait("return [...window.atriumApp.room.participants.values()]"
                        ".find((p) => p.identity === 'bot')?.id", 20, "the native sharer to join")
        wait_stage(b, sharer, timeout=30)
        frames = b.js_async(STRIPES)
        b.screenshot("native-share")
        assert len(frames) >= 5, frames
        for f in frames:
            (wr, wg, wb), (br, bg, bb) = f["white"], f["blue"]
            assert min(wr, wg, wb) > 170, f"no white stripe where the pattern has one: {f}"
            assert bb > 170 and br < 110 and bg < 110, f"no blue where the pattern has it: {f}"
        # The pictures are the sharer's frames in order: their stamps (frame numbers) go forward.
        stamps = [f["stamp"] for f in frames]
        assert all(0 < s < 100000 for s in stamps), stamps
        assert all(a <= b for a, b in zip(stamps, stamps[1:])) and stamps[-1] > stamps[0], stamps
        proc.send_signal(signal.SIGINT)
        assert proc.wait(20) == 0, proc.stderr.read()
        b.wait("return document.querySelector('[data-testid=\"share-stage\"]').hidden", 15, "the stage to go")
    finally:
        if proc and proc.poll() is None:
            proc.kill()
        server.stop()


# The page's screen share, drawn: a canvas captured at 15 fps (getDisplayMedia replaced before the share
# button is clicked), its frame number stamped in the top row as FrameStamp and media_peer do it
# (32 blocks of 16 pixels, white for a 1 bit), the rest red on the left half and white on the right.
STAMPED_SCREEN = """
const canvas = document.createElement('canvas');
canvas.width = 1280; canvas.height = 720;
const g = canvas.getContext('2d');
window.__stamp = 0;
const draw = () => {
  window.__stamp += 1;
  g.fillStyle = 'rgb(220, 20, 20)'; g.fillRect(0, 0, 640, 720);
  g.fillStyle = 'rgb(255, 255, 255)'; g.fillRect(640, 0, 640, 720);
  g.fillStyle = 'rgb(0, 0, 0)'; g.fillRect(0, 0, 1280, 16);
  g.fillStyle = 'rgb(255, 255, 255)';
  for (let i = 0; i < 32; i++) if ((window.__stamp >>> (31 - i)) & 1) g.fillRect(i * 16, 0, 16, 16);
};
draw();
setInterval(draw, 66);
const stream = canvas.captureStream(15);
stream.getVideoTracks()[0].contentHint = 'detail';
navigator.mediaDevices.getDisplayMedia = async () => stream;
"""


def read_y4m(path):
    """The pictures of a Y4M file as (width, height, luma bytes) per frame."""
    with open(path, "rb") as f:
        data = f.read()
    eol = data.index(b"\n")
    fields = {t[:1]: t[1:] for t in data[:eol].split(b" ")[1:]}
    w, h = int(fields[b"W"]), int(fields[b"H"])
    size = w * h * 3 // 2
    out, at = [], eol + 1
    while at + 6 + size <= len(data):
        out.append(data[at + 6:at + 6 + w * h])
        at += 6 + size
    return w, h, out


def stamp_of(luma, w):
    value = 0
    for i in range(32):
        value = value * 2 + (1 if luma[8 * w + i * 16 + 8] >= 128 else 0)
    return value


def test_a_page_share_is_decoded_by_atrium_watch(server_dir, browsers, artifacts, tmp_path):
    """A Chromium meeting page shares its drawn screen; `atrium watch` (AtriumKit's native viewer:
    its own ICE, DTLS and SRTP, libvpx) receives and decodes it and writes the pictures to a Y4M file:
    each carries the page's stamp, the stamps go forward, and the picture is the page's (red left,
    white right)."""
    from conftest import ATRIUM_BIN, start_server
    server = start_server(server_dir, "--dev", "--auto-create-rooms", "any")
    proc = None
    out = tmp_path / "watched.y4m"
    try:
        base = f"http://127.0.0.1:{server.port}"
        b = browsers("sharer")
        me = join(b, base, "native-watch", "Sharer", "participant")
        proc = subprocess.Popen([ATRIUM_BIN, "watch", "--url", f"ws://127.0.0.1:{server.port}", "--token",
                                 mint(server, "native-watch", "watcher"), "--out", str(out), "--seconds", "60"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        b.js(STAMPED_SCREEN)
        b.click("share-toggle")
        wait_stage(b, me, timeout=30)
        # Per-second lines until 40 pictures were decoded (the server URL and the viewer's join first).
        decoded, lines = 0, []
        while decoded < 40:
            line = proc.stdout.readline()
            assert line, f"atrium watch ended: {lines[-5:]} {proc.stderr.read()}"
            lines.append(line.strip())
            event = json.loads(line)
            if event["event"] == "second":
                decoded += event["frames"]
                assert event["decodeErrors"] == 0, event
        proc.send_signal(signal.SIGINT)
        tail = [json.loads(line) for line in proc.stdout]
        assert proc.wait(20) == 0, lines + [tail, proc.stderr.read()]
        stopping = next(e for e in tail if e["event"] == "stopping")
        assert stopping["written"] >= 40, stopping
        w, h, pictures = read_y4m(out)
        assert (w, h) == (1280, 720) and len(pictures) >= 40, (w, h, len(pictures))
        stamps = [stamp_of(p, w) for p in pictures]
        assert all(0 < s < 100000 for s in stamps), stamps[:20]
        assert all(a <= b for a, b in zip(stamps, stamps[1:])), stamps
        assert stamps[-1] - stamps[0] >= 20, stamps
        for p in pictures[::10]:
            left, right = p[360 * w + 320], p[360 * w + 960]
            # BT.601 luma: red (220, 20, 20) about 80, white about 235.
            assert 50 < left < 120 and right > 200, (left, right)
    finally:
        if proc and proc.poll() is None:
            proc.kill()
        server.stop()
