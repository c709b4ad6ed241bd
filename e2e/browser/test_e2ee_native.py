"""End-to-end encryption between the meeting page and AtriumKit's native client (docs/e2ee.md): both
encrypt with SFrame the same way (the JavaScript SDK's worker, AtriumSFrame). In a room created with
`e2ee`: `atrium share --passphrase` shares its stripes pattern and a Chromium meeting page joined with
the passphrase shows it (the pattern's colours and its frame numbers in order); the page shares its
drawn screen and `atrium watch --passphrase` decrypts and decodes it (the page's stamps in order, its
colours). `atrium watch` with another passphrase receives the frames and decodes none (counted as
decryption failures), and without one it is refused (`e2ee_required`). Members leave (the sharer, then a
second page): the page and `atrium watch` roll to the next key together (the watcher, a newcomer after
the first roll, is handed the key in use) and the watcher goes on decoding, nothing failing.
"""
import json
import os
import signal
import subprocess
import sys

from test_e2ee_meeting_page import PHASE_MEETING
from test_meeting_page import page_url, wait_stage
from test_native_share_page import STAMPED_SCREEN, STRIPES, read_y4m, stamp_of

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
from signal_client import mint  # noqa: E402

PASSPHRASE = "native and page"


def native(server, command, room, identity, *args):
    from conftest import ATRIUM_BIN
    return subprocess.Popen([ATRIUM_BIN, command, "--url", f"ws://127.0.0.1:{server.port}", "--token",
                             mint(server, room, identity), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def seconds_until(proc, enough):
    """The watcher's per-second lines until `enough(totals)`; returns the totals."""
    totals, lines = {"frames": 0, "decryptFailures": 0, "keyIndex": 0}, []
    while not enough(totals):
        line = proc.stdout.readline()
        assert line, f"atrium watch ended: {lines[-5:]} {proc.stderr.read()}"
        lines.append(line.strip())
        event = json.loads(line)
        if event["event"] == "second":
            totals["frames"] += event["frames"]
            totals["decryptFailures"] = event["decryptFailures"]
            totals["keyIndex"] = event["keyIndex"]
            assert event["decodeErrors"] == 0, event
    return totals


def test_the_native_client_and_the_page_read_each_other(dev_server, browsers, tmp_path):
    room = "e2ee-native"
    assert dev_server.request("POST", "/v1/rooms", {"name": room, "e2ee": True})[0] == 201
    base = f"http://127.0.0.1:{dev_server.port}"
    procs = []
    try:
        # Without the passphrase the native client is refused.
        refused = native(dev_server, "share", room, "no-key", "--seconds", "5")
        procs.append(refused)
        _, err = refused.communicate(timeout=30)
        assert refused.returncode != 0 and "e2ee_required" in err, (refused.returncode, err)

        # atrium share -> the page.
        b = browsers("page")
        b.open(page_url(base, room=room, name="Page", role="participant", autojoin="1") + f"#passphrase={PASSPHRASE}")
        b.wait(PHASE_MEETING, 20, "the page to join")
        me = b.js("return window.atriumApp.room.me.id")
        sharer = native(dev_server, "share", room, "bot", "--fps", "10", "--seconds", "60", "--passphrase", PASSPHRASE)
        procs.append(sharer)
        bot = b.wait("return [...window.atriumApp.room.participants.values()].find((p) => p.identity === 'bot')?.id",
                     20, "the native sharer to join")
        try:
            wait_stage(b, bot, timeout=30)
        except AssertionError as e:
            sharer.kill()
            raise AssertionError(f"{e}; atrium share said: {sharer.communicate()}") from e
        frames = b.js_async(STRIPES)
        assert len(frames) >= 5, frames
        for f in frames:
            (wr, wg, wb), (br, bg, bb) = f["white"], f["blue"]
            assert min(wr, wg, wb) > 170 and bb > 170 and br < 110 and bg < 110, f
        stamps = [f["stamp"] for f in frames]
        assert all(0 < s < 100000 for s in stamps) and stamps == sorted(stamps) and stamps[-1] > stamps[0], stamps
        sharer.send_signal(signal.SIGINT)
        assert sharer.wait(20) == 0, sharer.stderr.read()
        b.wait("return document.querySelector('[data-testid=\"share-stage\"]').hidden", 15, "the stage to go")

        # The page -> atrium watch.
        out = tmp_path / "watched.y4m"
        watcher = native(dev_server, "watch", room, "watcher", "--out", str(out), "--seconds", "60",
                         "--passphrase", PASSPHRASE)
        outsider = native(dev_server, "watch", room, "outsider", "--seconds", "60", "--passphrase", "another")
        procs += [watcher, outsider]
        b.js(STAMPED_SCREEN)
        b.click("share-toggle")
        wait_stage(b, me, timeout=30)
        totals = seconds_until(watcher, lambda t: t["frames"] >= 30)
        assert totals["decryptFailures"] == 0, totals
        other = seconds_until(outsider, lambda t: t["decryptFailures"] >= 10)
        assert other["frames"] == 0, other
        outsider.send_signal(signal.SIGINT)
        assert outsider.wait(20) == 0, outsider.stderr.read()

        # A member leaves: the page and the native watcher roll to key 1 together.
        leaver = browsers("leaver")
        leaver.open(page_url(base, room=room, name="Leaver", role="participant", autojoin="1")
                    + f"#passphrase={PASSPHRASE}")
        leaver.wait(PHASE_MEETING, 20, "the leaver to join")
        for page in (b, leaver):
            page.wait("return window.atriumApp.room.rotation.members.size === 2", 20, "the watcher and a page proven")
        before = b.js("return window.atriumApp.room.e2ee.index")  # the sharer's leave rolled it once already
        leaver.click("leave")
        b.wait(f"return window.atriumApp.room.e2ee.index === {before + 1}", 20, "the page on the next key")
        rolled = seconds_until(watcher, lambda t: t["keyIndex"] == before + 1)
        after = seconds_until(watcher, lambda t: t["frames"] >= 30)
        assert rolled["decryptFailures"] == 0 and after["decryptFailures"] == 0, (rolled, after)
        watcher.send_signal(signal.SIGINT)
        assert watcher.wait(20) == 0, watcher.stderr.read()
        w, h, pictures = read_y4m(out)
        assert (w, h) == (1280, 720) and len(pictures) >= 60, (w, h, len(pictures))
        stamps = [stamp_of(p, w) for p in pictures]
        assert all(0 < s < 100000 for s in stamps) and stamps == sorted(stamps), stamps[:20]
        for p in pictures[::10]:
            left, right = p[360 * w + 320], p[360 * w + 960]
            assert 50 < left < 120 and right > 200, (left, right)  # red and white (BT.601 luma)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
