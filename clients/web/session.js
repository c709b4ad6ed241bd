// The session around a meeting: the room name's rules on the form, the tab's session (a reload
// rejoins it), the address bar and the invite link.

import { $, app, el, params } from "/app/state.js";
import { notify } from "/app/notices.js";

/** Room names the server takes (docs/protocol.md, `join`): 1 to 128 of A-Z a-z 0-9 _ - . */
export const ROOM_NAME = /^(?!\.+$)[A-Za-z0-9_.-]{1,128}$/;

/** Why a room name is refused, with a suggestion, or "" when it is fine. */
export function roomNameProblem(name) {
  if (!name) return "Enter a room name.";
  if (ROOM_NAME.test(name)) return "";
  const suggestion = name.trim().replace(/\s+/g, "-").replace(/[^A-Za-z0-9_.-]/g, "").slice(0, 128);
  return `Room names use letters, digits, _ - and . only (no spaces)${suggestion && ROOM_NAME.test(suggestion) ? `: try “${suggestion}”` : ""}.`;
}

/** Shows the room name's problem beside the field (an empty field only once `required`: at Join). */
export function checkRoomField(required = false) {
  const input = /** @type {HTMLInputElement} */ ($("join-room"));
  const problem = input.value || required ? roomNameProblem(input.value.trim()) : "";
  input.setCustomValidity(problem);
  input.setAttribute("aria-invalid", String(!!problem));
  const hint = $("join-room-hint");
  hint.textContent = problem || "Letters, digits, _ - and . (no spaces).";
  hint.dataset.state = problem ? "invalid" : "ok";
  return problem;
}

/** The session this tab is in (sessionStorage): a reload rejoins it. */
export function savedSession() {
  try {
    return JSON.parse(sessionStorage.getItem("atrium.session") || "null");
  } catch {
    return null;
  }
}

export function saveSession() {
  const room = app.room;
  if (!room) return;
  sessionStorage.setItem(
    "atrium.session",
    JSON.stringify({
      room: $("join-room").value.trim(),
      name: $("join-name").value.trim(),
      role: /** @type {HTMLSelectElement} */ ($("join-role")).value,
      identity: room.me.identity,
      camera: app.wanted.camera,
      mic: app.wanted.mic,
    }),
  );
}

/** The invite link of the room (dev mode: others join it with their own name). */
export function inviteLink() {
  const name = app.room?.roomInfo?.name || $("join-room").value.trim();
  return `${location.origin}/?room=${encodeURIComponent(name)}`;
}

/** Puts the room and the name into the address bar (dev mode), so a reload stays in the room. */
export function rememberInURL() {
  if (!app.devMode || params.get("token")) return;
  const q = new URLSearchParams({ room: $("join-room").value.trim() });
  const name = $("join-name").value.trim();
  if (name) q.set("name", name);
  history.replaceState(null, "", `/?${q}`);
}

export async function copyInvite() {
  const link = inviteLink();
  app.invite = link;
  let copied = false;
  try {
    await navigator.clipboard.writeText(link);
    copied = true;
  } catch {
    // No clipboard permission (an insecure origin, a headless browser): the old way.
    const t = /** @type {HTMLTextAreaElement} */ (el("textarea", { class: "offscreen" }));
    t.value = link;
    document.body.append(t);
    t.select();
    copied = document.execCommand("copy");
    t.remove();
  }
  const n = notify({
    text: copied ? "Invite link copied: " : "Copy this invite link: ",
    reason: "invite",
    key: "invite",
  });
  n.querySelector(".text")?.append(el("a", { href: link, "data-testid": "invite-link", text: link }));
}

