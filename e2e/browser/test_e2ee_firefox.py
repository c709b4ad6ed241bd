"""End-to-end encryption between Chromium and Firefox (docs/e2ee.md): both run the SDK's SFrame worker
through `RTCRtpScriptTransform`. In a room created with `e2ee`, a Chromium page and a headless Firefox
(firefox-esr, driven over WebDriver BiDi: firefox.py) each publish a canvas camera with the same
passphrase and decode the other's (content checked), with no frame failing to decrypt; Firefox then
switches to Chromium's low simulcast layer and still decodes it.
"""
import os

import pytest

from firefox import FIREFOX, FirefoxPage
from test_e2ee_page import ERRORS, check_canvas, open_e2ee_room
from test_simulcast import CONNECT, PUBLISH_CANVAS, size_is, wait_inbound, wait_remote


@pytest.fixture
def firefox(artifacts):
    assert os.access(FIREFOX, os.X_OK), f"{FIREFOX} is missing (make test-deps installs firefox-esr)"
    page = FirefoxPage("firefox", artifacts)
    yield page
    page.quit()


def test_chromium_and_firefox_decrypt_each_other(dev_server, browsers, firefox):
    room = "e2ee-firefox"
    chromium = browsers("chromium")
    open_e2ee_room(dev_server, room, chromium, firefox)
    options = {"e2ee": {"passphrase": "both browsers"}}
    chromium.js_async(CONNECT, room, "alice", "participant", options)
    firefox.js_async(CONNECT, room, "bob", "participant", options)
    for page, name in ((chromium, "alice"), (firefox, "bob")):
        page.js_async(ERRORS, name)
    assert firefox.js("return typeof RTCRtpScriptTransform") == "function"
    alice_cam = chromium.js_async(PUBLISH_CANVAS, "alice", {})["trackId"]
    bob_cam = firefox.js_async(PUBLISH_CANVAS, "bob", {})["trackId"]
    wait_remote(firefox, "bob", alice_cam)
    wait_remote(chromium, "alice", bob_cam)
    check_canvas(firefox, "bob", alice_cam)
    check_canvas(chromium, "alice", bob_cam)
    assert firefox.js_async("return await window.peers.bob.setQuality(arguments[0], 'low');", alice_cam)
    wait_inbound(firefox, "bob", alice_cam, lambda st: size_is(st, 320, 180), 40, "Firefox on the low layer")
    check_canvas(firefox, "bob", alice_cam)
    assert chromium.js("return window.peers.alice.e2eeErrors") == []
    assert firefox.js("return window.peers.bob.e2eeErrors") == []
