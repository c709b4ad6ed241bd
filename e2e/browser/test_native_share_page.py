"""A native participant seen on the meeting page: `atrium share` (AtriumKit, Atrium's own ICE, DTLS
and SRTP, libvpx) shares its stripes pattern; a Chromium meeting page shows it on the share stage,
and the pictures Chromium decodes are the pattern (blue with white stripes: the left part of a
period white, the rest blue)."""
import os
import signal
import subprocess
import sys

from picture_sampler import PICTURE_SAMPLER
from test_meeting_page import join, wait_stage

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
from signal_client import mint  # noqa: E402

# Per frame: the mean colour of the first white stripe and of the blue after it (1280 pixels wide:
# ten periods of 128, the first 32 of each white).
STRIPES = PICTURE_SAMPLER + """
const video = document.querySelector('[data-testid="stage-video"]');
const s = await sampleFrames(video, 5, 8000, (meta, d, w, h) => {
  const period = w / 10;
  // The first period: white over its first quarter, blue over the rest (edges left out).
  return {white: meanColour(d, w, h, 0.05 * period / w, 0.2 * period / w, 0.2, 0.8),
          blue: meanColour(d, w, h, 0.4 * period / w, 0.95 * period / w, 0.2, 0.8), width: meta.width};
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
        proc.send_signal(signal.SIGINT)
        assert proc.wait(20) == 0, proc.stderr.read()
        b.wait("return document.querySelector('[data-testid=\"share-stage\"]').hidden", 15, "the stage to go")
    finally:
        if proc and proc.poll() is None:
            proc.kill()
        server.stop()
