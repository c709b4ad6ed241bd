"""The meeting page where a person tripped over it: a capture that resolves after the person turned the
camera off (it must end the moment it arrives), and the other rough edges of a second walk as a new
user. Each test reproduces what was seen (the DOM state, the page's track states, the notices' text).

Run inside a loopback-only network namespace (see conftest.py)."""
import json

from conftest import start_server
from test_meeting_page import join, page_url, wait_notice, wait_stage
from test_meeting_page_new_user import state, typed

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
    # They resolve in either order (two real getUserMedia calls race once granted).
    with_camera = [t for t in tracks if any(kind == "video" for kind, _ in t)]
    mic_only = [t for t in tracks if all(kind == "audio" for kind, _ in t)]
    assert len(with_camera) == 1 and sorted(with_camera[0]) == [["audio", "ended"], ["video", "ended"]], tracks
    assert mic_only == [[["audio", "live"]]], tracks
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


# -- the second walk as a new user: what the page says and shows at each step

def text(b, testid):
    return b.js(f"const e = document.querySelector({json.dumps(b.q(testid))}); return e ? e.textContent : null;")


def in_view(b, testid):
    """The element's box lies inside the viewport as it is (nothing scrolled): a person sees it."""
    return b.js(
        f"const e = document.querySelector({json.dumps(b.q(testid))}); if (!e || e.offsetParent === null) return false;"
        "const r = e.getBoundingClientRect();"
        "return r.top >= 0 && r.left >= 0 && r.bottom <= window.innerHeight && r.right <= window.innerWidth;")


def laid_out(b):
    b.js_async("await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));")


LIVE_PREVIEW = """
const v = document.querySelector('[data-testid="preview-video"]');
const s = v.srcObject;
return !!s && s.getVideoTracks().some((t) => t.readyState === 'live') && v.videoWidth > 0 && v.readyState >= 2
  && document.querySelector('[data-testid="preview-off"]').hidden;
"""


def test_a_long_outage_says_the_server_cannot_be_reached_and_keeps_the_preview_true(server_dir, browsers, artifacts):
    """The server is down past the resume window: the join screen says in words that the server cannot
    be reached and when the page tries again (no raw "Failed to fetch"), the preview under "Camera on"
    is the live camera, turning it off there says "Camera is off", and once the server is back the page
    rejoins by itself with what the join screen shows (camera off, microphone on)."""
    s = start_server(server_dir, "--dev")
    port = s.port
    try:
        base = f"http://127.0.0.1:{port}"
        a = browsers("a")
        a.open(page_url(base, room="outage", name="Ada", role="host", autojoin="1", camera="1", mic="1"))
        a.wait("return document.body.dataset.phase === 'meeting'"
               " && document.querySelector('[data-testid=\"camera-toggle\"]').dataset.state === 'on'"
               " && document.querySelector('[data-testid=\"mic-toggle\"]').dataset.state === 'on'", 20, "joined, both on")

        s.stop()
        # The resume attempts run out (about 25 s); then the page rejoins from the join screen.
        a.wait("return document.body.dataset.phase !== 'meeting'"
               " && !document.querySelector('[data-testid=\"rejoin-panel\"]').hidden", 60, "the rejoin panel")
        status = a.wait("const t = document.querySelector('[data-testid=\"rejoin-status\"]').textContent;"
                        "return /^The server cannot be reached; trying again in \\d+ s\\.$/.test(t) && t", 30,
                        "the status in words")
        print(f"rejoin status: {status}")
        page = a.js("return document.body.innerText")
        assert "Failed to fetch" not in page and "TypeError" not in page, page
        assert not a.visible("join-error"), text(a, "join-error")
        # The preview tells the truth: "Camera on" over the live camera.
        assert state(a, "preview-camera") == "on" and state(a, "preview-mic") == "on"
        a.wait(LIVE_PREVIEW, 15, "the live camera preview while rejoining")
        a.screenshot("01-outage-preview-on")
        # Turned off there: "Camera is off", no live camera track behind it.
        a.click("preview-camera")
        a.wait("return document.querySelector('[data-testid=\"preview-off\"]').textContent === 'Camera is off'"
               " && !document.querySelector('[data-testid=\"preview-off\"]').hidden", 10, "Camera is off")
        a.wait("const s = document.querySelector('[data-testid=\"preview-video\"]').srcObject;"
               "return !s || !s.getVideoTracks().some((t) => t.readyState === 'live')", 10, "no camera behind it")
        a.wait("return /^The server cannot be reached; trying again in \\d+ s\\.$/"
               ".test(document.querySelector('[data-testid=\"rejoin-status\"]').textContent)", 15, "still trying")
        a.screenshot("02-outage-preview-off")

        s = start_server(server_dir, "--dev", "--port", str(port))
        a.wait("return document.body.dataset.phase === 'meeting' && window.atriumApp.connection === 'connected'"
               " && document.querySelector('[data-testid=\"mic-toggle\"]').dataset.state === 'on'", 60, "rejoined")
        assert state(a, "camera-toggle") == "off"
        assert a.js("return window.atriumApp.room.me.tracks.map((t) => t.source)") == ["microphone"]
        assert not a.visible("rejoin-panel")
        a.screenshot("03-rejoined")
    finally:
        s.stop()


LAYOUT_CLAIM = """
const b = document.querySelector('[data-testid="layout-toggle"]');
const g = document.querySelector('[data-testid="participant-grid"]');
const tiles = [...g.querySelectorAll('[data-testid="tile"]')];
const featured = tiles.find((t) => t.dataset.featured === 'true');
return {label: b.querySelector('.label') ? b.querySelector('.label').textContent : b.textContent,
        disabled: b.disabled, title: b.title, grid: g.dataset.layout,
        featured: featured ? featured.getBoundingClientRect().width : 0,
        others: tiles.filter((t) => t !== featured).map((t) => t.getBoundingClientRect().width)};
"""


def assert_layout_shown(claim):
    """The toggle's label names the layout it switches to, so it claims the other one is shown."""
    if claim["label"] == "Grid view":  # claims the speaker view
        assert claim["featured"] > 1.8 * max(claim["others"]), claim
    else:
        assert claim["label"] == "Speaker view" and not claim["featured"], claim


def test_speaker_view_works_on_a_phone_and_is_disabled_with_a_share(dev_server, browsers, artifacts):
    """On a phone the speaker view features a tile (as wide as the screen, above the others); with a
    share on the stage it cannot apply: the toggle is disabled with the reason, and a click changes
    nothing. Its label never claims a layout that is not shown."""
    base = f"http://127.0.0.1:{dev_server.port}"
    a, b = browsers("a"), browsers("b")
    a_id = join(a, base, "layouts", "Alice", "host")
    b_id = join(b, base, "layouts", "Bob", "participant")
    a.wait("return document.querySelectorAll('[data-testid=\"tile\"]').length === 2", 10, "two tiles")

    a.set_size(390, 844)
    a.wait("return window.innerWidth === 390", 5, "the phone's viewport")
    laid_out(a)
    assert_layout_shown(a.js(LAYOUT_CLAIM))
    a.click("layout-toggle")
    a.wait("return document.querySelector('[data-testid=\"layout-toggle\"] .label').textContent === 'Grid view'",
           5, "the toggle offers the grid again")
    laid_out(a)
    claim = a.js(LAYOUT_CLAIM)
    assert_layout_shown(claim)
    a.screenshot("01-phone-speaker")
    a.click("layout-toggle")
    laid_out(a)
    claim = a.js(LAYOUT_CLAIM)
    assert claim["label"] == "Speaker view", claim
    assert_layout_shown(claim)

    # A share on the stage: the tiles are a column beside it; the toggle says why it is off.
    a.set_size(1280, 800)
    a.wait("return window.innerWidth === 1280", 5, "the desktop viewport")
    a.click("layout-toggle")
    a.wait("return document.querySelector('[data-testid=\"participant-grid\"]').dataset.layout === 'speaker'", 5,
           "speaker view")
    b.click("share-toggle")
    wait_stage(a, b_id)
    a.wait("return document.querySelector('[data-testid=\"layout-toggle\"]').disabled", 5, "the toggle disabled")
    claim = a.js(LAYOUT_CLAIM)
    assert claim["title"] == "The shared screen fills the stage; the tiles are in a column beside it.", claim
    assert_layout_shown(claim)
    a.real_click("layout-toggle")
    laid_out(a)
    assert a.js(LAYOUT_CLAIM) == claim
    a.screenshot("02-share-toggle-disabled")

    # The share ends: the speaker view chosen before is back, and the label says so.
    b.click("share-toggle")
    a.wait("return document.querySelector('[data-testid=\"participant-grid\"]').dataset.layout === 'speaker'"
           " && !document.querySelector('[data-testid=\"layout-toggle\"]').disabled", 15, "speaker view back")
    laid_out(a)
    claim = a.js(LAYOUT_CLAIM)
    assert claim["label"] == "Grid view" and claim["title"] == "", claim
    assert_layout_shown(claim)


TILE_NAMES = """
return [...document.querySelectorAll('[data-testid="tile"]')].map((t) => {
  const n = t.querySelector('[data-testid="tile-name"]');
  return {name: t.dataset.name, text: n.textContent, scroll: n.scrollWidth, client: n.clientWidth,
          width: n.getBoundingClientRect().width,
          tags: [...t.querySelectorAll('figcaption .tag')].filter((e) => e.offsetParent !== null).map((e) => e.textContent)};
});
"""


def test_tile_names_stay_readable_beside_a_share(dev_server, browsers, artifacts):
    """With a share on the stage the tiles are a narrow column; each name is shown whole (not cut to
    "A" or "F."), its tags (host, muted, no mic, sharing) go on a line of their own."""
    base = f"http://127.0.0.1:{dev_server.port}"
    a, f = browsers("a"), browsers("f")
    a.open(page_url(base, room="names", name="Alice Anderson", role="host", autojoin="1", mic="1"))
    a.wait("return document.body.dataset.phase === 'meeting'"
           " && document.querySelector('[data-testid=\"mic-toggle\"]').dataset.state === 'on'", 20, "Alice in")
    a_id = a.js("return window.atriumApp.room.me.id")
    join(f, base, "names", "Frank Fischer", "cohost")
    a.click("mic-toggle")
    a.wait("return document.querySelector('[data-testid=\"mic-toggle\"]').dataset.state === 'muted'", 10, "muted")
    a.click("share-toggle")
    for page in (a, f):
        wait_stage(page, a_id)
        page.wait("return document.querySelectorAll('[data-testid=\"tile\"]').length === 2"
                  " && !!document.querySelector('[data-testid=\"sharing-badge\"]')", 10, f"{page.name}: the tiles")
        laid_out(page)
        tiles = page.js(TILE_NAMES)
        print(f"{page.name}: {tiles}")
        for t in tiles:
            assert t["text"].startswith(t["name"]), t
            assert t["scroll"] <= t["client"] + 1, f"{page.name}: the name is cut: {t}"
            assert len(t["tags"]) >= 2, t
        page.screenshot("01-names-beside-the-share")


JOIN_BOX = """
const r = (id) => document.querySelector(`[data-testid="${id}"]`).getBoundingClientRect();
const j = document.querySelector('[data-testid="join-screen"]');
return {join: r('join-submit').bottom, card: r('join-form').height, inner: window.innerHeight,
        scrolled: window.scrollY + j.scrollTop};
"""


def test_join_is_in_view_at_1280x800_with_a_room_name_error_said_once(dev_server, browsers, artifacts):
    """A 1280x800 window (a 657 px high viewport): the Join button is in view without scrolling, before
    and after a refused room name; the room name's problem is said once (beside the field), the error
    above Join points to it."""
    base = f"http://127.0.0.1:{dev_server.port}"
    a = browsers("a", height=657)
    a.open(base + "/")
    a.wait("return document.body.dataset.phase === 'join' && document.body.dataset.dev === 'true'", 15, "the join screen")
    a.wait(LIVE_PREVIEW, 15, "the preview playing")
    laid_out(a)
    box = a.js(JOIN_BOX)
    assert in_view(a, "join-submit"), box
    typed(a, "join-room", "Team standup")
    typed(a, "join-name", "Alice")
    assert in_view(a, "join-submit"), a.js(JOIN_BOX)
    a.click("join-submit")
    a.wait("return !document.querySelector('[data-testid=\"join-error\"]').hidden", 10, "the join error")
    laid_out(a)
    box = a.js(JOIN_BOX)
    assert in_view(a, "join-submit") and box["scrolled"] == 0, box
    assert a.js("return document.querySelector('[data-testid=\"join-error-code\"]').textContent") == "invalid_room_name"
    page = a.js("return document.body.innerText")
    problem = "Room names use letters, digits, _ - and . only (no spaces): try “Team-standup”."
    assert page.count(problem) == 1, page
    assert problem in text(a, "join-room-hint")
    assert a.js("return document.activeElement.dataset.testid") == "join-room"
    a.screenshot("01-room-name-error-in-view")


# getUserMedia that refuses the camera (NotAllowedError, as a browser's blocked camera permission does)
# and gives the microphone.
CAMERA_BLOCKED = """
(() => {
  const md = navigator.mediaDevices;
  const real = md.getUserMedia.bind(md);
  window.__asked = [];
  md.getUserMedia = async (constraints) => {
    window.__asked.push({video: !!constraints.video, audio: !!constraints.audio});
    if (constraints.video) throw new DOMException("Permission denied", "NotAllowedError");
    return real(constraints);
  };
})();
"""


def test_a_blocked_camera_is_named_alone(dev_server, browsers, artifacts):
    """The browser blocks the camera and allows the microphone: the preview says the camera was
    blocked (not the microphone), the microphone's preview is live, and the meeting starts with the
    microphone on and an error that names the camera only."""
    base = f"http://127.0.0.1:{dev_server.port}"
    a = browsers("a")
    a.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": CAMERA_BLOCKED})
    a.open(page_url(base, room="blocked", name="Ada"))
    a.wait("return /blocked/.test(document.querySelector('[data-testid=\"preview-off\"]').textContent)", 15,
           "the preview's problem")
    assert text(a, "preview-off") == "The browser blocked the camera.", text(a, "preview-off")
    assert a.visible("preview-off")
    a.wait("const s = document.querySelector('[data-testid=\"preview-video\"]').srcObject;"
           "return !!s && s.getAudioTracks().some((t) => t.readyState === 'live')", 10, "the microphone's preview")
    assert not a.visible("join-error")
    a.screenshot("01-camera-blocked")

    a.click("join-submit")
    a.wait("return document.body.dataset.phase === 'meeting'"
           " && document.querySelector('[data-testid=\"mic-toggle\"]').dataset.state === 'on'", 20, "joined, mic on")
    assert state(a, "camera-toggle") == "off"
    errors = [n for n in a.notices() if n["kind"] == "error"]
    assert all("microphone" not in n["text"].lower() for n in a.notices()), a.notices()
    print(f"notices: {errors}")


def test_notices_belong_to_the_screen_they_are_shown_on(dev_server, browsers, artifacts):
    """Leave clears the meeting's notices (the join screen shows only "You left the room."), and
    joining again clears that one."""
    base = f"http://127.0.0.1:{dev_server.port}"
    a, b = browsers("a"), browsers("b")
    join(a, base, "notices", "Alice", "host")
    join(b, base, "notices", "Bob", "participant")
    wait_notice(a, reason="participant_joined")
    a.click("leave")
    a.wait("return document.body.dataset.phase === 'join'", 10, "the join screen")
    assert [n["text"] for n in a.notices()] == ["You left the room."], a.notices()
    a.click("join-submit")
    a.wait("return document.body.dataset.phase === 'meeting'", 20, "back in the meeting")
    assert not [n for n in a.notices() if n["reason"] == "left"], a.notices()
    a.screenshot("01-rejoined-without-stale-notices")


def test_an_invite_joins_as_participant_and_a_link_name_wins(dev_server, browsers, artifacts):
    """Dev mode: the invite link joins as a participant (no Remove or Mute on the others), and an
    autojoin link with another name opened in the same tab joins under the link's name."""
    base = f"http://127.0.0.1:{dev_server.port}"
    a, b = browsers("a"), browsers("b")
    a_id = join(a, base, "invites", "Alice", "host")
    a.click("copy-invite")
    wait_notice(a, reason="invite")
    link = a.js("return document.querySelector('[data-testid=\"invite-link\"]').href")
    b.open(link)
    b.wait("return document.body.dataset.phase === 'join' && document.body.dataset.dev === 'true'", 15, "B's join screen")
    typed(b, "join-name", "Bob")
    b.click("join-submit")
    b.wait("return document.body.dataset.phase === 'meeting'", 20, "B in the meeting")
    assert b.js("return window.atriumApp.room.me.role") == "participant"
    b.wait(f"return !!document.querySelector('#people [data-participant-id=\"{a_id}\"]')", 10, "Alice in B's list")
    assert b.js("return document.querySelectorAll('[data-testid=\"person-remove\"], [data-testid=\"person-mute\"]').length") == 0
    assert not b.visible("host-panel")

    # The same tab opens an autojoin link with another name: that name is the one in the room.
    a.open(page_url(base, room="invites", name="Grace", autojoin="1"))
    a.wait("return document.body.dataset.phase === 'meeting' && window.atriumApp.room"
           " && window.atriumApp.room.me.name === 'Grace'", 20, "A as Grace")
    me = a.js("return window.atriumApp.room.me.id")
    assert a.js(f"return document.querySelector('[data-participant-id=\"{me}\"] [data-testid=\"tile-name\"]').textContent") == "Grace (you)"


def test_a_viewer_has_no_tile_of_its_own_and_no_shortcut_hint(dev_server, browsers, artifacts):
    """A viewer publishes nothing: no empty tile of its own in the grid, and no M/V shortcut hint."""
    base = f"http://127.0.0.1:{dev_server.port}"
    a, v = browsers("a"), browsers("v")
    a_id = join(a, base, "viewers", "Alice", "host")
    join(v, base, "viewers", "Vera", "viewer")
    v.wait(f"return !!document.querySelector('[data-testid=\"tile\"][data-participant-id=\"{a_id}\"]')", 10, "Alice's tile")
    laid_out(v)
    assert v.js("return [...document.querySelectorAll('[data-testid=\"tile\"]')].map((t) => t.dataset.participantId)") == [a_id]
    assert not v.visible("shortcuts")
    assert not v.visible("mic-toggle") and not v.visible("camera-toggle")
    assert a.visible("shortcuts")
    v.screenshot("01-viewer")


def test_a_share_stopped_by_the_share_policy_says_the_policy_did_it(dev_server, browsers, artifacts):
    """Two shares running in multi mode; the host switches to grab: the newer share stops with reason
    `policy_changed`, and both pages say the policy did it (not that someone stopped it)."""
    from test_meeting_page import join, wait_notice, wait_stage

    base = f"http://127.0.0.1:{dev_server.port}"
    a = browsers("a")
    b = browsers("b")
    a_id = join(a, base, "policy-grab", "Alice", "host")
    b_id = join(b, base, "policy-grab", "Bob", "participant")
    a.js_async("await window.atriumApp.room.setSharePolicy({shareMode: 'multi', maxConcurrentShares: 2});")
    a.click("share-toggle")
    wait_stage(b, a_id)
    b.click("share-toggle")
    b.wait("return !!window.atriumApp.room.myShare && window.atriumApp.room.shares.size === 2", 30, "two shares")
    a.js_async("await window.atriumApp.room.setSharePolicy({shareMode: 'grab'});")
    for page in (a, b):
        n = wait_notice(page, 30, kind="share-stopped", reason="policy_changed")
        assert "changed the share policy" in n["text"] and "stopped" in n["text"], n
        assert not n["text"].startswith("You stopped") and "stopped Alice" not in n["text"], n


def test_a_share_whose_track_ends_without_a_word_stops_with_capture_ended(dev_server, browsers, artifacts):
    """Bob's screen track is stopped in the page (`track.stop()`, which fires no `ended` event, so the
    SDK says nothing) while his connection lives on: the server stops the share with `capture_ended`
    at the capture timeout, and Alice is told. Chromium sends no BYE then, and goes on sending padding
    on the share's SSRC for its bandwidth estimate, which moves its sender reports' packet count but
    not their octet count."""
    from test_meeting_page import join, wait_notice, wait_stage

    base = f"http://127.0.0.1:{dev_server.port}"
    a = browsers("a")
    b = browsers("b")
    join(a, base, "silent-capture", "Alice", "host")
    b_id = join(b, base, "silent-capture", "Bob", "participant")
    b.click("share-toggle")
    wait_stage(a, b_id)
    sent = ("const s = [...(await window.atriumApp.room.publisher.getStats()).values()]"
            ".filter((s) => s.type === 'outbound-rtp' && s.kind === 'video');"
            "return s.map((x) => x.packetsSent);")
    b.js("window.atriumApp.room.myShare.track.stop()")
    n = wait_notice(a, 60, kind="share-stopped", reason="capture_ended")
    assert "Bob" in n["text"], n
    # What Chromium sent meanwhile: padding only (its packet count grows, its payload bytes do not).
    print(f"Chromium after track.stop(): outbound video packets per layer {b.js_async(sent)}")
