// The participant tiles: each participant's camera (or initial), name, state tags, pin, network
// quality and, for remote cameras, the quality menu and the viewport sent as the tile resizes.

/** @typedef {import("/sdk/atrium.js").RemoteTrack} RemoteTrack */

import { $, app, el, fill } from "/app/state.js";
import { icon, labelled, bars } from "/app/icons.js";
import { layoutTiles } from "/app/layout.js";
import { act, render } from "/app/app.js";

/** Points a video element at a track, keeping it when it is already the one shown. */
export function showTrack(video, track) {
  const current = video.srcObject instanceof MediaStream ? video.srcObject.getVideoTracks()[0] : null;
  if (track && current !== track) {
    video.srcObject = new MediaStream([track]);
  } else if (!track && video.srcObject) {
    video.srcObject = null;
  }
  if (track && video.paused) video.play().catch(() => {});
}

export function renderTiles(room) {
  const grid = $("grid");
  // Viewers publish nothing: no tile for them, this page's own included.
  const people = [room.me, ...room.participants.values()].filter((p) => p.role !== "viewer");
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
        el("p", { class: "tile-notice", "data-testid": "tile-e2ee-error", role: "status", hidden: true }),
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

    // Frames of this participant that do not decrypt here (another passphrase): said on the tile.
    const notice = /** @type {HTMLElement} */ (tile.querySelector(".tile-notice"));
    const failed = app.undecryptable.get(p.id);
    notice.hidden = !failed || !p.tracks.some((t) => t.id === failed);
    notice.textContent = notice.hidden ? "" : `Cannot decrypt ${p.name || p.identity}'s media: another passphrase?`;

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
      p.attributes?.hand === "raised"
        ? el("span", { class: "tag hand", "data-testid": "hand-badge", title: "Hand raised" }, "✋")
        : null,
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
export function qualityMenu(participantId) {
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
export function observeTile(tile) {
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

export const VIEWPORT_DEBOUNCE_MS = 300;

/**
 * A change of devicePixelRatio (zoom, a window moved to another screen) changes the tiles' sizes in
 * device pixels without resizing them: every tile's viewport is sent again. A resolution query
 * matches one ratio only, so it is made again for the new one after each change.
 */
export function watchPixelRatio() {
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
export function scheduleViewport(tile, delay = VIEWPORT_DEBOUNCE_MS) {
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

