// Atrium meeting page: a join screen, the participant grid, the share stage, the controls and the
// host panel, on top of the JavaScript client (/sdk/atrium.js). No framework, no build step.
// This module joins, rejoins and wires the controls; the parts live beside it: state.js (the state
// and small helpers), prejoin.js (preview, device pickers), session.js (room names, the tab's
// session, the invite link), tiles.js and layout.js (the participant tiles and their layout),
// people.js (the People list, the host panel), notices.js, icons.js.
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
import { labelled } from "/app/icons.js";
import { preview, wirePreview, startPreview, stopPreview, cameraConstraints, micConstraints } from "/app/prejoin.js";
import {
  $, params, STOP_TEXT, ERROR_TEXT, app, el, fill, setPhase, setConnection, who, rememberNames, policy,
  permittedToShare, describePolicy,
} from "/app/state.js";
import {
  roomNameProblem, checkRoomField, savedSession, saveSession, rememberInURL, copyInvite,
} from "/app/session.js";
import { showTrack, renderTiles, watchPixelRatio, scheduleViewport } from "/app/tiles.js";
import { speakerViewBlocked } from "/app/layout.js";
import { renderPeople, fillPolicyForm, renderHostPanel } from "/app/people.js";
import { onData, renderChat, renderHands, renderPointers, wireData, resetData } from "/app/data.js";

/** @typedef {import("/sdk/atrium.js").RemoteTrack} RemoteTrack */

// ------------------------------------------------------------------ notices

/** A failure in words, with the protocol's code (or the browser's error name). */
function describeFailure(e) {
  const code = e instanceof AtriumError ? e.code : e?.code || e?.name || "error";
  const text = ERROR_TEXT[code] || (e instanceof AtriumError ? e.description : e?.message) || "Something went wrong.";
  return { code, text };
}

/** An error notice with the protocol's code. */
function notifyError(action, e) {
  const { code, text } = describeFailure(e);
  // Closing the browser's screen picker without choosing is not a failure.
  if (code === "capture_denied" && action.includes("sharing")) return;
  console.warn(action, e);
  notify({ kind: "error", text: `${action}: ${text}`, code });
}

/** Runs a control's action once at a time, with its failure shown as an error notice. */
export async function act(key, action, fn) {
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
  // A fetch that fails outright (the server is down) says so in words, not "Failed to fetch".
  const r = await fetch(`/dev/token?${q}`, { cache: "no-store" }).catch(() => {
    throw new AtriumError("unreachable", "the server cannot be reached");
  });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new AtriumError(body.error?.code || "connection_failed", body.error?.message || `HTTP ${r.status}`);
  return body.token;
}

function signalURL() {
  return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/v1/signal`;
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
    // The problem is said once, beside the field; the error above Join points to it.
    checkRoomField(true);
    showJoinError("Fix the room name to join.", "invalid_room_name");
    $("join-room").focus();
    return false;
  }
  setPhase("joining");
  $("join-submit").disabled = true;
  $("join-submit").textContent = "Joining…";
  // What to turn on once in: the pre-join choice, or what was on before a rejoin or reload.
  const want = restore ?? { camera: preview.camera, mic: preview.mic, share: false };
  // A rejoin keeps the preview until it is in: the join screen shows what it will turn on.
  if (!app.rejoin) stopPreview();
  try {
    const token = await obtainToken(room, name, role);
    // The passphrase of an encrypted meeting: typed, or from the link's fragment (never sent). Every
    // page rolls the key when someone leaves (docs/e2ee.md).
    const passphrase = $("join-passphrase").value || new URLSearchParams(location.hash.slice(1)).get("passphrase");
    const r = await Room.connect(signalURL(), token, {
      ...(name ? { name } : {}),
      ...(passphrase ? { e2ee: { passphrase, rotateOnLeave: true } } : {}),
    });
    stopPreview();
    enterRoom(r);
    rememberInURL();
    localStorage.setItem("atrium.name", name);
    await turnOn(r, want);
    saveSession();
    return true;
  } catch (e) {
    if (!app.room) {
      const failure = describeFailure(e);
      setPhase("join");
      // A rejoin says it in its status, with when it tries again.
      if (app.rejoin) app.rejoin.failure = failure;
      else {
        if (e.code === "e2ee_required") {
          $("join-passphrase-fields").hidden = false;
          $("join-passphrase").focus();
        }
        showJoinError(failure.text, failure.code);
        startPreview();
      }
    }
    return false;
  } finally {
    $("join-submit").disabled = false;
    $("join-submit").textContent = "Join";
  }
}

function showJoinError(text, code) {
  $("join-error").hidden = false;
  $("join-error").dataset.code = code;
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
  app.undecryptable.clear();
  // Notices of before (the lost connection, "You left the room.") are stale now; a lost share's
  // offer to share again stays across a rejoin.
  clearNotices((n) => !app.rejoin || n.dataset.reason !== "share_lost");
  app.rejoin = null;
  $("rejoin-panel").hidden = true;
  for (const s of room.subscriptions ?? []) if (s.quality) app.qualities.set(s.trackId, s.quality);
  for (const t of app.tiles.values()) t.remove();
  app.tiles.clear();
  resetData();
  const on = (type, fn) => room.addEventListener(type, (e) => app.room === room && fn(/** @type {CustomEvent} */ (e).detail));
  on("data", (m) => {
    onData(room, m);
    render();
  });
  // A tile whose frames do not decrypt (another passphrase, or no key) says so.
  on("e2ee_error", (m) => {
    app.undecryptable.set(m.participantId, m.trackId);
    render();
  });
  on("attributes_changed", (m) => {
    if (m.attributes.hand === "raised" && m.participantId !== room.me.id && room.isModerator) {
      notify({ text: `${who(m.participantId).Name} raised a hand.` });
    }
  });
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
  // Each push is all this participant may see (its own and the publishers'): who is not in it shows none.
  on("network_quality", (m) => {
    app.quality.clear();
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
    // The meeting's notices end with it: the join screen says only why.
    clearNotices();
    notify({
      kind: m.reason === "room_ended" ? "info" : "error",
      text: text || `You left the room (${m.reason}).`,
      reason: m.reason,
      key: "left",
      ttl: 0,
    });
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
  // The SDK joined again by itself after a failed resume (a restarted server, a cluster node that
  // left) and republished the live captures: the meeting goes on as a new participant.
  on("rejoined", () => {
    setConnection("connected");
    saveSession();
    rememberNames();
    app.viewports.clear();
    for (const tile of app.tiles.values()) scheduleViewport(tile);
    clearNotices((n) => n.dataset.kind !== "info" || n.dataset.reason === "connection_lost");
    notify({ text: "Rejoined the room.", reason: "rejoined" });
    render();
  });
  on("disconnected", (d) => {
    setConnection("disconnected");
    const final = room.closedByUser || [4100, 4101, 4102, 4103].includes(d.code);
    const want = { ...app.wanted, share: app.wanted.share || !!room.myShare };
    exitRoom();
    if (!final) {
      startRejoin(want, d.reason || "disconnected");
      return;
    }
    // Out for good: the meeting's notices go, the reason (and errors) stay; the preview is live again.
    clearNotices((n) => n.dataset.key !== "left" && n.dataset.kind !== "error");
    startPreview();
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
  const attempt = { want, tries: 0, timer: 0, reason, failure: null, tick: () => {} };
  app.rejoin = attempt;
  clearNotices((n) => n.dataset.kind !== "error");
  const code = String(reason).replace(/\s+/g, "_");
  notify({ kind: "error", text: "The connection to the room was lost. Rejoining…", code, reason: "connection_lost", ttl: 0 });
  $("rejoin-panel").hidden = false;
  $("rejoin-status").textContent = "Rejoining the room…";
  // The join screen shows what the rejoin turns on (the live camera, or "Camera is off"), and its
  // toggles change it.
  preview.camera = want.camera;
  preview.mic = want.mic;
  startPreview();
  attempt.tick = async () => {
    if (app.rejoin !== attempt || app.room || app.phase === "joining") return;
    clearTimeout(attempt.timer);
    attempt.tries++;
    $("rejoin-status").textContent = "Rejoining the room…";
    const ok = await join(null, { ...attempt.want, camera: preview.camera, mic: preview.mic });
    if (ok || app.rejoin !== attempt) return;
    if (attempt.tries >= 30) {
      $("rejoin-status").textContent = `${rejoinProblem(attempt.failure)}; press Rejoin now to try again.`;
      return;
    }
    countdown(attempt, REJOIN_EVERY_S);
  };
  attempt.timer = setTimeout(attempt.tick, 500);
}

const REJOIN_EVERY_S = 2;
/** Failures that mean the server is not there (down, restarting, no network). */
const UNREACHABLE = new Set(["unreachable", "connection_failed", "disconnected", "timeout"]);

/** Why the last rejoin attempt failed, in words. */
function rejoinProblem(failure) {
  if (!failure || UNREACHABLE.has(failure.code)) return "The server cannot be reached";
  return failure.text.replace(/[.\s]+$/, "");
}

/** Says why the rejoin failed and when it tries again, a second at a time, then tries. */
function countdown(attempt, seconds) {
  if (app.rejoin !== attempt) return;
  if (seconds <= 0) {
    attempt.tick();
    return;
  }
  $("rejoin-status").textContent = `${rejoinProblem(attempt.failure)}; trying again in ${seconds} s.`;
  attempt.timer = setTimeout(() => countdown(attempt, seconds - 1), 1000);
}

function rejoinNow() {
  if (app.rejoin) {
    app.rejoin.tick();
    return;
  }
  join(null, { camera: preview.camera, mic: preview.mic, share: false });
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
  // The meeting's notices stay with it.
  clearNotices();
  notify({ text: "You left the room.", reason: "left", key: "left" });
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

// ------------------------------------------------------------------ rendering

let renderQueued = false;
/** Renders soon, once for a burst of events. */
export function render() {
  if (renderQueued) return;
  renderQueued = true;
  setTimeout(() => {
    renderQueued = false;
    if (app.room && app.phase === "meeting") renderMeeting();
  }, 0);
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
  $("e2ee-badge").hidden = !room.roomInfo?.e2ee;
  $("copy-invite").hidden = !app.devMode;

  renderStage(room);
  renderLayoutToggle();
  renderTiles(room);
  renderControls(room, pol);
  renderPeople(room, isMod);
  renderHostPanel(room, isMod, pol);
  renderChat(room);
  renderHands(room);
  renderPointers(room);
}

/**
 * The layout toggle names the layout it switches to, so it claims the other one is shown: where the
 * speaker view cannot apply (a share fills the stage) it is disabled and says why.
 */
function renderLayoutToggle() {
  const button = /** @type {HTMLButtonElement} */ ($("layout-toggle"));
  const blocked = speakerViewBlocked($("main-area"));
  const speaker = app.layout === "speaker" && !blocked;
  labelled(button, speaker ? "grid" : "speaker", speaker ? "Grid view" : "Speaker view");
  button.dataset.layout = speaker ? "speaker" : "grid";
  button.disabled = !!blocked;
  button.title = blocked;
  button.setAttribute(
    "aria-label",
    blocked ? "Speaker view (not available now)" : speaker ? "Switch to the grid view" : "Switch to the speaker view",
  );
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
  // The M and V keys do nothing without those buttons: no hint for them either.
  $("shortcuts").hidden = viewer;

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

// ------------------------------------------------------------------ controls

function wireControls() {
  $("join-form").addEventListener("submit", join);
  wireData(act, render);

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
    if (speakerViewBlocked($("main-area"))) return;
    app.layout = app.layout === "grid" ? "speaker" : "grid";
    if (app.layout === "grid") app.pinnedParticipant = null;
    render();
  });
  window.addEventListener("resize", () => render());

  labelled($("copy-invite"), "link", "Copy invite link");
  $("copy-invite").addEventListener("click", () => copyInvite());
  $("rejoin").addEventListener("click", () => rejoinNow());
  $("join-room").addEventListener("input", () => {
    // A fixed room name takes its error above Join away.
    if (!checkRoomField() && $("join-error").dataset.code === "invalid_room_name") $("join-error").hidden = true;
  });

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
  // Dev mode: a link with a room (an invite) joins as a participant unless it names a role; the bare
  // page, where a person starts a room, as host.
  const role = params.get("role") || (params.get("room") ? "participant" : "host");
  /** @type {HTMLSelectElement} */ ($("join-role")).value = role;
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
  // A reload of a page that was in this room rejoins it, with what was on; a link naming someone
  // else (another name or role) is a new join under the link's name.
  const session = savedSession();
  const sameSession =
    session &&
    session.room === params.get("room") &&
    (!params.get("name") || params.get("name") === session.name) &&
    (!params.get("role") || params.get("role") === session.role);
  if (sameSession && app.devMode) {
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
