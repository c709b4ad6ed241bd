"""The meeting page (clients/web/) and the JavaScript client (clients/js/atrium.js) in headless Chromium
with fake camera, microphone and screen capture, against a real `atrium serve`.

Run inside a loopback-only network namespace (see conftest.py):

    unshare -n -- sh -c 'ip link set lo up && python3 -m pytest e2e/browser'
"""
import json
import time
import urllib.parse

from picture_sampler import PICTURE_SAMPLER


# A page script that samples the subscriber connection's statistics through the SDK: decoded frames per
# received video track, keyed by the track's source, with its publisher.
VIDEO_STATS = """
const room = window.atriumApp.room;
if (!room || !room.subscriber) return {};
const byMid = new Map(room.remoteTracks.map((t) => [t.mid, t]));
const out = {};
(await room.subscriber.getStats()).forEach((s) => {
  if (s.type !== "inbound-rtp" || s.kind !== "video") return;
  const t = byMid.get(s.mid);
  if (!t) return;
  out[t.source] = {frames: s.framesDecoded || 0, width: s.frameWidth || 0, height: s.frameHeight || 0,
                   participantId: t.participantId, trackId: t.trackId, mid: s.mid};
});
return out;
"""


# A page script that samples the decoded pictures of one participant's received camera and screen tracks
# where the page shows them (the camera in the participant's tile, the share on the stage): for each
# source, the page's <video> must be playing the SDK's RemoteTrack of that source; on each of `count`
# distinct presented frames (requestVideoFrameCallback) the picture is drawn into a canvas and the mean
# colour of its left part, its right part and the whole (inner 80 % of the height) and a checksum of the
# picture are recorded. The last frame of each comes back as a PNG (data URL).
SOURCE_PIXELS = PICTURE_SAMPLER + """
const [pid, count, tileSelector] = arguments;
const room = window.atriumApp.room;
const elements = {camera: document.querySelector(tileSelector),
                  screen_share: document.querySelector('[data-testid="stage-video"]')};
const out = {};
for (const [source, video] of Object.entries(elements)) {
  const remote = room.remoteTracks.find(
    (t) => t.participantId === pid && t.source === source && t.track.kind === "video");
  const shown = video && video.srcObject instanceof MediaStream ? video.srcObject.getVideoTracks()[0] : null;
  const r = out[source] = {remote: !!remote, trackId: remote ? remote.trackId : null,
                           sameTrack: !!remote && shown === remote.track,
                           readyState: remote ? remote.track.readyState : null, frames: []};
  if (!remote || !video) continue;
  const checksum = (d) => {
    let h = 2166136261;
    for (let k = 0; k < d.length; k++) h = Math.imul(h ^ d[k], 16777619) >>> 0;
    return h;
  };
  const sampled = await sampleFrames(video, count, 5000, (meta, d, w, h) => ({
    presented: meta.presentedFrames, rtp: meta.rtpTimestamp ?? null,
    width: video.videoWidth, height: video.videoHeight,
    left: meanColour(d, w, h, 0.05, 0.45, 0.1, 0.9), right: meanColour(d, w, h, 0.55, 0.95, 0.1, 0.9),
    all: meanColour(d, w, h, 0, 1, 0.1, 0.9), checksum: checksum(d)}));
  r.frames = sampled.frames;
  if (sampled.png) r.png = sampled.png;
  const q = video.getVideoPlaybackQuality ? video.getVideoPlaybackQuality() : null;
  r.totalVideoFrames = q ? q.totalVideoFrames : null;
}
return out;
"""


def near(rgb, want, tolerance=60):
    return all(abs(c - w) <= tolerance for c, w in zip(rgb, want))


def is_green(rgb):
    """Chromium's fake screen: its test pattern is mostly green (about 7, 149, 2 on average)."""
    r, g, b = rgb
    return g >= 90 and g >= r + 60 and g >= b + 60


def sample_sources(b, pid, count=6):
    """Samples `count` decoded frames of pid's camera (in its tile) and screen share (on the stage) on
    b's page, saves the last frame of each as a PNG artifact, and returns the samples."""
    out = b.js_async(SOURCE_PIXELS, pid, count, tile(pid) + " video")
    for source, r in out.items():
        png = r.pop("png", None)
        if png:
            b.save_png(f"received-{source}", png)
    return out


def assert_sources_by_content(samples, camera, count=6):
    """The camera frames show the file camera's pattern (`camera`, a CameraFile: red left, white right,
    in its shape); the screen frames show Chromium's fake screen (green, with a running clock), not the
    camera's pattern."""
    for source in ("camera", "screen_share"):
        r = samples[source]
        assert r["remote"] and r["sameTrack"] and r["readyState"] == "live", (source, r)
        assert len(r["frames"]) >= count, f"{source}: only {len(r['frames'])} decoded frames sampled: {r}"
        assert len({f["presented"] for f in r["frames"]}) == len(r["frames"]), (source, r["frames"])
    for f in samples["camera"]["frames"]:
        assert near(f["left"], camera.left_rgb) and near(f["right"], camera.right_rgb), (
            f"camera frame is not the file camera's red/white pattern: {f}")
        # The file's shape (the sender may scale it down under load, never up).
        w, h = f["width"], f["height"]
        assert 0 < w <= camera.width and abs(w * camera.height - h * camera.width) <= camera.width, f
    screen = samples["screen_share"]["frames"]
    for f in screen:
        assert is_green(f["all"]) and is_green(f["left"]) and is_green(f["right"]), (
            f"screen frame is not Chromium's green fake screen: {f}")
        assert not near(f["left"], camera.left_rgb, 100), f"screen frame looks like the camera: {f}"
    # The fake screen's clock and animation change the picture from frame to frame.
    assert len({f["checksum"] for f in screen}) >= 2, f"the screen's picture does not change: {screen}"


def page_url(base, **params):
    return f"{base}/?{urllib.parse.urlencode(params)}"


def join(b, base, room, name, role):
    """Opens the page with the test parameters; it fetches a dev token and joins by itself."""
    b.open(page_url(base, room=room, name=name, role=role, autojoin="1"))
    b.wait(
        "const a = window.atriumApp; return document.body.dataset.phase === 'meeting' && a && a.room && a.room.me;",
        20,
        f"{b.name} to join {room}",
    )
    return b.js("return window.atriumApp.room.me.id")


def tile(pid, extra=""):
    return f'[data-testid="tile"][data-participant-id="{pid}"]{extra}'


def wait_tile_video(b, pid, timeout=20):
    """The participant's tile shows a playing video (a decoded picture that advances)."""
    sel = json.dumps(tile(pid) + " video")
    b.wait(
        f"const v = document.querySelector({sel});"
        "return !!v && !v.hidden && v.videoWidth > 0 && v.readyState >= 2 && v.closest('[data-has-video=\"true\"]');",
        timeout,
        f"{b.name}: a playing camera video in the tile of {pid}",
    )


def poll(b, found, timeout, label, failure):
    """Calls `found()` every 0.2 s until it returns something, and returns that; after `timeout` seconds
    saves a screenshot of b's page (`label`) and fails with the message `failure()`."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        got = found()
        if got:
            return got
        time.sleep(0.2)
    b.screenshot(f"{label}-{int(time.time())}")
    raise AssertionError(failure())


def wait_notice(b, timeout=15, **match):
    """A notice whose data attributes match (kind=, reason=, code=); returns it."""
    def found():
        for n in b.notices():
            if all(n.get(k) == v for k, v in match.items()):
                return n
        return None

    return poll(b, found, timeout, "missing-notice", lambda: f"{b.name}: no notice {match}; notices: {b.notices()}")


def stage_state(b):
    return b.js(
        """const s = document.querySelector('[data-testid="share-stage"]');
           const v = document.querySelector('[data-testid="stage-video"]');
           return {shown: !!s && !s.hidden && s.offsetParent !== null, shareId: s.dataset.shareId || null,
                   participantId: s.dataset.participantId || null, state: s.dataset.state || null,
                   label: document.querySelector('[data-testid="stage-label"]').textContent,
                   videoWidth: v.videoWidth, time: v.currentTime,
                   picks: [...document.querySelectorAll('[data-testid="share-pick"]')].map((p) => p.dataset.shareId)};"""
    )


def wait_stage(b, participant_id, timeout=20, playing=True):
    """The stage shows that participant's share (with a playing video)."""
    def check():
        s = stage_state(b)
        ok = s["shown"] and s["participantId"] == participant_id and (not playing or s["videoWidth"] > 0)
        return s if ok else None

    return poll(b, check, timeout, "missing-stage",
                lambda: f"{b.name}: the stage does not show {participant_id}'s share: {stage_state(b)}")


def wait_no_stage(b, timeout=15):
    b.wait(
        "const s = document.querySelector('[data-testid=\"share-stage\"]'); return s.hidden && s.offsetParent === null;",
        timeout,
        f"{b.name}: the share stage to go away",
    )


def wait_decoding(b, sources, timeout=25, growth=10):
    """B's subscriber statistics show decoded frames on each source, then more on each within `growth`
    seconds (a track the allocator paused a moment, while a new share's demand set off a probe of
    B's link, comes back within it)."""
    deadline = time.time() + timeout
    first = None
    while time.time() < deadline:
        first = b.js_async(VIDEO_STATS)
        if all(first.get(s, {}).get("frames", 0) > 0 for s in sources):
            break
        time.sleep(0.5)
    else:
        raise AssertionError(f"{b.name}: no frames decoded on {sources}: {first}")
    deadline = time.time() + growth
    while True:
        time.sleep(1)
        second = b.js_async(VIDEO_STATS)
        grown = [s for s in sources if second.get(s, {}).get("frames", 0) > first[s]["frames"]]
        if len(grown) == len(sources):
            return first, second
        assert time.time() < deadline, f"{b.name}: frames stopped growing: {first} -> {second}"


def test_two_people_camera_share_stop_and_lock(dev_server, browsers, artifacts, camera_y4m):
    """The two-person meeting: A (host) turns the camera on and shares; B (participant) sees A's camera tile
    and the share stage, and decodes frames on both video tracks, whose pictures show which source each
    came from (A's camera is a red/white file, A's screen Chromium's green pattern); A pauses, resumes
    and stops the share and B sees the stage go with the reason; B shares, A locks sharing (B's share stops, reason locked)
    and B's next attempt reports share_locked; unlocked, B shares again and A sees it; B leaves."""
    t0 = time.time()
    base = f"http://127.0.0.1:{dev_server.port}"
    room = "issue5"
    a = browsers("a", camera=camera_y4m)  # a red/white camera; the screen stays Chromium's green one
    b = browsers("b")

    a_id = join(a, base, room, "Alice", "host")
    b_id = join(b, base, room, "Bob", "participant")
    # Both pages list both people; the host panel is only on the host's page.
    a.wait(f"return !!document.querySelector({json.dumps(tile(b_id))})", 10, "A sees B's tile")
    b.wait(f"return !!document.querySelector({json.dumps(tile(a_id))})", 10, "B sees A's tile")
    assert a.visible("host-panel") and not b.visible("host-panel")
    assert a.js("return document.querySelector('[data-testid=\"me-label\"]').dataset.role") == "host"
    a.screenshot("01-joined")
    b.screenshot("01-joined")

    # A: camera, microphone and screen share through the page's controls.
    a.click("camera-toggle")
    a.wait("return document.querySelector('[data-testid=\"camera-toggle\"]').dataset.state === 'on'", 15, "A's camera on")
    a.click("mic-toggle")
    a.wait("return document.querySelector('[data-testid=\"mic-toggle\"]').dataset.state === 'on'", 15, "A's microphone on")
    a.click("share-toggle")
    a.wait("return document.querySelector('[data-testid=\"share-toggle\"]').dataset.state === 'on'", 15, "A sharing")
    assert a.visible("share-pause")

    # B: A's camera tile plays, the stage shows A's share, and both video tracks decode frames.
    wait_tile_video(b, a_id)
    s = wait_stage(b, a_id)
    assert s["state"] == "started" and "Alice is sharing" in s["label"], s
    first, second = wait_decoding(b, ["camera", "screen_share"])
    assert first["camera"]["participantId"] == a_id and first["screen_share"]["participantId"] == a_id
    assert second["screen_share"]["width"] > 0 and second["camera"]["width"] > 0
    print(f"B decoded frames: {json.dumps(second)}")
    # The content proves the source: B's tile of A shows the camera file's red/white pattern, B's stage
    # the green fake screen, on several distinct decoded frames each.
    samples = sample_sources(b, a_id)
    b.screenshot("02-sources-sampled")
    print(f"B sampled pictures: {json.dumps(samples)}")
    assert_sources_by_content(samples, camera_y4m)
    # The share's video in the stage advances.
    t1 = stage_state(b)["time"]
    b.wait(f"return document.querySelector('[data-testid=\"stage-video\"]').currentTime > {t1}", 10, "the stage video to advance")
    # A's own page shows its share in the stage and its camera preview.
    wait_stage(a, a_id)
    wait_tile_video(a, a_id)
    # The microphone's fake tone makes A the active speaker on B's page.
    b.wait(f"return document.querySelector({json.dumps(tile(a_id))}).dataset.activeSpeaker === 'true'", 15,
           "A highlighted as the active speaker on B's page")
    a.screenshot("02-sharing")
    b.screenshot("02-sharing")

    # Phone width: the same page at 390 px, without horizontal scrolling, stage and controls visible.
    b.set_size(390, 844)
    b.wait("return window.innerWidth === 390", 5, "the narrow viewport")
    b.js_async("await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));")  # laid out
    layout = b.js(
        """const de = document.documentElement;
           const r = (id) => document.querySelector(`[data-testid="${id}"]`).getBoundingClientRect();
           return {scrollWidth: de.scrollWidth, innerWidth: window.innerWidth, stage: r('share-stage').width,
                   leave: r('leave').right, share: r('share-toggle').width};"""
    )
    assert layout["scrollWidth"] <= layout["innerWidth"] + 1, layout
    assert 300 < layout["stage"] <= layout["innerWidth"] and layout["leave"] <= layout["innerWidth"], layout
    b.screenshot("03-phone")
    b.set_size(1280, 800)

    # Pause and resume: B's stage follows the share's state.
    a.click("share-pause")
    b.wait("return document.querySelector('[data-testid=\"share-stage\"]').dataset.state === 'paused'", 10, "paused on B")
    assert b.visible("stage-paused")
    b.screenshot("04-paused")
    a.click("share-pause")
    b.wait("return document.querySelector('[data-testid=\"share-stage\"]').dataset.state === 'started'", 10, "resumed on B")
    b.wait("return !document.querySelector('[data-testid=\"stage-paused\"]').offsetParent", 5, "the paused overlay gone")

    # A stops the share: B's stage goes away and B is told why (user_stopped).
    a.click("share-toggle")
    wait_no_stage(b)
    n = wait_notice(b, kind="share-stopped", reason="user_stopped")
    assert "Alice stopped sharing" in n["text"], n
    n = wait_notice(a, kind="share-stopped", reason="user_stopped")
    assert "You stopped sharing" in n["text"], n
    wait_no_stage(a)
    # The camera goes on.
    wait_tile_video(b, a_id)
    a.screenshot("05-share-stopped")
    b.screenshot("05-share-stopped")

    # B shares; A sees it on the stage and in the host panel.
    b.click("share-toggle")
    wait_stage(a, b_id)
    a.wait(f"return !!document.querySelector('[data-testid=\"host-share\"][data-participant-id=\"{b_id}\"]')", 10,
           "B's share in A's host panel")
    wait_stage(b, b_id)

    # A locks sharing: B's share stops with reason locked, on both pages.
    a.click("lock-toggle")
    wait_notice(b, kind="share-stopped", reason="locked")
    n = wait_notice(a, kind="share-stopped", reason="locked")
    assert "locked screen sharing" in n["text"] and "Bob" in n["text"], n
    wait_no_stage(a)
    wait_no_stage(b)
    b.wait("return !document.querySelector('[data-testid=\"lock-badge\"]').hidden", 5, "the lock badge on B's page")
    b.wait("return document.querySelector('[data-testid=\"share-toggle\"]').dataset.state === 'off'", 10, "B's share button reset")

    # B's share button is disabled while locked, with the reason beside it (checked before
    # the browser's picker opens); a real click on it does nothing.
    b.wait("return document.querySelector('[data-testid=\"share-toggle\"]').disabled", 5, "B's share button disabled")
    assert b.visible("share-reason")
    assert "locked" in b.js("return document.querySelector('[data-testid=\"share-reason\"]').textContent")
    assert b.js("return document.querySelector('[data-testid=\"share-toggle\"]').dataset.availability") == "blocked"
    b.js("""window.__pickers = 0; const real = navigator.mediaDevices.getDisplayMedia.bind(navigator.mediaDevices);
            navigator.mediaDevices.getDisplayMedia = (c) => { window.__pickers += 1; return real(c); };""")
    b.real_click("share-toggle")
    # A click's handlers run before the next frames: after two, no picker was asked for and no share.
    b.js_async("await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));")
    assert b.js("return window.__pickers") == 0
    assert b.js("return window.atriumApp.room.myShare") is None
    assert not [n for n in b.notices() if n["kind"] == "error"], b.notices()
    assert stage_state(a)["shown"] is False
    a.screenshot("06-locked")
    b.screenshot("06-locked")

    # A unlocks and B shares again: A's page receives it, although every track A received had ended
    # meanwhile (those sections stayed inactive in the BUNDLE group).
    a.click("lock-toggle")
    b.wait("return document.querySelector('[data-testid=\"lock-badge\"]').hidden", 5, "the lock badge gone")
    b.click("share-toggle")
    wait_stage(a, b_id)
    wait_stage(b, b_id)

    # B ends the capture from the browser's own UI (the capture track ends): the share stops with
    # reason capture_ended, and A is told.
    b.js("window.atriumApp.room.myShare.track.dispatchEvent(new Event('ended'))")
    n = wait_notice(a, kind="share-stopped", reason="capture_ended")
    assert "Bob" in n["text"], n
    deadline = time.time() + 10
    while stage_state(a)["shown"]:
        assert time.time() < deadline, "A's stage is still shown after capture_ended"
        time.sleep(0.2)

    # B leaves: A's grid drops B's tile; B is back on the join screen.
    b.click("leave")
    b.wait("return document.body.dataset.phase === 'join'", 10, "B back on the join screen")
    a.wait(f"return !document.querySelector({json.dumps(tile(b_id))})", 10, "B's tile gone from A's page")
    print(f"scenario took {time.time() - t0:.1f} s")


def test_host_controls_requests_picker_and_moderation(dev_server, browsers, artifacts):
    """B's camera off and on; the host panel: the policy (multi, participants ask first), a share
    request granted from the panel, two shares with the stage's picker, and a host stopping B's share
    (reason moderated)."""
    base = f"http://127.0.0.1:{dev_server.port}"
    room = "hostpanel"
    a = browsers("a")
    b = browsers("b")
    a_id = join(a, base, room, "Alice", "host")
    b_id = join(b, base, room, "Bob", "participant")

    # B's camera off and on again: A's tile drops the picture and gets it back (the track stays
    # published and muted meanwhile; no renegotiation).
    b.click("camera-toggle")
    wait_tile_video(a, b_id)
    b.click("camera-toggle")
    b.wait("return document.querySelector('[data-testid=\"camera-toggle\"]').dataset.state === 'off'", 10, "B's camera off")
    a.wait(f"return document.querySelector({json.dumps(tile(b_id))}).dataset.hasVideo === 'false'", 10, "B's tile without video")
    b.click("camera-toggle")
    wait_tile_video(a, b_id)
    wait_decoding(a, ["camera"])

    # A: multi mode, two shares at most, participants must ask first.
    a.js("""const f = (id) => document.querySelector(`[data-testid="${id}"]`);
            f('policy-mode').value = 'multi'; f('policy-max').value = '2';
            f('policy-request-required').checked = true;
            f('policy-form').dispatchEvent(new Event('input', {bubbles: true}));""")
    a.click("policy-apply")
    b.wait("return window.atriumApp.room.roomInfo.sharePolicy.shareRequestRequired === true", 10, "B sees the policy")

    # B may not share without a grant: "Ask to share" replaces the share button.
    b.wait("return document.querySelector('[data-testid=\"share-toggle\"]').hidden", 10, "B's share button replaced")
    assert b.visible("request-share")
    b.click("request-share")
    a.wait(f"return !!document.querySelector('[data-testid=\"share-request\"][data-participant-id=\"{b_id}\"]')", 10,
           "B's request in A's host panel")
    # A allows it with the notice's own button (a real click: nothing covers it).
    a.wait("return !!document.querySelector('[data-testid=\"notice-allow\"]')", 10, "the request notice's Allow")
    a.screenshot("01-request")
    a.click("notice-allow")
    wait_notice(b, reason="request_granted")
    b.wait("return document.querySelector('[data-testid=\"request-share\"]').hidden", 10, "the ask button gone")

    # Both share (multi, 2): the stage offers a picker.
    b.click("share-toggle")
    wait_stage(a, b_id)
    a.click("share-toggle")
    wait_stage(b, a_id)  # the newest share is shown
    b.wait("return document.querySelectorAll('[data-testid=\"share-pick\"]').length === 2", 10, "a picker of two shares")
    b_share = b.js("return window.atriumApp.room.myShare.shareId")
    b.click("share-pick", f'[data-share-id="{b_share}"]')
    wait_stage(b, b_id)
    a.screenshot("02-two-shares")
    b.screenshot("02-two-shares")

    # A stops B's share from the host panel: reason moderated on both pages.
    a.click("host-share-stop", f'[data-participant-id="{b_id}"]')
    n = wait_notice(b, kind="share-stopped", reason="moderated")
    assert "Alice stopped your share" in n["text"], n
    wait_notice(a, kind="share-stopped", reason="moderated")
    wait_stage(b, a_id)
    b.wait("return document.querySelectorAll('[data-testid=\"share-pick\"]').length === 0", 10, "the picker gone")
    b.screenshot("03-moderated")


def test_token_join_without_dev_mode_and_reconnect(keyed_server, mint_token, browsers, artifacts):
    """Without --dev the page asks for a token (and /dev/token does not exist); a bad token reports its
    code; a `?token=` link joins; a dropped socket shows the reconnecting state and resumes."""
    base = f"http://127.0.0.1:{keyed_server.port}"
    c = browsers("c", 390, 844)

    c.open(base + "/")
    c.wait("return document.body.dataset.phase === 'join'", 15, "the join screen")
    assert c.js("return document.body.dataset.dev") == "false"
    assert c.visible("join-token") and not c.visible("join-role") and not c.visible("join-room")
    c.screenshot("01-join-phone")
    c.js("document.querySelector('[data-testid=\"join-token\"]').value = 'not.a.token';")
    c.click("join-submit")
    c.wait("return !document.querySelector('[data-testid=\"join-error\"]').hidden", 10, "the join error")
    assert c.js("return document.querySelector('[data-testid=\"join-error-code\"]').textContent") == "malformed_token"

    token = mint_token(keyed_server.key, keyed_server.secret, "tokenroom", "carol", "Carol", "host")
    c.open(page_url(base, token=token, autojoin="1"))
    c.wait("return document.body.dataset.phase === 'meeting'", 20, "joined with the token")
    assert c.js("return window.atriumApp.room.me.identity") == "carol"
    assert c.js("return document.querySelector('[data-testid=\"room-name\"]').textContent") == "tokenroom"
    c.click("camera-toggle")
    wait_tile_video(c, c.js("return window.atriumApp.room.me.id"))
    c.screenshot("02-meeting-phone")
    layout = c.js("return {sw: document.documentElement.scrollWidth, w: window.innerWidth}")
    assert layout["sw"] <= layout["w"] + 1, layout

    # The socket drops (as on a network change): the page shows it and the SDK resumes the session.
    me = c.js("return window.atriumApp.room.me.id")
    c.js("window.atriumApp.room.ws.close(3000, 'test drop')")
    c.wait("return window.atriumApp.log.some((e) => e.state === 'reconnecting')", 5, "the reconnecting state")
    c.wait("return window.atriumApp.connection === 'connected' && document.querySelector('[data-testid=\"reconnecting-banner\"]').hidden",
           15, "reconnected")
    wait_notice(c, reason="reconnected")
    assert c.js("return window.atriumApp.room.me.id") == me
    assert c.js("return window.atriumApp.room.localTrack('camera') !== null")
    c.screenshot("03-reconnected-phone")


def test_subscriber_connection_reset_in_a_long_meeting(dev_server, browsers, artifacts):
    """After 24 ended sections the server offers a new subscriber connection (`reset`): the SDK closes
    the old RTCPeerConnection, answers with a new one, and A's camera plays again on B's page."""
    base = f"http://127.0.0.1:{dev_server.port}"
    a = browsers("a")
    b = browsers("b")
    a_id = join(a, base, "long-meeting", "Alice", "host")
    join(b, base, "long-meeting", "Bob", "participant")
    a.click("camera-toggle")
    wait_tile_video(b, a_id)
    wait_decoding(b, ["camera"])
    old_pc = b.js("window.__firstSubscriber = window.atriumApp.room.subscriber; return true")
    assert old_pc
    # Each unsubscribe ends the camera's section, each subscribe adds one.
    b.js_async("""const done = arguments[arguments.length - 1];
        (async () => {
          const room = window.atriumApp.room;
          const cam = room.remoteTracks.find((t) => t.source === 'camera').trackId;
          for (let i = 0; i < 25; i++) { await room.unsubscribe(cam); await room.subscribe(cam); }
          done(true);
        })().catch((e) => done(String(e)));""")
    b.wait("return window.atriumApp.room.subscriber && window.atriumApp.room.subscriber !== window.__firstSubscriber",
           20, "a new subscriber connection")
    assert b.js("return window.__firstSubscriber.connectionState") == "closed"
    wait_decoding(b, ["camera"])
    wait_tile_video(b, a_id)
