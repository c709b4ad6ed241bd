"""Data beside media on the meeting page in headless Chromium: two people chat (history for a late
joiner, an unread count while the chat is closed), react over the sender's tile, raise a hand that a
host lowers, and the viewer's page draws the sharer's pointer over the stage where the sharer's mouse
was on the shared picture (sent on the lossy data channel, read back from the viewer's DOM).

Run inside a loopback-only network namespace (see conftest.py).
"""
import json

from test_meeting_page import join, tile, wait_stage


def chat_payloads(b):
    return b.js("return [...document.querySelectorAll('[data-testid=\"chat-message\"] .chat-text')]"
                ".map((e) => e.textContent);")


def send_chat(b, text):
    b.js("document.querySelector('[data-testid=\"chat-input\"]').value = arguments[0];", text)
    b.click("chat-send")


# Where a point of the shared picture (0..1 of its width and height) is in the page's viewport: the stage
# video shows the picture with object-fit: contain.
PICTURE_POINT = """
const [x, y] = arguments;
const v = document.querySelector('[data-testid="stage-video"]');
const r = v.getBoundingClientRect();
const s = Math.min(r.width / v.videoWidth, r.height / v.videoHeight);
const w = v.videoWidth * s, h = v.videoHeight * s;
return {x: Math.round(r.left + (r.width - w) / 2 + x * w), y: Math.round(r.top + (r.height - h) / 2 + y * h)};
"""


def test_chat_reactions_hands_and_the_sharers_pointer(dev_server, browsers, artifacts):
    base = f"http://127.0.0.1:{dev_server.port}"
    room = "data-page"
    a = browsers("a")
    b = browsers("b")
    a_id = join(a, base, room, "Alice", "host")
    b_id = join(b, base, room, "Bob", "participant")
    a.wait(f"return !!document.querySelector({json.dumps(tile(b_id))})", 10, "A sees B's tile")

    # Chat both ways, shown in order with the sender's name.
    send_chat(b, "Hello from Bob")
    a.wait("return [...document.querySelectorAll('[data-testid=\"chat-message\"]')].length === 1", 10, "A gets Bob's message")
    send_chat(a, "Hi Bob")
    b.wait("return document.querySelectorAll('[data-testid=\"chat-message\"]').length === 2", 10, "B gets both messages")
    assert chat_payloads(b) == ["Hello from Bob", "Hi Bob"]
    assert b.js("return document.querySelector('[data-testid=\"chat-message\"]').dataset.from") == b_id
    # With the chat closed, a new message counts as unread; opening it clears the count.
    a.click("chat-toggle")
    a.wait("return document.querySelector('[data-testid=\"chat-panel\"]').hidden", 5, "A's chat closed")
    send_chat(b, "Are you there?")
    a.wait("const u = document.querySelector('[data-testid=\"chat-unread\"]'); return !u.hidden && u.textContent === '1';",
           10, "A's unread count")
    a.click("chat-toggle")
    a.wait("return document.querySelector('[data-testid=\"chat-unread\"]').hidden", 5, "A's unread cleared")
    a.screenshot("01-chat")

    # A late joiner gets the history.
    c = browsers("c")
    join(c, base, room, "Carol", "participant")
    c.wait("return document.querySelectorAll('[data-testid=\"chat-message\"]').length === 3", 10, "C gets the history")
    assert chat_payloads(c) == ["Hello from Bob", "Hi Bob", "Are you there?"]

    # A reaction floats over the sender's tile on the others' pages.
    a.click("react", '[data-emoji="👍"]')
    reaction = json.dumps(tile(a_id, ' [data-testid="reaction"][data-emoji="👍"]'))
    b.wait(f"return !!document.querySelector({reaction})", 10, "B sees A's reaction on A's tile")

    # Bob raises his hand; the host sees it in the People list and on the tile, and lowers it.
    b.click("hand-toggle")
    b.wait("return document.querySelector('[data-testid=\"hand-toggle\"]').dataset.state === 'raised'", 10, "B's hand up")
    hand = json.dumps(f'[data-testid="person"][data-participant-id="{b_id}"] [data-testid="person-hand"]')
    a.wait(f"return !!document.querySelector({hand})", 10, "A sees B's hand in People")
    assert a.js(f"return !!document.querySelector({json.dumps(tile(b_id, ' [data-testid=hand-badge]'))})")
    a.screenshot("02-hand")
    a.click("person-lower-hand", f'[data-participant-id="{b_id}"]')
    b.wait("return document.querySelector('[data-testid=\"hand-toggle\"]').dataset.state === 'lowered'", 10,
           "B's hand lowered by the host")

    # The sharer's pointer: A shares, moves the mouse over the picture on its own stage; B's stage shows
    # A's pointer, named, at that point of the picture.
    a.click("share-toggle")
    wait_stage(a, a_id)
    wait_stage(b, a_id)
    from selenium.webdriver.common.actions.action_builder import ActionBuilder
    for x, y in ((0.5, 0.5), (0.3, 0.6), (0.25, 0.4)):
        p = a.js(PICTURE_POINT, x, y)
        builder = ActionBuilder(a.driver)
        builder.pointer_action.move_to_location(p["x"], p["y"])
        builder.perform()
    sel = json.dumps(f'[data-testid="pointer"][data-participant-id="{a_id}"]')
    b.wait(f"const d = document.querySelector({sel}); return !!d && Math.abs(+d.dataset.x - 0.25) < 0.02"
           " && Math.abs(+d.dataset.y - 0.4) < 0.02;", 10, "B shows A's pointer at (0.25, 0.4)")
    placed = b.js(f"""
        const d = document.querySelector({sel});
        const dot = d.querySelector('.pointer-dot').getBoundingClientRect();
        const want = (() => {{ {PICTURE_POINT} }})();
        return {{name: d.textContent, dx: Math.abs(dot.left + dot.width / 2 - want.x),
                dy: Math.abs(dot.top + dot.height / 2 - want.y)}};""", 0.25, 0.4)
    b.screenshot("03-pointer")
    assert placed["name"] == "Alice", placed
    assert placed["dx"] <= 3 and placed["dy"] <= 3, placed
    # Bob, a viewer of the share, may not point until Alice lets viewers point.
    assert not b.visible("pointers-toggle") and a.visible("pointers-toggle")


def test_a_page_receives_a_pointer_stream_in_the_order_sent(dev_server, browsers, artifacts):
    """One page sends 60 numbered messages on its lossy data channel at 30 a second (the SDK's
    `sendData(..., {lossy: true})`); the other page's SDK receives them on its own lossy channel, in the
    order sent (on loopback none is lost)."""
    base = f"http://127.0.0.1:{dev_server.port}"
    a = browsers("a")
    b = browsers("b")
    join(a, base, "data-seq", "Alice", "participant")
    join(b, base, "data-seq", "Bob", "participant")
    for p in (a, b):
        p.wait("const c = window.atriumApp.room.channels; return !!c.lossy && c.lossy.readyState === 'open'", 15,
               f"{p.name}'s lossy channel open")
    b.js("window.seqs = []; window.atriumApp.room.addEventListener('data', (e) => {"
         " if (e.detail.topic === 'seq') window.seqs.push(+e.detail.payload); });")
    sent = a.js_async("""
        const room = window.atriumApp.room;
        let ok = 0;
        for (let n = 0; n < 60; n++) {
          if (await room.sendData("seq", String(n), {lossy: true})) ok++;
          await new Promise((r) => setTimeout(r, 1000 / 30));
        }
        return ok;""")
    assert sent == 60
    b.wait("return window.seqs.length === 60", 15, "B receives the 60 messages")
    assert b.js("return window.seqs") == list(range(60))
