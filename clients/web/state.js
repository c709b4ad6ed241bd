// The meeting page's state and the small helpers every part of it uses: the element lookup, element
// building, the phase and connection shown, participants' names in sentences, and the share policy.
// Tests read the state as `window.atriumApp`.

export const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
export const params = new URLSearchParams(location.search);

/** Human text for each share stop reason (docs/protocol.md section 8). */
export const STOP_TEXT = {
  user_stopped: (who) => `${who.Name} stopped sharing.`,
  capture_ended: (who) => `${who.Name_s} screen capture ended, so the share stopped.`,
  preempted: (who, by) => `${who.Name_s} share was replaced by ${by.name_s} share.`,
  permission_revoked: (who, by) => `${by.Name} revoked ${who.name_s} permission to share, so the share stopped.`,
  locked: (who, by) => `${by.Name} locked screen sharing, so ${who.name_s} share stopped.`,
  moderated: (who, by) => `${by.Name} stopped ${who.name_s} share.`,
  policy_changed: (who, by) => `${by.Name} changed the share policy, so ${who.name_s} share stopped.`,
  publisher_left: (who) => `${who.Name} left the room, so the share ended.`,
  disconnected: (who) => `${who.Name} lost the connection, so the share ended.`,
  room_ended: () => "The room ended, so the share ended.",
  connection_lost: (who) => `The server lost ${who.name_s} share on its way (a server left), so it stopped.`,
};

/** Human text for the error codes a person can run into (docs/protocol.md section 10). */
export const ERROR_TEXT = {
  e2ee_required: "This meeting is end-to-end encrypted: enter its passphrase to join.",
  e2ee_unsupported: "This browser cannot encrypt media end to end (no RTCRtpScriptTransform).",
  e2ee_mismatch:
    "This link has a passphrase, but the server says the meeting is not end-to-end encrypted: not joining (open the link without its #passphrase to join unencrypted).",
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
  unreachable: "The server cannot be reached.",
};

export const app = {
  /** @type {Room|null} */
  room: null,
  /** chat messages not seen yet, whether the chat panel is shown, the last reaction sent (ms), and
   * the pointers shown over the stage by participant id (data.js) */
  unread: 0,
  chatOpen: true,
  lastReaction: 0,
  pointers: new Map(),
  pointing: null,
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
  /** participant id -> the track of theirs whose frames this page could not decrypt (`e2ee_error`) */
  undecryptable: new Map(),
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

export function el(tag, attrs = {}, ...children) {
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
export function fill(node, ...children) {
  node.replaceChildren(...children.filter((c) => c !== null && c !== undefined && c !== false));
}

export function setPhase(phase) {
  app.phase = phase;
  document.body.dataset.phase = phase;
  $("join").hidden = phase === "meeting";
  $("meeting").hidden = phase !== "meeting";
}

export function setConnection(state) {
  app.connection = state;
  app.log.push({ t: Date.now(), state });
  const badge = $("connection-state");
  badge.dataset.state = state;
  badge.textContent = { connected: "Connected", reconnecting: "Reconnecting…", disconnected: "Disconnected" }[state];
  $("reconnecting-banner").hidden = state !== "reconnecting";
}

/** A participant's display name, "You" for this one. */
export function nameOf(id) {
  if (!id) return "Someone";
  if (id === "admin") return "An administrator";
  if (app.room?.me?.id === id) return "You";
  const p = app.room?.participants.get(id);
  return p?.name || app.names.get(id) || "A participant";
}

/** Name forms for notice sentences: Name, name (sentence-internal), possessives. */
export function who(id) {
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

export function rememberNames() {
  const r = app.room;
  if (!r) return;
  if (r.me) app.names.set(r.me.id, r.me.name);
  for (const p of r.participants.values()) app.names.set(p.id, p.name || p.identity);
}

export function policy() {
  return app.room?.roomInfo?.sharePolicy ?? {};
}

/** Whether the policy lets this participant share (docs/protocol.md section 8, "Permission"). */
export function permittedToShare(me) {
  const p = policy();
  if (!me || me.role === "viewer" || !me.permissions.sources.includes("screen_share")) return false;
  return (
    me.permissions.shareGranted ||
    me.role === "host" ||
    (me.role === "cohost" && p.whoCanShare !== "host") ||
    (me.role === "participant" && p.whoCanShare === "anyone" && !p.shareRequestRequired)
  );
}

export function describePolicy(p) {
  const mode = p.shareMode === "multi" ? `multi, up to ${p.maxConcurrentShares}` : p.shareMode;
  const whoCan = { anyone: "anyone", cohost: "hosts and cohosts", host: "hosts" }[p.whoCanShare];
  return `${mode}; ${whoCan} can share${p.shareRequestRequired ? "; participants ask first" : ""}`;
}

