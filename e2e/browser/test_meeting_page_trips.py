"""The meeting page where a person tripped over it: a capture that resolves after the person turned the
camera off (it must end the moment it arrives), and the other rough edges of a second walk as a new
user. Each test reproduces what was seen (the DOM state, the page's track states, the notices' text).

Run inside a loopback-only network namespace (see conftest.py)."""
import json

from test_meeting_page import page_url
from test_meeting_page_new_user import state

# getUserMedia that waits for `window.__grant()` before it asks the real one, as a browser's permission
# prompt makes it wait; every stream it returned is kept in `window.__captures` so the test can read the
# state of every track the page was ever given.
DELAYED_GRANT = """
(() => {
  const md = navigator.mediaDevices;
  const real = md.getUserMedia.bind(md);
  window.__captures = [];
  window.__asked = 0;
  let held = [];
  let granted = false;
  window.__grant = () => { granted = true; for (const r of held.splice(0)) r(); };
  md.getUserMedia = async (constraints) => {
    window.__asked += 1;
    if (!granted) await new Promise((r) => held.push(r));
    const s = await real(constraints);
    window.__captures.push(s);
    return s;
  };
})();
"""

LIVE_VIDEO = ("return window.__captures.flatMap((s) => s.getVideoTracks())"
              ".filter((t) => t.readyState === 'live').length")


def test_camera_turned_off_while_permission_is_pending_is_never_left_captured(dev_server, browsers, artifacts):
    """The camera is turned off on the pre-join screen while the browser still asks for permission:
    when permission comes, the capture started before is stopped at once (no live camera track, so
    no camera indicator), the microphone the person kept is live, and the meeting starts with the
    camera off and no camera track anywhere in the page."""
    base = f"http://127.0.0.1:{dev_server.port}"
    a = browsers("a")
    a.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": DELAYED_GRANT})
    a.open(page_url(base, room="privacy", name="Ada"))
    a.wait("return window.__asked === 1", 15, "the first capture asked for (permission pending)")
    assert state(a, "preview-camera") == "on"
    a.click("preview-camera")
    a.wait("return window.__asked === 2", 10, "the microphone-only capture asked for")
    assert state(a, "preview-camera") == "off"
    a.js("window.__grant()")
    a.wait("return window.__captures.length === 2", 15, "both captures resolved")
    a.wait(f"{LIVE_VIDEO} === 0", 10, "no live camera track after the grant")
    tracks = a.js("return window.__captures.map((s) => s.getTracks().map((t) => [t.kind, t.readyState]))")
    # The first capture (camera and microphone) ended whole; the second (microphone) is the preview.
    assert sorted(tracks[0]) == [["audio", "ended"], ["video", "ended"]], tracks
    assert tracks[1] == [["audio", "live"]], tracks
    assert a.js("return document.querySelector('[data-testid=\"preview-off\"]').textContent") == "Camera is off"
    a.screenshot("01-prejoin-camera-off")

    a.click("join-submit")
    a.wait("return document.body.dataset.phase === 'meeting'"
           " && document.querySelector('[data-testid=\"mic-toggle\"]').dataset.state === 'on'", 20, "joined, mic on")
    assert state(a, "camera-toggle") == "off"
    assert a.js(LIVE_VIDEO) == 0, "a camera track is live in the meeting with the camera off"
    assert a.js("return window.atriumApp.room.me.tracks.map((t) => t.source)") == ["microphone"]
    a.screenshot("02-meeting-camera-off")


def test_a_capture_pending_when_the_person_joins_ends_when_it_resolves(dev_server, browsers, artifacts):
    """The person joins with the camera off while the preview's first capture (camera on) is still
    pending: once granted, that capture ends at once instead of living on behind the meeting."""
    base = f"http://127.0.0.1:{dev_server.port}"
    a = browsers("a")
    a.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": DELAYED_GRANT})
    a.open(page_url(base, room="privacy-join", name="Ada"))
    a.wait("return window.__asked === 1", 15, "the preview's capture asked for")
    a.click("preview-camera")
    a.click("preview-mic")
    a.click("join-submit")
    a.wait("return document.body.dataset.phase === 'meeting'", 20, "joined")
    a.js("window.__grant()")
    a.wait("return window.__captures.length >= 1", 15, "the pending capture resolved")
    a.wait(f"{LIVE_VIDEO} === 0", 10, "the pending capture ended")
    assert json.dumps(a.js("return window.atriumApp.room.me.tracks.map((t) => t.source)")) == "[]"
    assert state(a, "camera-toggle") == "off"
