"""End-to-end key rotation when someone leaves (docs/e2ee.md, the JavaScript SDK's `rotateOnLeave`):
in a room created with `e2ee`, alice, bob and carol connect with a passphrase and the option; their
pages prove their public keys to each other (data messages, topic `atrium.e2ee`). Carol leaves: the
key rolls to index 1, a random secret wrapped for each remaining member, and both switch to it
(`e2ee_key`) with no frame failing to decrypt; bob still decodes alice's canvas. A newcomer with the
option is handed the key in use and decodes alice's canvas (that a page with the passphrase alone
cannot read a rolled index, test_e2ee_page.py checks). Bob's session is lost (a resume the server
refuses): he joins again under a new participant id, proves his key again under it, and is handed
index 2, which the room rolled to when his old id left.
"""
import json

from test_e2ee_page import ERRORS, check_canvas, open_e2ee_room
from test_simulcast import CONNECT, PUBLISH_CANVAS, wait_remote

KEYS = """
const [name] = arguments;
const peer = window.peers[name];
peer.e2eeKeys = [];
peer.addEventListener("e2ee_key", (e) => peer.e2eeKeys.push(e.detail.index));
return true;
"""

ROTATING = {"e2ee": {"passphrase": "rolling", "rotateOnLeave": True}}


def members(page, name, count):
    page.wait(f"return window.peers[{json.dumps(name)}].rotation.members.size === {count}", 20,
              f"{name} with {count} proven members")


def test_the_key_rolls_when_a_member_leaves(dev_server, browsers):
    room = "e2ee-rotation"
    a, b = browsers("a"), browsers("b")
    open_e2ee_room(dev_server, room, a, b)
    a.js_async(CONNECT, room, "alice", "participant", ROTATING)
    b.js_async(CONNECT, room, "bob", "participant", ROTATING)
    b.js_async(CONNECT, room, "carol", "participant", ROTATING)
    for page, name in ((a, "alice"), (b, "bob"), (b, "carol")):
        members(page, name, 2)
    for page, name in ((a, "alice"), (b, "bob")):
        page.js_async(ERRORS, name)
        page.js_async(KEYS, name)
    alice_cam = a.js_async(PUBLISH_CANVAS, "alice", {})["trackId"]
    for name in ("bob", "carol"):
        wait_remote(b, name, alice_cam)
        check_canvas(b, name, alice_cam)

    assert b.js_async("await window.peers.carol.leave(); return true;")
    for page, name in ((a, "alice"), (b, "bob")):
        page.wait(f"return window.peers[{json.dumps(name)}].e2eeKeys.includes(1)", 20, f"{name} sending with key 1")
        members(page, name, 1)
    check_canvas(b, "bob", alice_cam)
    assert a.js("return window.peers.alice.e2eeErrors") == []
    assert b.js("return window.peers.bob.e2eeErrors") == []

    # A newcomer with the option is handed the key in use.
    b.js_async(CONNECT, room, "dave", "participant", ROTATING)
    b.wait("return window.peers.dave.e2ee.index === 1", 20, "dave handed key 1")
    wait_remote(b, "dave", alice_cam)
    check_canvas(b, "dave", alice_cam)

    # Bob's session lost: the server refuses his resume, he joins again under a new id.
    old = b.js("return window.peers.bob.me.id")
    b.js("const p = window.peers.bob; p.resumeToken = 'x'.repeat(32); p.ws.close(); return true;")
    b.wait(f"const p = window.peers.bob; return p.me.id !== {json.dumps(old)} && p.e2ee.index === 2", 30,
           "bob rejoined and handed key 2")
    assert a.js("return window.peers.alice.e2ee.index") == 2
    wait_remote(b, "bob", alice_cam)
    check_canvas(b, "bob", alice_cam)
