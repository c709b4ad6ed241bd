"""The meeting page in an end-to-end encrypted room (docs/e2ee.md): Alice's link carries the passphrase
in its fragment (never sent to the server): she joins with her camera and the page shows the
"End-to-end encrypted" badge. Bob's link has none: the join is refused with `e2ee_required` and the
page asks for the passphrase; with a wrong one he is in, and Alice's tile says her media cannot be
decrypted. Carol types the right one and sees Alice's camera play, with no such notice. Carol leaves:
the pages that hold the key roll it (`rotateOnLeave`): Alice's page sends with key 1 and Dave, who
joins after, is handed it and sees her camera.
"""
import json

from test_meeting_page import page_url, tile, wait_tile_video

PHASE_MEETING = "const a = window.atriumApp; return document.body.dataset.phase === 'meeting' && a && a.room && a.room.me;"


def submit_passphrase(b, passphrase):
    b.js("document.getElementById('join-passphrase').value = arguments[0];"
         "document.getElementById('join-submit').click();", passphrase)
    b.wait(PHASE_MEETING, 20, f"{b.name} to join")


def test_the_page_asks_for_the_passphrase_and_shows_what_it_cannot_decrypt(dev_server, browsers):
    room = "e2ee-meeting"
    status, _, _, created = dev_server.request("POST", "/v1/rooms", {"name": room, "e2ee": True})
    assert status == 201 and created["e2ee"] is True, created
    base = f"http://127.0.0.1:{dev_server.port}"
    a, b, c = browsers("a"), browsers("b"), browsers("c")

    a.open(page_url(base, room=room, name="Alice", role="host", autojoin="1", camera="1") + "#passphrase=pw")
    a.wait(PHASE_MEETING, 20, "alice to join")
    alice = a.js("return window.atriumApp.room.me.id")
    assert a.js("return !document.querySelector('[data-testid=e2ee-badge]').hidden")
    a.wait("return window.atriumApp.room.localTrack('camera') !== null", 20, "alice's camera")

    b.open(page_url(base, room=room, name="Bob", role="participant", autojoin="1"))
    b.wait("const e = document.querySelector('[data-testid=join-error]');"
           "return e && !e.hidden && e.dataset.code === 'e2ee_required'"
           " && !document.getElementById('join-passphrase-fields').hidden", 20, "bob asked for the passphrase")
    submit_passphrase(b, "not the passphrase")
    assert b.js("return !document.querySelector('[data-testid=e2ee-badge]').hidden")
    notice = json.dumps(tile(alice) + ' [data-testid="tile-e2ee-error"]')
    b.wait(f"const n = document.querySelector({notice}); return n && !n.hidden && n.textContent.includes('Alice')",
           30, "alice's tile saying her media cannot be decrypted")

    c.open(page_url(base, room=room, name="Carol", role="participant", autojoin="1"))
    c.wait("return !document.getElementById('join-passphrase-fields').hidden", 20, "carol asked for the passphrase")
    submit_passphrase(c, "pw")
    wait_tile_video(c, alice, 30)
    assert c.js(f"const n = document.querySelector({notice}); return !n || n.hidden")

    # Carol leaves: Alice's page rolls the key (Bob, with the wrong passphrase, was never a member).
    c.click("leave")
    a.wait("return window.atriumApp.room.e2ee.index === 1", 20, "alice's page on key 1")
    c.open(page_url(base, room=room, name="Dave", role="participant", autojoin="1") + "#passphrase=pw")
    c.wait(PHASE_MEETING, 20, "dave to join")
    c.wait("return window.atriumApp.room.e2ee.index === 1", 20, "dave's page handed key 1")
    wait_tile_video(c, alice, 30)
