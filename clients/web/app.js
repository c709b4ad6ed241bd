// Atrium meeting page: a join screen, the participant grid, the share stage, the controls and the
// host panel, on top of the JavaScript client (/sdk/atrium.js). No framework, no build step.
//
// URL parameters: room, name, role (dev mode), identity (dev mode), token, autojoin=1, camera=1 and
// mic=1 (with autojoin: join with them on). In dev mode the page puts `?room=&name=` into the address
// once joined, so a reload rejoins (the session is kept in sessionStorage) and the "Copy invite link"
// button gives `?room=` to others.
// For tests the page exposes `window.atriumApp` ({room, phase, connection, log, qualities, viewports}).
//
// Simulcast: every remote camera tile tells the server the size it is shown at (a ResizeObserver, the
// tile's CSS size times devicePixelRatio, debounced: `setViewport`), so a small tile gets a small
// layer; and it has a quality menu (low, medium, high: `setQuality`), the layer it never goes above.

import { Room, AtriumError } from "/sdk/atrium.js";
import { notify, clearNotices, dropNotice } from "/app/notices.js";
import { icon, labelled, bars } from "/app/icons.js";
import { preview, wirePreview, startPreview, stopPreview, cameraConstraints, micConstraints } from "/app/prejoin.js";
import { layoutTiles } from "/app/layout.js";

/** @typedef {import("/sdk/atrium.js").RemoteTrack} RemoteTrack */

const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const params = new URLSearchParams(location.search);

/** Human text for each share stop reason (docs/protocol.md section 8). */
const STOP_TEXT = {
  user_stopped: (who) => `${who.Name} stopped sharing.`,
  capture_ended: (who) => `${who.Name_s} screen capture ended, so the share stopped.`,
  preempted: (who, by) => `${who.Name_s} share was replaced by ${by.name_s} share.`,
  permission_revoked: (who, by) => `${by.Name} revoked ${who.name_s} permission to share, so the share stopped.`,
  locked: (who, by) => `${by.Name} locked screen sharing, so ${who.name_s} share stopped.`,
  moderated: (who, by) => `${by.Name} stopped ${who.name_s} share.`,
  publisher_left: (who) => `${who.Name} left the room, so the share ended.`,
  disconnected: (who) => `${who.Name} lost the connection, so the share ended.`,
  room_ended: () => "The room ended, so the share ended.",
};

/** Human text for the error codes a person can run into (docs/protocol.md section 10). */
const ERROR_TEXT = {
  share_locked: "Screen sharing is locked by a host.",
  share_in_progress: "Someone else is already sharing; this room allows one share at a time.",
  too_many_shares: "The room's maximum of concurrent shares is reached.",
  not_allowed: "You are not allowed to do that here.",
  already_published: "That is already being published.",
  request_pending: "Your request to share is already waiting for a host.",
  request_not_found: "That request is no longer pending.",
  share_not_found: "That share has already stopped.",
  no_active_share: "Share audio needs a running share.",
  capture_denied: "The capture was cancelled or the browser denied it.",
  capture_failed: "The browser could not start the capture.",
  disconnected: "The connection to the server is down.",
  timeout: "The server did not answer in time.",
  room_full: "The room is full.",
  room_not_found: "There is no such room, and this token may not create it.",
  invalid_room_name: "Room names use letters, digits, _ - and . only (no spaces).",
  token_expired: "The token has expired; get a new one.",
  bad_signature: "The token is not valid for this server.",
  malformed_token: "That is not a valid token.",
  wrong_room: "The token is not valid for this room.",
  resume_failed: "The session could not be resumed; join again.",
  media_unavailable: "This server runs without media.",
  connection_failed: "Could not connect to the server.",
};

const app = {
  /** @type {Room|null} */
  room: null,
  phase: "loading",
  devMode: false,
  connection: "disconnected",
  /** a history of connection states, for tests and debugging */
  log: [],
  /** the share the person picked for the stage (null: the newest) */
  pinnedShare: null,
  /** participant id -> {level, rank} of the latest active_speakers */
  speakers: new Map(),
  /** HTMLElement per participant id */
  tiles: new Map(),
  /** HTMLAudioElement per remote track id */
  audio: new Map(),
  /** the participant names we know, kept after they leave (for notices) */
  names: new Map(),
  busy: new Set(),
  /** remote track id -> the quality picked in its tile's menu (the server's default is "high") */
  qualities: new Map(),
  /** remote track id -> the viewport last sent for it: {width, height, at, result} */
  viewports: new Map(),
  /** @type {ResizeObserver|null} watches the remote camera tiles (see observeTile) */
  resizer: null,
  /** "grid" or "speaker" (layout.js); pinnedParticipant: the tile featured in speaker view */
  layout: "grid",
  pinnedParticipant: null,
  /** participant id -> {quality, rttMs, loss} of the latest `network_quality` */
  quality: new Map(),
  /** what the person turned on, restored after a rejoin: {camera, mic, share} */
  wanted: { camera: false, mic: false, share: false },
  /** set while the page rejoins by itself after losing the session (a server restart) */
  rejoin: null,
  /** the last invite link copied */
  invite: "",
  /** dev mode: the identity this tab joined with (kept across a reload or a rejoin) */
  identity: "",
};
window.atriumApp = app;

// ------------------------------------------------------------------ small helpers

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

/** Replaces a node's children, skipping null, undefined and false entries. */
function fill(node, ...children) {
  node.replaceChildren(...children.filter((c) => c !== null && c !== undefined && c !== false));
}

function setPhase(phase) {
  app.phase = phase;
  document.body.dataset.phase = phase;
  $("join").hidden = phase === "meeting";
  $("meeting").hidden = phase !== "meeting";
}

function setConnection(state) {
  app.connection = state;
  app.log.push({ t: Date.now(), state });
  const badge = $("connection-state");
  badge.dataset.state = state;
  badge.textContent = { connected: "Connected", reconnecting: "Reconnecting…", disconnected: "Disconnected" }[state];
  $("reconnecting-banner").hidden = state !== "reconnecting";
}

/** A participant's display name, "You" for this one. */
function nameOf(id) {
  if (!id) return "Someone";
  if (id === "admin") return "An administrator";
  if (app.room?.me?.id === id) return "You";
  const p = app.room?.participants.get(id);
  return p?.name || app.names.get(id) || "A participant";
}

/** Name forms for notice sentences: Name, name (sentence-internal), possessives. */
function who(id) {
  const n = nameOf(id);
  const you = n === "You";
  const lower = you ? "you" : n === "Someone" || n === "A participant" || n === "An administrator" ? n.toLowerCase() : n;
  const possessive = (s) => (s.endsWith("s") ? `${s}'` : `${s}'s`);
  return {
    Name: n,
    name: lower,
    Name_s: you ? "Your" : possessive(n),
    name_s: you ? "your" : possessive(lower),
  };
}

function rememberNames() {
  const r = app.room;
  if (!r) return;
  if (r.me) app.names.set(r.me.id, r.me.name);
  for (const p of r.participants.values()) app.names.set(p.id, p.name || p.identity);
}

// ------------------------------------------------------------------ notices

/** An error notice with the protocol's code. */
function notifyError(action, e) {
  const code = e instanceof AtriumError ? e.code : e?.code || e?.name || "error";
  // Closing the browser's screen picker without choosing is not a failure.
  if (code === "capture_denied" && action.includes("sharing")) return;
  const detail = ERROR_TEXT[code] || (e instanceof AtriumError ? e.description : e?.message) || "Something went wrong.";
  console.warn(action, e);
  notify({ kind: "error", text: `${action}: ${detail}`, code });
}

/** Runs a control's action once at a time, with its failure shown as an error notice. */
async function act(key, action, fn) {
  if (app.busy.has(key)) return;
  app.busy.add(key);
  render();
  try {
    await fn();
  } catch (e) {
    notifyError(action, e);
  } finally {
    app.busy.delete(key);
    render();
  }
}

// ------------------------------------------------------------------ join

async function detectDevMode() {
  try {
    // /dev/token exists only in development mode; without a room it answers 422 and mints nothing.
    const r = await fetch("/dev/token", { cache: "no-store" });
    return r.status !== 404;
  } catch {
    return false;
  }
}

function decodeToken(token) {
  try {
    const part = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(part + "=".repeat((4 - (part.length % 4)) % 4)));
  } catch {
    return null;
  }
}

async function obtainToken(room, name, role) {
  const pasted = $("join-token").value.trim() || params.get("token") || "";
  if (pasted) return pasted;
  if (!app.devMode) throw new AtriumError("missing_token", "paste a participant token to join");
  if (!room) throw new AtriumError("invalid_field", "enter a room name");
  const q = new URLSearchParams({ room, name: name || "guest", role });
  const identity = params.get("identity") || app.identity;
  if (identity) q.set("identity", identity);
  const r = await fetch(`/dev/token?${q}`, { cache: "no-store" });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new AtriumError(body.error?.code || "connection_failed", body.error?.message || `HTTP ${r.status}`);
  return body.token;
}

function signalURL() {
  return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/v1/signal`;
}

/** Room names the server takes (docs/protocol.md, `join`): 1 to 128 of A-Z a-z 0-9 _ - . */
const ROOM_NAME = /^(?!\.+$)[A-Za-z0-9_.-]{1,128}$/;

/** Why a room name is refused, with a suggestion, or "" when it is fine. */
function roomNameProblem(name) {
  if (!name) return "Enter a room name.";
  if (ROOM_NAME.test(name)) return "";
  const suggestion = name.trim().replace(/\s+/g, "-").replace(/[^A-Za-z0-9_.-]/g, "").slice(0, 128);
  return `Room names use letters, digits, _ - and . only (no spaces)${suggestion && ROOM_NAME.test(suggestion) ? `: try “${suggestion}”` : ""}.`;
}

function checkRoomField() {
  const input = /** @type {HTMLInputElement} */ ($("join-room"));
  const problem = input.value ? roomNameProblem(input.value.trim()) : "";
  input.setCustomValidity(problem);
  input.setAttribute("aria-invalid", String(!!problem));
  const hint = $("join-room-hint");
  hint.textContent = problem || "Letters, digits, _ - and . (no spaces).";
  hint.dataset.state = problem ? "invalid" : "ok";
  return problem;
}

/** The session this tab is in (sessionStorage): a reload rejoins it. */
function savedSession() {
  try {
    return JSON.parse(sessionStorage.getItem("atrium.session") || "null");
  } catch {
    return null;
  }
}

function saveSession() {
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
function inviteLink() {
  const name = app.room?.roomInfo?.name || $("join-room").value.trim();
  return `${location.origin}/?room=${encodeURIComponent(name)}`;
}

/** Puts the room and the name into the address bar (dev mode), so a reload stays in the room. */
function rememberInURL() {
  if (!app.devMode || params.get("token")) return;
  const q = new URLSearchParams({ room: $("join-room").value.trim() });
  const name = $("join-name").value.trim();
  if (name) q.set("name", name);
  history.replaceState(null, "", `/?${q}`);
}

async function copyInvite() {
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

async function join(ev, restore) {
  ev?.preventDefault();
  if (app.phase === "joining" || app.room) return;
  const room = $("join-room").value.trim();
  const name = $("join-name").value.trim();
  const role = /** @type {HTMLSelectElement} */ ($("join-role")).value;
  $("join-error").hidden = true;
  const problem = app.devMode && !$("join-token").value.trim() && !params.get("token") ? roomNameProblem(room) : "";
  if (problem) {
    showJoinError(problem, "invalid_room_name");
    return false;
  }
  setPhase("joining");
  $("join-submit").disabled = true;
  $("join-submit").textContent = "Joining…";
  // What to turn on once in: the pre-join choice, or what was on before a rejoin or reload.
  const want = restore ?? { camera: preview.camera, mic: preview.mic, share: false };
  stopPreview();
  try {
    const token = await obtainToken(room, name, role);
    const r = await Room.connect(signalURL(), token, name ? { name } : {});
    enterRoom(r);
    rememberInURL();
    localStorage.setItem("atrium.name", name);
    await turnOn(r, want);
    saveSession();
    return true;
  } catch (e) {
    const code = e instanceof AtriumError ? e.code : "error";
    if (!app.room) {
      showJoinError(`${ERROR_TEXT[code] || (e instanceof AtriumError ? e.description : e.message)} `, code);
      setPhase("join");
      if (!app.rejoin) startPreview();
    }
    return false;
  } finally {
    $("join-submit").disabled = false;
    $("join-submit").textContent = "Join";
  }
}

function showJoinError(text, code) {
  $("join-error").hidden = false;
  fill($("join-error"), `${text} `, el("code", { "data-testid": "join-error-code" }, code));
}

/** Turns the camera and microphone on as chosen (the devices of the pre-join screen). */
async function turnOn(room, want) {
  const can = (s) => room.me.permissions.sources.includes(s) && room.me.role !== "viewer";
  app.wanted = { camera: false, mic: false, share: false };
  if (want.camera && can("camera")) {
    await act("camera", "Could not start the camera", async () => {
      await room.setCameraEnabled(true, cameraConstraints());
      app.wanted.camera = true;
    });
  }
  if (want.mic && can("microphone")) {
    await act("mic", "Could not start the microphone", async () => {
      await room.setMicrophoneEnabled(true, micConstraints());
      app.wanted.mic = true;
    });
  }
  if (want.share && can("screen_share")) {
    // A screen capture needs a click (browsers allow getDisplayMedia only on a user gesture).
    notify({
      text: "Your screen share ended when the connection was lost.",
      reason: "share_lost",
      ttl: 0,
      actions: [{ label: "Share again", testid: "notice-share-again", onClick: () => $("share-toggle").click() }],
    });
  }
}

function enterRoom(room) {
  app.room = room;
  app.identity = room.me.identity;
  app.pinnedShare = null;
  app.pinnedParticipant = null;
  app.speakers.clear();
  app.qualities.clear();
  app.viewports.clear();
  app.quality.clear();
  // Notices of the previous session (the lost connection, its stops) are stale now.
  if (app.rejoin) clearNotices((n) => n.dataset.reason !== "share_lost");
  app.rejoin = null;
  $("rejoin-panel").hidden = true;
  for (const s of room.subscriptions ?? []) if (s.quality) app.qualities.set(s.trackId, s.quality);
  for (const t of app.tiles.values()) t.remove();
  app.tiles.clear();
  const on = (type, fn) => room.addEventListener(type, (e) => app.room === room && fn(/** @type {CustomEvent} */ (e).detail));
  on("state", () => {
    rememberNames();
    render();
  });
  on("participant_joined", (m) => {
    if (m.participant.id === room.me.id) return;
    app.names.set(m.participant.id, m.participant.name || m.participant.identity);
    notify({ text: `${m.participant.name || m.participant.identity} joined.`, reason: "participant_joined" });
  });
  on("participant_left", (m) => {
    app.quality.delete(m.participantId);
    if (app.pinnedParticipant === m.participantId) app.pinnedParticipant = null;
    if (m.reason === "replaced") return; // the same person, from another window
    notify({ text: `${who(m.participantId).Name} left.`, reason: "participant_left" });
  });
  on("network_quality", (m) => {
    for (const q of m.participants ?? []) app.quality.set(q.participantId, q);
    render();
  });
  on("track_muted", (m) => {
    if (m.participantId === room.me.id && m.muted && m.by && m.by !== room.me.id) {
      const t = room.me.tracks?.find((x) => x.id === m.trackId);
      notify({ text: `${who(m.by).Name} muted your ${t?.source === "camera" ? "camera" : "microphone"}.`, reason: "muted_by_host" });
    }
    render();
  });
  on("track", (t) => {
    if (t.track.kind === "audio") playAudio(t);
    render();
  });
  on("track_ended", (t) => {
    stopAudio(t.trackId);
    render();
  });
  on("local_track_ended", () => render());
  on("share_started", (m) => {
    if (m.share.participantId !== room.me.id) notify({ text: `${who(m.share.participantId).Name} started sharing.` });
  });
  on("share_paused", (m) => notify({ text: `${who(m.share.participantId).Name_s} share is paused.` }));
  on("share_resumed", (m) => notify({ text: `${who(m.share.participantId).Name_s} share resumed.` }));
  on("share_stopped", (m) => {
    const text = (STOP_TEXT[m.reason] || ((w) => `${w.Name_s} share stopped (${m.reason}).`))(
      who(m.share.participantId),
      who(m.by),
    );
    if (app.pinnedShare === m.share.id) app.pinnedShare = null;
    if (m.share.participantId === room.me.id) app.wanted.share = false;
    notify({ kind: "share-stopped", text, reason: m.reason });
  });
  on("share_lock_changed", (m) =>
    notify({ text: `${who(m.by).Name} ${m.locked ? "locked" : "unlocked"} screen sharing.`, reason: m.locked ? "lock" : "unlock" }),
  );
  on("share_policy_changed", (m) => {
    fillPolicyForm(true);
    notify({ text: `${who(m.by).Name} changed the share policy (${describePolicy(m.sharePolicy)}).` });
  });
  on("share_requested", (m) => {
    if (m.request.participantId === room.me.id) {
      notify({ text: "Your request to share was sent to the hosts." });
      return;
    }
    const id = m.request.id;
    const answer = (grant) =>
      act(`req-${id}`, "Could not answer the request", () => room.answerShareRequest(id, grant));
    notify({
      text: `${who(m.request.participantId).Name} asks to share the screen.`,
      reason: "share_requested",
      key: `request-${id}`,
      ttl: 0,
      actions: room.isModerator
        ? [
            { label: "Allow", testid: "notice-allow", className: "primary", onClick: () => answer(true) },
            { label: "Deny", testid: "notice-deny", onClick: () => answer(false) },
          ]
        : [],
    });
  });
  on("share_request_resolved", (m) => {
    dropNotice(`request-${m.request.id}`);
    if (m.request.participantId !== room.me.id) return;
    const text = {
      granted: `${who(m.by).Name} allowed you to share your screen.`,
      denied: `${who(m.by).Name} declined your request to share.`,
      expired: "Your request to share expired without an answer.",
      cancelled: "Your request to share was cancelled.",
    }[m.outcome];
    notify({ text, reason: `request_${m.outcome}` });
  });
  on("permissions_changed", (m) => {
    if (m.participantId !== room.me.id) return;
    const can = m.permissions.sources.includes("screen_share");
    notify({ text: can ? "You may share your screen now." : "Your permission to share the screen was revoked." });
  });
  on("active_speakers", (m) => {
    app.speakers = new Map(m.speakers.map((s, i) => [s.participantId, { level: s.level, rank: i }]));
    render();
  });
  on("media_state", (m) => {
    if (m.state === "failed") notify({ kind: "error", text: `The ${m.target} media connection failed.`, code: "media_failed" });
    if (m.state === "disconnected") notify({ text: `The ${m.target} media connection is interrupted…` });
  });
  on("error", (e) => notifyError("Server", e));
  on("left", (m) => {
    const text = {
      removed: "A host removed you from the room.",
      replaced: "You joined this room from another window or device.",
      room_ended: "The room has ended.",
    }[m.reason];
    sessionStorage.removeItem("atrium.session");
    notify({ kind: m.reason === "room_ended" ? "info" : "error", text: text || `You left the room (${m.reason}).`, reason: m.reason, ttl: 0 });
  });
  on("reconnecting", () => setConnection("reconnecting"));
  on("reconnected", () => {
    setConnection("connected");
    app.viewports.clear(); // sent again: the server may have lost them with the session's media state
    for (const tile of app.tiles.values()) scheduleViewport(tile);
    clearNotices((n) => n.dataset.kind === "error" && n.dataset.code === "media_failed");
    notify({ text: "Reconnected.", reason: "reconnected" });
    render();
  });
  on("disconnected", (d) => {
    setConnection("disconnected");
    const final = room.closedByUser || [4100, 4101, 4102, 4103].includes(d.code);
    const want = { ...app.wanted, share: app.wanted.share || !!room.myShare };
    exitRoom();
    if (!final) startRejoin(want, d.reason || "disconnected");
  });
  rememberNames();
  setConnection("connected");
  setPhase("meeting");
  fillPolicyForm(true);
  render();
}

/**
 * The session is gone (the server restarted: `resume_failed`; or it stayed down past the resume
 * window): the page joins again by itself, every 2 s for a minute, with the camera and microphone
 * that were on, and offers a Rejoin button meanwhile.
 */
function startRejoin(want, reason) {
  const attempt = { want, tries: 0, timer: 0, reason };
  app.rejoin = attempt;
  clearNotices((n) => n.dataset.kind !== "error");
  notify({ kind: "error", text: "The connection to the room was lost. Rejoining…", code: reason, reason: "connection_lost", ttl: 0 });
  $("rejoin-panel").hidden = false;
  $("rejoin-status").textContent = "Rejoining the room…";
  const tick = async () => {
    if (app.rejoin !== attempt || app.room) return;
    attempt.tries++;
    const ok = await join(null, attempt.want);
    if (ok || app.rejoin !== attempt) return;
    if (attempt.tries >= 30) {
      $("rejoin-status").textContent = "Could not rejoin by itself.";
      return;
    }
    $("rejoin-status").textContent = `Rejoining the room… (attempt ${attempt.tries + 1})`;
    attempt.timer = setTimeout(tick, 2000);
  };
  attempt.timer = setTimeout(tick, 500);
}

function rejoinNow() {
  const attempt = app.rejoin;
  if (attempt) clearTimeout(attempt.timer);
  const want = attempt?.want ?? { camera: preview.camera, mic: preview.mic, share: false };
  join(null, want);
}

function exitRoom() {
  for (const id of [...app.audio.keys()]) stopAudio(id);
  app.room = null;
  setPhase("join");
  for (const t of app.tiles.values()) t.remove();
  app.tiles.clear();
  const stage = /** @type {HTMLVideoElement} */ ($("stage-video"));
  stage.srcObject = null;
  if (document.fullscreenElement) document.exitFullscreen().catch(() => {});
}

async function leave() {
  const room = app.room;
  if (!room) return;
  room.closedByUser = true;
  sessionStorage.removeItem("atrium.session");
  exitRoom();
  setConnection("disconnected");
  await room.leave();
  notify({ text: "You left the room.", reason: "left" });
  startPreview();
}


// ------------------------------------------------------------------ media elements

function playAudio(/** @type {RemoteTrack} */ t) {
  if (app.audio.has(t.trackId)) return;
  const a = /** @type {HTMLAudioElement} */ (el("audio", { autoplay: true, "data-track-id": t.trackId }));
  a.srcObject = new MediaStream([t.track]);
  $("audio-sink").append(a);
  app.audio.set(t.trackId, a);
  a.play().catch(() => offerAudioUnlock());
}

function stopAudio(trackId) {
  const a = app.audio.get(trackId);
  if (!a) return;
  a.srcObject = null;
  a.remove();
  app.audio.delete(trackId);
}

let unlockShown = false;
/** Browsers may block sound until the person interacts with the page. */
function offerAudioUnlock() {
  if (unlockShown) return;
  unlockShown = true;
  const n = notify({ text: "Your browser blocked the sound.", ttl: 0 });
  const b = el("button", { type: "button", "data-testid": "enable-audio", text: "Enable sound" });
  b.addEventListener("click", () => {
    for (const a of app.audio.values()) a.play().catch(() => {});
    n.remove();
    unlockShown = false;
  });
  n.insertBefore(b, n.lastElementChild);
}

/** Points a video element at a track, keeping it when it is already the one shown. */
function showTrack(video, track) {
  const current = video.srcObject instanceof MediaStream ? video.srcObject.getVideoTracks()[0] : null;
  if (track && current !== track) {
    video.srcObject = new MediaStream([track]);
  } else if (!track && video.srcObject) {
    video.srcObject = null;
  }
  if (track && video.paused) video.play().catch(() => {});
}

// ------------------------------------------------------------------ rendering

let renderQueued = false;
/** Renders soon, once for a burst of events. */
function render() {
  if (renderQueued) return;
  renderQueued = true;
  setTimeout(() => {
    renderQueued = false;
    if (app.room && app.phase === "meeting") renderMeeting();
  }, 0);
}

function policy() {
  return app.room?.roomInfo?.sharePolicy ?? {};
}

/** Whether the policy lets this participant share (docs/protocol.md section 8, "Permission"). */
function permittedToShare(me) {
  const p = policy();
  if (!me || me.role === "viewer" || !me.permissions.sources.includes("screen_share")) return false;
  return (
    me.permissions.shareGranted ||
    me.role === "host" ||
    (me.role === "cohost" && p.whoCanShare !== "host") ||
    (me.role === "participant" && p.whoCanShare === "anyone" && !p.shareRequestRequired)
  );
}

function describePolicy(p) {
  const mode = p.shareMode === "multi" ? `multi, up to ${p.maxConcurrentShares}` : p.shareMode;
  const whoCan = { anyone: "anyone", cohost: "hosts and cohosts", host: "hosts" }[p.whoCanShare];
  return `${mode}; ${whoCan} can share${p.shareRequestRequired ? "; participants ask first" : ""}`;
}

function renderMeeting() {
  const room = app.room;
  const me = room.me;
  const isMod = room.isModerator;
  const pol = policy();

  $("room-name").textContent = room.roomInfo?.name || room.roomInfo?.id || "";
  $("me-label").textContent = `${me.name || me.identity} · ${me.role}`;
  $("me-label").dataset.role = me.role;
  $("lock-badge").hidden = !pol.shareLocked;
  $("copy-invite").hidden = !app.devMode;
  const layout = $("layout-toggle");
  labelled(layout, app.layout === "grid" ? "speaker" : "grid", app.layout === "grid" ? "Speaker view" : "Grid view");
  layout.dataset.layout = app.layout;
  layout.setAttribute("aria-label", app.layout === "grid" ? "Switch to the speaker view" : "Switch to the grid view");

  renderStage(room);
  renderTiles(room);
  renderControls(room, pol);
  renderPeople(room, isMod);
  renderHostPanel(room, isMod, pol);
}

/** The video track of a share: ours (local preview) or the received one. */
function shareTrack(room, share) {
  if (share.participantId === room.me.id) {
    return room.localTrack("screen_share")?.track ?? null;
  }
  return room.remoteTracks.find((t) => t.trackId === share.trackId)?.track ?? null;
}

function renderStage(room) {
  const shares = [...room.shares.values()];
  const stage = $("stage");
  const video = /** @type {HTMLVideoElement} */ ($("stage-video"));
  $("main-area").classList.toggle("has-share", shares.length > 0);
  const full = document.fullscreenElement === stage;
  const fsBtn = $("stage-fullscreen");
  labelled(fsBtn, "fullscreen", full ? "Exit full screen" : "Full screen");
  fsBtn.setAttribute("aria-pressed", String(full));
  fsBtn.hidden = !document.fullscreenEnabled;
  if (!shares.length) {
    stage.hidden = true;
    delete stage.dataset.shareId;
    showTrack(video, null);
    if (full) document.exitFullscreen().catch(() => {});
    return;
  }
  const current = shares.find((s) => s.id === app.pinnedShare) ?? shares[shares.length - 1];
  stage.hidden = false;
  stage.dataset.shareId = current.id;
  stage.dataset.participantId = current.participantId;
  stage.dataset.state = current.state;
  const track = shareTrack(room, current);
  showTrack(video, track);
  $("stage-waiting").hidden = !!track || current.state === "paused";
  $("stage-paused").hidden = current.state !== "paused";
  const w = who(current.participantId);
  $("stage-label").textContent =
    current.participantId === room.me.id
      ? `You are sharing your screen${current.state === "paused" ? " (paused)" : ""}`
      : `${w.Name} is sharing${current.state === "paused" ? " (paused)" : ""}`;

  const picker = $("share-picker");
  picker.hidden = shares.length < 2;
  fill(
    picker,
    ...(shares.length < 2 ? [] : shares).map((s) => {
      const b = el("button", {
        type: "button",
        "data-testid": "share-pick",
        "data-share-id": s.id,
        "aria-pressed": String(s.id === current.id),
        text: s.participantId === room.me.id ? "Your share" : `${who(s.participantId).Name_s} share`,
      });
      b.addEventListener("click", () => {
        app.pinnedShare = s.id;
        render();
      });
      return b;
    }),
  );
}

function renderTiles(room) {
  const grid = $("grid");
  const people = [room.me, ...room.participants.values()].filter((p) => p.role !== "viewer" || p.id === room.me.id);
  const seen = new Set();
  let index = 0;
  for (const p of people) {
    seen.add(p.id);
    let tile = app.tiles.get(p.id);
    if (!tile) {
      const video = el("video", { autoplay: true, playsinline: true, muted: true });
      /** @type {HTMLVideoElement} */ (video).muted = true;
      const pid = p.id;
      const pin = el("button", { type: "button", class: "pin", "data-testid": "tile-pin" });
      pin.addEventListener("click", () => {
        // Pinning features the tile in the speaker view; unpinning goes back to the active speaker.
        app.pinnedParticipant = app.pinnedParticipant === pid ? null : pid;
        if (app.pinnedParticipant) app.layout = "speaker";
        render();
      });
      tile = el(
        "figure",
        { class: "tile", "data-testid": "tile", "data-participant-id": p.id },
        video,
        el("div", { class: "avatar", "aria-hidden": "true" }),
        el("div", { class: "tile-tools" }, pin, el("span", { class: "net", "data-testid": "net-quality", hidden: true })),
        qualityMenu(p.id),
        el("figcaption", {}),
      );
      app.tiles.set(p.id, tile);
      observeTile(tile);
    }
    if (grid.children[index] !== tile) grid.insertBefore(tile, grid.children[index] ?? null);
    index++;

    const self = p.id === room.me.id;
    // The camera, unless it is turned off (muted: nothing arrives, the picture would freeze).
    const local = self ? room.localTrack("camera") : null;
    const remoteCamera = self ? null : room.remoteTracks.find((t) => t.participantId === p.id && t.source === "camera");
    const camera = self
      ? local && !local.muted ? local.track : null
      : p.tracks.find((t) => t.source === "camera")?.muted
        ? null
        : remoteCamera?.track;
    // The received camera's track id: its viewport and quality menu follow it.
    const remoteId = remoteCamera?.trackId ?? "";
    if ((tile.dataset.trackId ?? "") !== remoteId) {
      tile.dataset.trackId = remoteId;
      if (remoteId) scheduleViewport(tile, 0);
    }
    const menu = /** @type {HTMLSelectElement} */ (tile.querySelector(".quality"));
    menu.hidden = !remoteId || !camera;
    if (remoteId) {
      menu.value = app.qualities.get(remoteId) ?? "high";
      menu.disabled = app.busy.has(`quality-${p.id}`);
    }
    const video = /** @type {HTMLVideoElement} */ (tile.querySelector("video"));
    showTrack(video, camera ?? null);
    video.hidden = !camera;
    const avatar = /** @type {HTMLElement} */ (tile.querySelector(".avatar"));
    avatar.hidden = !!camera;
    avatar.textContent = (p.name || p.identity || "?").trim().charAt(0).toUpperCase();

    const mic = p.tracks.find((t) => t.source === "microphone");
    const speaking = app.speakers.get(p.id);
    tile.dataset.name = p.name || p.identity;
    tile.dataset.self = String(self);
    tile.dataset.hasVideo = String(!!camera);
    tile.dataset.speaking = String(!!speaking);
    tile.dataset.activeSpeaker = String(speaking?.rank === 0);
    tile.setAttribute(
      "aria-label",
      `${p.name || p.identity}${self ? " (you)" : ""}${speaking?.rank === 0 ? ", speaking" : ""}`,
    );
    const pinned = app.pinnedParticipant === p.id;
    const pin = /** @type {HTMLElement} */ (tile.querySelector(".pin"));
    labelled(pin, "pin", pinned ? "Unpin" : "Pin");
    pin.setAttribute("aria-pressed", String(pinned));
    pin.setAttribute("aria-label", `${pinned ? "Unpin" : "Pin"} ${p.name || p.identity}`);
    tile.dataset.pinned = String(pinned);
    const q = app.quality.get(p.id);
    const net = /** @type {HTMLElement} */ (tile.querySelector(".net"));
    net.hidden = !q;
    if (q && net.dataset.quality !== `${q.quality}|${q.rttMs}|${q.loss}`) {
      net.dataset.quality = q.quality;
      const words = `Network ${q.quality}${q.rttMs !== undefined ? `, ${q.rttMs} ms round trip` : ""}${q.loss !== undefined ? `, ${Math.round(q.loss * 100)} % loss` : ""}`;
      net.title = words;
      net.setAttribute("aria-label", words);
      net.setAttribute("role", "img");
      fill(net, bars(q.quality), el("span", { class: "label" }, q.quality));
    }
    const isSharing = [...room.shares.values()].some((s) => s.participantId === p.id);
    tile.dataset.sharing = String(isSharing);
    const caption = tile.querySelector("figcaption");
    fill(caption, 
      el("span", { class: "name", "data-testid": "tile-name" }, `${p.name || p.identity}${self ? " (you)" : ""}`),
      p.role === "host" || p.role === "cohost" ? el("span", { class: "tag" }, p.role) : null,
      !mic ? el("span", { class: "tag", title: "No microphone" }, "no mic") : null,
      mic?.muted ? el("span", { class: "tag muted-mic", title: "Microphone muted" }, "muted") : null,
      speaking?.rank === 0 ? el("span", { class: "tag speaking", "data-testid": "speaking" }, "speaking") : null,
      isSharing ? el("span", { class: "tag sharing", "data-testid": "sharing-badge" }, icon("screen"), "sharing") : null,
    );
  }
  for (const [id, tile] of app.tiles) {
    if (!seen.has(id)) {
      app.resizer?.unobserve(tile);
      tile.remove();
      app.tiles.delete(id);
    }
  }
  // Speaker view features the pinned participant, else the active speaker, else someone else.
  const speaker = [...app.speakers.entries()].find(([, v]) => v.rank === 0)?.[0];
  const featured =
    app.pinnedParticipant ?? (speaker && app.tiles.has(speaker) ? speaker : people.find((p) => p.id !== room.me.id)?.id);
  layoutTiles(grid, [...grid.children].filter((c) => c.classList.contains("tile")), app.layout, featured);
}

/** A remote camera tile's quality menu: the highest layer it receives (`setQuality`). */
function qualityMenu(participantId) {
  const menu = /** @type {HTMLSelectElement} */ (
    el(
      "select",
      { class: "quality", "data-testid": "quality-select", "aria-label": "Video quality", hidden: true },
      el("option", { value: "high", text: "High" }),
      el("option", { value: "medium", text: "Medium" }),
      el("option", { value: "low", text: "Low" }),
    )
  );
  menu.addEventListener("change", () => {
    const room = app.room;
    const trackId = menu.closest(".tile")?.dataset.trackId;
    if (!room || !trackId) return;
    const quality = menu.value;
    const previous = app.qualities.get(trackId) ?? "high";
    app.qualities.set(trackId, quality); // shown while the request runs
    act(`quality-${participantId}`, "Could not change the video quality", async () => {
      try {
        await room.setQuality(trackId, quality);
      } catch (e) {
        app.qualities.set(trackId, previous);
        throw e;
      }
    });
  });
  return menu;
}

/** Watches a tile's size: when it changes, its camera's viewport is sent again (debounced). */
function observeTile(tile) {
  if (!("ResizeObserver" in window)) return;
  app.resizer ??= new ResizeObserver((entries) => {
    for (const entry of entries) scheduleViewport(/** @type {HTMLElement} */ (entry.target));
  });
  // Its size in device pixels also changes with devicePixelRatio (zoom, another screen): observed
  // where the browser can (Chromium, Firefox); watchPixelRatio covers the others.
  try {
    app.resizer.observe(tile, { box: "device-pixel-content-box" });
  } catch {
    app.resizer.observe(tile);
  }
}

const VIEWPORT_DEBOUNCE_MS = 300;

/**
 * A change of devicePixelRatio (zoom, a window moved to another screen) changes the tiles' sizes in
 * device pixels without resizing them: every tile's viewport is sent again. A resolution query
 * matches one ratio only, so it is made again for the new one after each change.
 */
function watchPixelRatio() {
  if (!window.matchMedia) return;
  const query = matchMedia(`(resolution: ${window.devicePixelRatio || 1}dppx)`);
  query.addEventListener(
    "change",
    () => {
      for (const tile of app.tiles.values()) scheduleViewport(tile);
      watchPixelRatio();
    },
    { once: true },
  );
}

/**
 * Sends the size a tile shows its remote camera at, in device pixels, once its size has settled: the
 * server then sends the smallest layer that covers it (the video fills the tile, object-fit cover).
 * Failures stay quiet: the picture keeps coming, only perhaps larger than needed.
 */
function scheduleViewport(tile, delay = VIEWPORT_DEBOUNCE_MS) {
  clearTimeout(tile.viewportTimer);
  tile.viewportTimer = setTimeout(() => {
    const room = app.room;
    const trackId = tile.dataset.trackId;
    if (!room || !trackId || !tile.isConnected) return;
    const rect = tile.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    const width = Math.round(rect.width * dpr);
    const height = Math.round(rect.height * dpr);
    const last = app.viewports.get(trackId);
    if (last && last.width === width && last.height === height) return;
    /** result: the server's answer (null from a server without `set_viewport`); done once it came */
    const entry = { width, height, at: Date.now(), result: null, done: false };
    app.viewports.set(trackId, entry);
    room.setViewport(trackId, width, height).then(
      (result) => Object.assign(entry, { result, done: true }),
      (e) => {
        Object.assign(entry, { result: { error: e?.code ?? String(e) }, done: true });
        console.warn("set_viewport", e);
      },
    );
  }, delay);
}

/**
 * Whether this participant may start a share now, and why not (docs/protocol.md section 8): checked
 * before the browser's picker opens. "ask": the policy wants a request first.
 * @returns {{state: "ok"|"ask"|"blocked", reason: string}}
 */
function shareAvailability(room, pol) {
  const me = room.me;
  if (room.myShare) return { state: "ok", reason: "" };
  if (!me.permissions.sources.includes("screen_share")) {
    return { state: "blocked", reason: "Your access does not include screen sharing." };
  }
  if (pol.shareLocked && !room.isModerator) return { state: "blocked", reason: "A host has locked screen sharing." };
  if (!permittedToShare(me)) return { state: "ask", reason: "Ask a host to share your screen." };
  const others = [...room.shares.values()].filter((s) => s.participantId !== me.id);
  if (pol.shareMode === "single" && others.length > 0) {
    return { state: "blocked", reason: `${who(others[0].participantId).Name} is sharing; this room allows one share at a time.` };
  }
  if (pol.shareMode === "multi" && others.length >= (pol.maxConcurrentShares ?? 1)) {
    return { state: "blocked", reason: `The room's maximum of ${pol.maxConcurrentShares} shares is reached.` };
  }
  return { state: "ok", reason: "" };
}

function renderControls(room, pol) {
  const me = room.me;
  const viewer = me.role === "viewer" || me.permissions.sources.length === 0;

  // Each button shows an icon and its state in words; pressed (highlighted) means "on".
  const mic = room.localTrack("microphone");
  const micLive = !!mic && !mic.muted;
  const micBtn = $("mic-toggle");
  micBtn.setAttribute("aria-pressed", String(micLive));
  labelled(micBtn, "mic", micLive ? "Mic on" : "Mic off", { off: !micLive });
  micBtn.setAttribute("aria-label", micLive ? "Microphone on: mute it (M)" : "Microphone off: turn it on (M)");
  micBtn.title = micLive ? "Mute (M)" : "Unmute (M)";
  micBtn.dataset.state = micLive ? "on" : mic ? "muted" : "off";
  micBtn.disabled = app.busy.has("mic") || !me.permissions.sources.includes("microphone");
  micBtn.hidden = viewer;

  const cam = room.localTrack("camera");
  const camOn = !!cam && !cam.muted;
  const camBtn = $("camera-toggle");
  camBtn.setAttribute("aria-pressed", String(camOn));
  labelled(camBtn, "camera", camOn ? "Camera on" : "Camera off", { off: !camOn });
  camBtn.setAttribute("aria-label", camOn ? "Camera on: turn it off (V)" : "Camera off: turn it on (V)");
  camBtn.title = camOn ? "Turn the camera off (V)" : "Turn the camera on (V)";
  camBtn.dataset.state = camOn ? "on" : "off";
  camBtn.disabled = app.busy.has("camera") || !me.permissions.sources.includes("camera");
  camBtn.hidden = viewer;

  const mine = room.myShare;
  const myShare = mine ? room.shares.get(mine.shareId) : null;
  const can = shareAvailability(room, pol);
  const pending = [...room.requests.values()].some((r) => r.participantId === me.id);
  const shareBtn = $("share-toggle");
  shareBtn.setAttribute("aria-pressed", String(!!mine));
  labelled(shareBtn, "screen", mine ? "Stop sharing" : "Share screen");
  shareBtn.setAttribute("aria-label", mine ? "Stop sharing your screen" : "Share your screen");
  shareBtn.dataset.state = mine ? "on" : "off";
  shareBtn.dataset.availability = can.state;
  shareBtn.title = can.reason;
  shareBtn.disabled = app.busy.has("share") || can.state === "blocked";
  shareBtn.hidden = me.role === "viewer" || (can.state === "ask" && !mine);
  const reason = $("share-reason");
  reason.textContent = can.state === "blocked" ? can.reason : "";
  reason.hidden = can.state !== "blocked" || me.role === "viewer";
  if (can.state === "blocked") shareBtn.setAttribute("aria-describedby", "share-reason");
  else shareBtn.removeAttribute("aria-describedby");

  const pauseBtn = $("share-pause");
  pauseBtn.hidden = !mine;
  const paused = myShare?.state === "paused";
  labelled(pauseBtn, paused ? "play" : "pause", paused ? "Resume share" : "Pause share");
  pauseBtn.setAttribute("aria-label", paused ? "Resume your screen share" : "Pause your screen share");
  pauseBtn.dataset.state = paused ? "paused" : "running";
  pauseBtn.disabled = app.busy.has("pause");

  const reqBtn = $("request-share");
  reqBtn.hidden = me.role === "viewer" || !!mine || !(can.state === "ask" || pending);
  reqBtn.disabled = pending || app.busy.has("request");
  labelled(reqBtn, "hand", pending ? "Request pending…" : "Ask to share");

  labelled($("leave"), "leave", "Leave");
}

/** A participant's microphone and camera: "on", "off" (muted or turned off) or "none" (not published). */
function mediaState(room, p, source) {
  if (p.id === room.me.id) {
    const t = room.localTrack(source);
    return !t ? "none" : t.muted ? "off" : "on";
  }
  const t = p.tracks.find((x) => x.source === source);
  return !t ? "none" : t.muted ? "off" : "on";
}

function renderPeople(room, isMod) {
  const everyone = [room.me, ...room.participants.values()];
  $("people-count").textContent = `(${everyone.length})`;
  const sharing = new Set([...room.shares.values()].map((s) => s.participantId));
  fill(
    $("people"),
    ...everyone.map((p) => {
      const self = p.id === room.me.id;
      const canShare = p.permissions.sources.includes("screen_share");
      const name = p.name || p.identity;
      const mic = mediaState(room, p, "microphone");
      const cam = mediaState(room, p, "camera");
      const status = (kind, state, words) =>
        el(
          "span",
          { class: `state state-${state}`, "data-testid": `person-${kind}`, "data-state": state, title: words },
          icon(kind === "mic" ? "mic" : "camera", { off: state !== "on" }),
          el("span", { class: "sr-only" }, words),
        );
      const li = el(
        "li",
        { "data-testid": "person", "data-participant-id": p.id },
        el("span", { class: "who" }, `${name}${self ? " (you)" : ""}`),
        el("span", { class: "tag" }, p.role),
        sharing.has(p.id) ? el("span", { class: "tag sharing", "data-testid": "person-sharing" }, "sharing") : null,
        status("mic", mic, mic === "on" ? "Microphone on" : mic === "off" ? "Microphone muted" : "No microphone"),
        status("camera", cam, cam === "on" ? "Camera on" : cam === "off" ? "Camera off" : "No camera"),
      );
      if (isMod && !self) {
        const actions = el("span", { class: "person-actions" });
        // Moderators grant or revoke screen sharing (not for hosts or viewers).
        if (p.role !== "host" && p.role !== "viewer") {
          const b = el("button", {
            type: "button",
            "data-testid": "perm-toggle",
            "aria-label": `${canShare ? "Revoke" : "Allow"} screen sharing for ${name}`,
            text: canShare ? "Revoke share" : "Allow share",
          });
          b.addEventListener("click", () =>
            act(`perm-${p.id}`, canShare ? "Could not revoke sharing" : "Could not allow sharing", () =>
              room.setPermission(p.id, !canShare),
            ),
          );
          actions.append(b);
        }
        const micTrack = p.tracks.find((t) => t.source === "microphone" && !t.muted);
        if (micTrack) {
          const m = el("button", { type: "button", "data-testid": "person-mute", "aria-label": `Mute ${name}` });
          labelled(m, "mic", "Mute", { off: true });
          m.disabled = app.busy.has(`mute-${p.id}`);
          m.addEventListener("click", () =>
            act(`mute-${p.id}`, `Could not mute ${name}`, () => room.muteParticipant(micTrack.id)),
          );
          actions.append(m);
        }
        // Cohosts may remove anyone but a host (docs/protocol.md, remove_participant).
        if (room.me.role === "host" || p.role !== "host") {
          const r = el("button", {
            type: "button",
            class: "danger",
            "data-testid": "person-remove",
            "aria-label": `Remove ${name} from the room`,
          });
          labelled(r, "remove", "Remove");
          r.disabled = app.busy.has(`remove-${p.id}`);
          r.addEventListener("click", () =>
            act(`remove-${p.id}`, `Could not remove ${name}`, () => room.removeParticipant(p.id)),
          );
          actions.append(r);
        }
        li.append(actions);
      }
      return li;
    }),
  );
}

/** Fills the policy form from the room's policy (force: also when the person is editing it). */
function fillPolicyForm(force) {
  const p = policy();
  const form = $("policy-form");
  if (!force && form.dataset.dirty === "true") return;
  /** @type {HTMLSelectElement} */ ($("policy-mode")).value = p.shareMode ?? "single";
  /** @type {HTMLInputElement} */ ($("policy-max")).value = String(p.maxConcurrentShares ?? 1);
  /** @type {HTMLSelectElement} */ ($("policy-who")).value = p.whoCanShare ?? "anyone";
  /** @type {HTMLInputElement} */ ($("policy-request")).checked = !!p.shareRequestRequired;
  form.dataset.dirty = "false";
}

function renderHostPanel(room, isMod, pol) {
  const panel = $("host-panel");
  panel.hidden = !isMod;
  if (!isMod) return;
  const host = room.me.role === "host";
  $("host-only-note").hidden = host;
  const lock = /** @type {HTMLInputElement} */ ($("lock-toggle"));
  lock.checked = !!pol.shareLocked;
  lock.disabled = !host || app.busy.has("lock");
  for (const id of ["policy-mode", "policy-max", "policy-who", "policy-request", "policy-apply"]) {
    /** @type {HTMLInputElement} */ ($(id)).disabled = !host || app.busy.has("policy");
  }
  fillPolicyForm(false);

  const requests = [...room.requests.values()].filter((r) => r.participantId !== room.me.id);
  $("request-empty").hidden = requests.length > 0;
  fill($("request-list"), 
    ...requests.map((r) => {
      const name = who(r.participantId).Name;
      const grant = el("button", { type: "button", "data-testid": "request-grant", "data-request-id": r.id, "data-participant-id": r.participantId, "aria-label": `Allow ${name} to share`, text: "Allow" });
      const deny = el("button", { type: "button", "data-testid": "request-deny", "data-request-id": r.id, "data-participant-id": r.participantId, "aria-label": `Decline ${name}'s request`, text: "Decline" });
      grant.addEventListener("click", () => act(`req-${r.id}`, "Could not answer the request", () => room.answerShareRequest(r.id, true)));
      deny.addEventListener("click", () => act(`req-${r.id}`, "Could not answer the request", () => room.answerShareRequest(r.id, false)));
      return el(
        "li",
        { "data-testid": "share-request", "data-request-id": r.id, "data-participant-id": r.participantId },
        el("span", { class: "who" }, `${name} asks to share`),
        grant,
        deny,
      );
    }),
  );

  const shares = [...room.shares.values()];
  $("host-shares-empty").hidden = shares.length > 0;
  fill($("host-shares"), 
    ...shares.map((s) => {
      const w = who(s.participantId);
      const stop = el("button", {
        type: "button",
        class: "danger",
        "data-testid": "host-share-stop",
        "data-share-id": s.id,
        "data-participant-id": s.participantId,
        "aria-label": `Stop ${w.name_s} share`,
        text: "Stop",
      });
      stop.disabled = app.busy.has(`stop-${s.id}`);
      stop.addEventListener("click", () => act(`stop-${s.id}`, "Could not stop the share", () => room.stopShare(s.id)));
      return el(
        "li",
        { "data-testid": "host-share", "data-share-id": s.id, "data-participant-id": s.participantId },
        el("span", { class: "who" }, `${w.Name_s} share${s.state === "paused" ? " (paused)" : ""}`),
        stop,
      );
    }),
  );
}

// ------------------------------------------------------------------ controls

function wireControls() {
  $("join-form").addEventListener("submit", join);

  $("mic-toggle").addEventListener("click", () =>
    act("mic", "Could not change the microphone", async () => {
      const room = app.room;
      const mic = room.localTrack("microphone");
      const on = !mic || !!mic.muted;
      await room.setMicrophoneEnabled(on, micConstraints());
      app.wanted.mic = on;
      saveSession();
    }),
  );

  $("camera-toggle").addEventListener("click", () =>
    act("camera", "Could not change the camera", async () => {
      const room = app.room;
      const cam = room.localTrack("camera");
      const on = !cam || !!cam.muted;
      await room.setCameraEnabled(on, cameraConstraints());
      app.wanted.camera = on;
      saveSession();
    }),
  );

  $("share-toggle").addEventListener("click", () =>
    act("share", app.room?.myShare ? "Could not stop sharing" : "Could not start sharing", async () => {
      const room = app.room;
      if (room.myShare) {
        await room.stopScreenShare("user_stopped");
        app.wanted.share = false;
        return;
      }
      // Checked before the browser's picker opens: a share the server would refuse is not offered.
      const can = shareAvailability(room, policy());
      if (can.state !== "ok") throw new AtriumError(can.state === "ask" ? "not_allowed" : "share_locked", can.reason);
      dropNotice("share_lost");
      clearNotices((n) => n.dataset.reason === "share_lost");
      // Share audio only when the token allows it (else the server refuses it: not_allowed).
      const audio = room.me.permissions.sources.includes("screen_share_audio");
      const share = await room.startScreenShare({ audio });
      app.pinnedShare = null; // the stage shows the newest share: this one
      app.wanted.share = true;
      return share;
    }),
  );

  $("stage-fullscreen").addEventListener("click", () => {
    const stage = $("stage");
    const done = () => render();
    if (document.fullscreenElement === stage) document.exitFullscreen().then(done, done);
    else stage.requestFullscreen().then(done, (e) => notifyError("Could not go full screen", e));
  });
  document.addEventListener("fullscreenchange", () => render());

  $("layout-toggle").addEventListener("click", () => {
    app.layout = app.layout === "grid" ? "speaker" : "grid";
    if (app.layout === "grid") app.pinnedParticipant = null;
    render();
  });
  window.addEventListener("resize", () => render());

  labelled($("copy-invite"), "link", "Copy invite link");
  $("copy-invite").addEventListener("click", () => copyInvite());
  $("rejoin").addEventListener("click", () => rejoinNow());
  $("join-room").addEventListener("input", () => checkRoomField());

  // Keyboard shortcuts: M for the microphone, V for the camera (not while typing in a field).
  document.addEventListener("keydown", (e) => {
    if (app.phase !== "meeting" || e.ctrlKey || e.metaKey || e.altKey || e.repeat) return;
    const t = /** @type {HTMLElement} */ (e.target);
    if (t && (t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName))) return;
    const button = { m: "mic-toggle", v: "camera-toggle" }[e.key.toLowerCase()];
    if (!button) return;
    const b = /** @type {HTMLButtonElement} */ ($(button));
    if (b.hidden || b.disabled) return;
    e.preventDefault();
    b.click();
  });

  $("share-pause").addEventListener("click", () =>
    act("pause", "Could not pause or resume the share", async () => {
      const room = app.room;
      const mine = room.myShare;
      if (!mine) return;
      if (room.shares.get(mine.shareId)?.state === "paused") await room.resumeScreenShare();
      else await room.pauseScreenShare();
    }),
  );

  $("request-share").addEventListener("click", () =>
    act("request", "Could not ask to share", () => app.room.requestShare()),
  );

  $("leave").addEventListener("click", () => leave());

  $("lock-toggle").addEventListener("change", (e) => {
    const locked = /** @type {HTMLInputElement} */ (e.target).checked;
    act("lock", locked ? "Could not lock sharing" : "Could not unlock sharing", () => app.room.setShareLock(locked));
  });

  const form = $("policy-form");
  form.addEventListener("input", () => (form.dataset.dirty = "true"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const next = {
      shareMode: /** @type {HTMLSelectElement} */ ($("policy-mode")).value,
      maxConcurrentShares: Number(/** @type {HTMLInputElement} */ ($("policy-max")).value) || 1,
      whoCanShare: /** @type {HTMLSelectElement} */ ($("policy-who")).value,
      shareRequestRequired: /** @type {HTMLInputElement} */ ($("policy-request")).checked,
    };
    act("policy", "Could not change the share policy", async () => {
      const result = await app.room.setSharePolicy(next);
      if (app.room?.roomInfo && result?.sharePolicy) app.room.roomInfo.sharePolicy = result.sharePolicy;
      fillPolicyForm(true);
    });
  });

  window.addEventListener("pagehide", () => {
    if (app.room) {
      app.room.closedByUser = true;
      app.room.leave();
    }
  });
}

// ------------------------------------------------------------------ start

async function start() {
  wireControls();
  watchPixelRatio();
  $("join-room").value = params.get("room") || "";
  $("join-name").value = params.get("name") || localStorage.getItem("atrium.name") || "";
  $("join-name").addEventListener("change", (e) => localStorage.setItem("atrium.name", e.target.value.trim()));
  const role = params.get("role");
  if (role) /** @type {HTMLSelectElement} */ ($("join-role")).value = role;
  const urlToken = params.get("token");
  if (urlToken) {
    /** @type {HTMLTextAreaElement} */ ($("join-token")).value = urlToken;
    const claims = decodeToken(urlToken);
    if (claims?.grants?.room && !$("join-room").value) /** @type {HTMLInputElement} */ ($("join-room")).value = claims.grants.room;
  }

  app.devMode = await detectDevMode();
  document.body.dataset.dev = String(app.devMode);
  $("join-dev-fields").hidden = !app.devMode || !!urlToken;
  $("join-token-fields").hidden = app.devMode && !urlToken;
  $("join-mode").textContent = app.devMode
    ? "Development mode: this server issues a token for the room and name you enter."
    : "Paste the access token your application issued for this room.";
  // Without dev mode the token names the room: only the name and the token are asked for.
  $("join-room-fields").hidden = !app.devMode || !!urlToken;
  wirePreview();
  setPhase("join");
  checkRoomField();
  // A reload of a page that was in this room rejoins it, with what was on.
  const session = savedSession();
  if (session && app.devMode && session.room === params.get("room")) {
    /** @type {HTMLSelectElement} */ ($("join-role")).value = session.role || "host";
    if (session.name) $("join-name").value = session.name;
    app.identity = session.identity || "";
    join(null, { camera: !!session.camera, mic: !!session.mic, share: false });
  } else if (params.get("autojoin") === "1") {
    join(null, { camera: params.get("camera") === "1", mic: params.get("mic") === "1", share: false });
  } else {
    startPreview();
  }
}

start();
