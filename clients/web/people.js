// The People list (each person's microphone and camera, the moderator's actions on them) and the
// host panel (lock, policy, share requests, active shares).

import { $, app, el, fill, who, policy } from "/app/state.js";
import { icon, labelled } from "/app/icons.js";
import { act } from "/app/app.js";

/** A participant's microphone and camera: "on", "off" (muted or turned off) or "none" (not published). */
export function mediaState(room, p, source) {
  if (p.id === room.me.id) {
    const t = room.localTrack(source);
    return !t ? "none" : t.muted ? "off" : "on";
  }
  const t = p.tracks.find((x) => x.source === source);
  return !t ? "none" : t.muted ? "off" : "on";
}

/**
 * Whether a list's content would be the same as the last time (`key`): then it is not rebuilt, so a
 * button under the pointer stays the same element between mousedown and mouseup (a rebuild on every
 * speaker change would swallow the click).
 */
function unchanged(node, key) {
  if (node.dataset.renderKey === key) return true;
  node.dataset.renderKey = key;
  return false;
}

export function renderPeople(room, isMod) {
  const everyone = [room.me, ...room.participants.values()];
  $("people-count").textContent = `(${everyone.length})`;
  const sharing = new Set([...room.shares.values()].map((s) => s.participantId));
  const key = JSON.stringify([
    isMod,
    room.me.role,
    [...app.busy].filter((b) => /^(perm|mute|remove)-/.test(b)),
    everyone.map((p) => [
      p.id, p.name, p.identity, p.role, p.permissions.sources, sharing.has(p.id),
      mediaState(room, p, "microphone"), mediaState(room, p, "camera"),
      p.tracks.map((t) => [t.id, t.source, t.muted]),
      p.attributes?.hand ?? null,
    ]),
  ]);
  if (unchanged($("people"), key)) return;
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
        p.attributes?.hand === "raised"
          ? el("span", { class: "tag hand", "data-testid": "person-hand", title: "Hand raised" }, "✋")
          : null,
        status("mic", mic, mic === "on" ? "Microphone on" : mic === "off" ? "Microphone muted" : "No microphone"),
        status("camera", cam, cam === "on" ? "Camera on" : cam === "off" ? "Camera off" : "No camera"),
      );
      if (isMod && !self) {
        const actions = el("span", { class: "person-actions" });
        // Moderators lower a raised hand (they clear the attribute; only its owner sets it).
        if (p.attributes?.hand === "raised" && (room.me.role === "host" || p.role !== "host")) {
          const h = el("button", {
            type: "button",
            "data-testid": "person-lower-hand",
            "data-participant-id": p.id,
            "aria-label": `Lower ${name}'s hand`,
            text: "Lower hand",
          });
          h.addEventListener("click", () =>
            act(`hand-${p.id}`, `Could not lower ${name}'s hand`, () => room.setAttributes({ hand: null }, p.id)),
          );
          actions.append(h);
        }
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
export function fillPolicyForm(force) {
  const p = policy();
  const form = $("policy-form");
  if (!force && form.dataset.dirty === "true") return;
  /** @type {HTMLSelectElement} */ ($("policy-mode")).value = p.shareMode ?? "single";
  /** @type {HTMLInputElement} */ ($("policy-max")).value = String(p.maxConcurrentShares ?? 1);
  /** @type {HTMLSelectElement} */ ($("policy-who")).value = p.whoCanShare ?? "anyone";
  /** @type {HTMLInputElement} */ ($("policy-request")).checked = !!p.shareRequestRequired;
  form.dataset.dirty = "false";
}

export function renderHostPanel(room, isMod, pol) {
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
  const requestKey = JSON.stringify(requests.map((r) => [r.id, r.participantId, who(r.participantId).Name]));
  if (!unchanged($("request-list"), requestKey)) fill($("request-list"), 
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
  const sharesKey = JSON.stringify([
    shares.map((s) => [s.id, s.participantId, s.state, who(s.participantId).Name_s]),
    [...app.busy].filter((b) => b.startsWith("stop-")),
  ]);
  if (!unchanged($("host-shares"), sharesKey)) fill($("host-shares"), 
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

