// Data beside media on the meeting page: the chat panel (history from the join, an unread count),
// reactions over the sender's tile, raised hands (an attribute: `hand: raised`) in the toolbar, the
// People list and the tiles, and pointers over the shared screen (sent on the lossy data channel, drawn
// over the stage with the person's name, fading when they stop).

import { $, app, el, fill, who } from "/app/state.js";
import { notify } from "/app/notices.js";

export const REACTIONS = ["👍", "👏", "😂", "🎉", "❤️"];
/** A reaction at most every 500 ms from this page; at most three float over one tile at once. */
const REACTION_GAP_MS = 500;
const REACTIONS_PER_TILE = 3;
/** A pointer not moved for this long fades out. */
const POINTER_FADE_MS = 1500;

/** Chat, reactions, hands and pointers of one room (reset on every join). */
export function resetData() {
  app.unread = 0;
  app.chatOpen = true;
  app.lastReaction = 0;
  app.pointers = new Map();
}

/** A `data` event (over signaling or a data channel). */
export function onData(room, m) {
  if (m.topic === "chat") {
    if ((!app.chatOpen || document.hidden) && m.from !== room.me.id) app.unread = (app.unread || 0) + 1;
    renderChat(room);
  } else if (m.topic === "reaction" && m.from) {
    showReaction(m.from, m.payload);
  } else if (m.topic === "pointer" && m.from) {
    let p;
    try {
      p = JSON.parse(m.payload);
    } catch {
      return;
    }
    showPointer(room, m.from, p);
  }
}

// ------------------------------------------------------------------ chat

export function renderChat(room) {
  const list = $("chat-list");
  const messages = room.chat;
  if (list.dataset.count !== String(messages.length) || list.dataset.last !== messages.at(-1)?.messageId) {
    list.dataset.count = String(messages.length);
    list.dataset.last = messages.at(-1)?.messageId ?? "";
    const atEnd = list.scrollTop + list.clientHeight >= list.scrollHeight - 8;
    fill(
      list,
      ...messages.map((m) =>
        el(
          "li",
          { "data-testid": "chat-message", "data-message-id": m.messageId, "data-from": m.from ?? "server" },
          el("span", { class: "chat-who" }, m.from ? who(m.from).Name : "Server"),
          el("span", { class: "chat-time muted small" }, new Date(m.at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })),
          el("span", { class: "chat-text" }, m.payload),
        ),
      ),
    );
    if (atEnd) list.scrollTop = list.scrollHeight;
  }
  $("chat-empty").hidden = messages.length > 0;
  const badge = $("chat-unread");
  badge.hidden = !app.unread;
  badge.textContent = String(app.unread || 0);
  $("chat-panel").hidden = !app.chatOpen;
  $("chat-toggle").setAttribute("aria-pressed", String(!!app.chatOpen));
  const mayChat = room.me.permissions.canPublishData !== false;
  $("chat-input").disabled = !mayChat;
  $("chat-send").disabled = !mayChat;
  $("chat-input").placeholder = mayChat ? "Message everyone" : "A host turned off your messages";
}

// ------------------------------------------------------------------ reactions

function showReaction(from, emoji) {
  if (!REACTIONS.includes(emoji)) return;
  const tile = app.tiles.get(from);
  if (!tile) return;
  const layer = tile.querySelector(".reactions") ?? tile.appendChild(el("div", { class: "reactions", "aria-live": "polite" }));
  if (layer.childElementCount >= REACTIONS_PER_TILE) layer.firstElementChild?.remove();
  const r = el("span", { class: "reaction", "data-testid": "reaction", "data-emoji": emoji, role: "img", "aria-label": `${who(from).Name} reacted ${emoji}` }, emoji);
  layer.append(r);
  setTimeout(() => r.remove(), 3000);
}

async function react(room, emoji) {
  const now = Date.now();
  if (now - app.lastReaction < REACTION_GAP_MS) return;
  app.lastReaction = now;
  showReaction(room.me.id, emoji);
  await room.sendData("reaction", emoji);
}

// ------------------------------------------------------------------ hands

export function handRaised(p) {
  return p?.attributes?.hand === "raised";
}

export function renderHands(room) {
  const raised = handRaised(room.me);
  const b = $("hand-toggle");
  b.setAttribute("aria-pressed", String(raised));
  b.dataset.state = raised ? "raised" : "lowered";
  b.textContent = raised ? "✋ Lower hand" : "✋ Raise hand";
}

// ------------------------------------------------------------------ pointers

/** Where a pointer event falls in the shown video's picture (object-fit: contain), 0..1, or null. */
function pictureCoordinates(video, ev) {
  const r = video.getBoundingClientRect();
  const vw = video.videoWidth;
  const vh = video.videoHeight;
  if (!vw || !vh || !r.width || !r.height) return null;
  const scale = Math.min(r.width / vw, r.height / vh);
  const w = vw * scale;
  const h = vh * scale;
  const x = (ev.clientX - r.left - (r.width - w) / 2) / w;
  const y = (ev.clientY - r.top - (r.height - h) / 2) / h;
  return x < 0 || x > 1 || y < 0 || y > 1 ? null : { x, y };
}

/** The share on the stage and whether this page may point at it (its sharer always; others when the
 * sharer set `pointers: open`). */
function pointable(room) {
  const shareId = $("stage").dataset.shareId;
  const share = shareId ? room.shares.get(shareId) : null;
  if (!share || !share.trackId) return null;
  const sharer = share.participantId === room.me.id ? room.me : room.participants.get(share.participantId);
  const allowed = share.participantId === room.me.id || sharer?.attributes?.pointers === "open";
  return allowed ? share : null;
}

function showPointer(room, from, p) {
  const shareId = $("stage").dataset.shareId;
  const share = shareId ? room.shares.get(shareId) : null;
  if (!share || p.trackId !== share.trackId) return;
  // Viewers' pointers only while the sharer allows them.
  const sharer = share.participantId === room.me.id ? room.me : room.participants.get(share.participantId);
  if (from !== share.participantId && sharer?.attributes?.pointers !== "open") return;
  let dot = app.pointers.get(from)?.dot;
  if (p.gone) {
    dot?.remove();
    app.pointers.delete(from);
    return;
  }
  if (typeof p.x !== "number" || typeof p.y !== "number") return;
  if (!dot) {
    dot = el(
      "div",
      { class: "pointer", "data-testid": "pointer", "data-participant-id": from },
      el("span", { class: "pointer-dot" }),
      el("span", { class: "pointer-name" }, who(from).Name),
    );
    $("stage-pointers").append(dot);
  }
  const entry = { dot, x: p.x, y: p.y, at: performance.now() };
  app.pointers.set(from, entry);
  placePointer(entry);
  dot.classList.remove("fading");
  clearTimeout(dot.fadeTimer);
  dot.fadeTimer = setTimeout(() => {
    dot.classList.add("fading");
    dot.fadeTimer = setTimeout(() => {
      dot.remove();
      if (app.pointers.get(from)?.dot === dot) app.pointers.delete(from);
    }, 600);
  }, POINTER_FADE_MS);
}

/** Places a pointer on the picture's box inside the stage video. */
function placePointer(entry) {
  const video = /** @type {HTMLVideoElement} */ ($("stage-video"));
  const layer = $("stage-pointers");
  const r = video.getBoundingClientRect();
  const lr = layer.getBoundingClientRect();
  const vw = video.videoWidth || 16;
  const vh = video.videoHeight || 9;
  const scale = Math.min(r.width / vw, r.height / vh);
  const w = vw * scale;
  const h = vh * scale;
  const left = r.left - lr.left + (r.width - w) / 2 + entry.x * w;
  const top = r.top - lr.top + (r.height - h) / 2 + entry.y * h;
  entry.dot.style.transform = `translate(${left}px, ${top}px)`;
  entry.dot.dataset.x = String(entry.x);
  entry.dot.dataset.y = String(entry.y);
}

export function renderPointers(room) {
  const shareId = $("stage").dataset.shareId;
  for (const [from, entry] of app.pointers) {
    const share = shareId ? room.shares.get(shareId) : null;
    if (!share) {
      entry.dot.remove();
      app.pointers.delete(from);
    } else placePointer(entry);
  }
  const share = shareId ? room.shares.get(shareId) : null;
  const mine = share && share.participantId === room.me.id;
  const toggle = $("pointers-toggle");
  toggle.hidden = !mine;
  const open = room.me.attributes?.pointers === "open";
  toggle.setAttribute("aria-pressed", String(open));
  toggle.textContent = open ? "Viewers can point" : "Let viewers point";
}

// ------------------------------------------------------------------ wiring

export function wireData(act, render) {
  $("chat-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const input = /** @type {HTMLInputElement} */ ($("chat-input"));
    const text = input.value.trim();
    if (!text || !app.room) return;
    input.value = "";
    act("chat", "Could not send the message", () => app.room.sendData("chat", text));
  });
  $("chat-toggle").addEventListener("click", () => {
    app.chatOpen = !app.chatOpen;
    if (app.chatOpen) app.unread = 0;
    render();
  });
  $("chat-list").addEventListener("focusin", () => {
    app.unread = 0;
    render();
  });
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden && app.chatOpen) {
      app.unread = 0;
      render();
    }
  });
  fill(
    $("reactions"),
    ...REACTIONS.map((emoji) =>
      el("button", {
        type: "button",
        class: "reaction-button",
        "data-testid": "react",
        "data-emoji": emoji,
        "aria-label": `React ${emoji}`,
        text: emoji,
        onclick: () => app.room && react(app.room, emoji).catch((e) => notify({ kind: "error", text: `Reaction: ${e.message}` })),
      }),
    ),
  );
  $("hand-toggle").addEventListener("click", () => {
    const room = app.room;
    if (!room) return;
    const raised = handRaised(room.me);
    act("hand", "Could not change your hand", () => room.setAttributes({ hand: raised ? null : "raised" }));
  });
  $("pointers-toggle").addEventListener("click", () => {
    const room = app.room;
    if (!room) return;
    const open = room.me.attributes?.pointers === "open";
    act("pointers", "Could not change who may point", () => room.setAttributes({ pointers: open ? null : "open" }));
  });
  const video = /** @type {HTMLVideoElement} */ ($("stage-video"));
  const frame = video.parentElement;
  frame.addEventListener("pointermove", (ev) => {
    const room = app.room;
    const share = room && pointable(room);
    if (!share) return;
    const at = pictureCoordinates(video, ev);
    if (at) {
      app.pointing = share.trackId;
      room.sendPointer(share.trackId, at.x, at.y);
    } else if (app.pointing) {
      room.sendPointer(app.pointing, null);
      app.pointing = null;
    }
  });
  frame.addEventListener("pointerleave", () => {
    if (app.room && app.pointing) app.room.sendPointer(app.pointing, null);
    app.pointing = null;
  });
}
