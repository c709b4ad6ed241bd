// The pre-join screen's preview: the camera and microphone the person will join with, each with a
// device picker and an on/off toggle. The choice is kept (localStorage) and used when joining: the
// camera and microphone are published from the chosen devices (deviceId, exact).

import { labelled } from "/app/icons.js";

const $ = (id) => /** @type {any} */ (document.getElementById(id));

export const preview = {
  /** @type {MediaStream|null} */
  stream: null,
  camera: localStorage.getItem("atrium.camera") !== "off",
  mic: localStorage.getItem("atrium.mic") !== "off",
  cameraDevice: localStorage.getItem("atrium.cameraDevice") || "",
  micDevice: localStorage.getItem("atrium.micDevice") || "",
  /** why the preview could not start (the browser refused, no device), shown under it */
  problem: "",
};

/** The constraints joining uses for the camera (640x360, from the chosen device). */
export function cameraConstraints() {
  return {
    width: 640,
    height: 360,
    ...(preview.cameraDevice ? { deviceId: { exact: preview.cameraDevice } } : {}),
  };
}

/** The constraints joining uses for the microphone. */
export function micConstraints() {
  return preview.micDevice ? { deviceId: { exact: preview.micDevice } } : true;
}

// Which capture request is the wanted one: every start and stop moves it on, so a capture that resolves
// after the person changed their mind (a toggle or a join while the browser was still asking for
// permission) is stopped the moment it arrives instead of staying live behind a "Camera is off".
let generation = 0;

function stopStream() {
  generation += 1;
  for (const t of preview.stream?.getTracks() ?? []) t.stop();
  preview.stream = null;
  $("preview-video").srcObject = null;
}

/** Starts (or restarts) the preview with the chosen devices; toggled-off ones are not captured. */
export async function startPreview() {
  stopStream();
  const mine = generation;
  preview.problem = "";
  renderPreview();
  if (!navigator.mediaDevices?.getUserMedia || (!preview.camera && !preview.mic)) return;
  try {
    const { stream, blocked } = await captureAllowed();
    if (mine !== generation || document.body.dataset.phase === "meeting") {
      // Not wanted any more: end it now (the browser's camera indicator goes out with it).
      for (const t of stream?.getTracks() ?? []) t.stop();
      return;
    }
    if (blocked.length) preview.problem = blockedText(blocked);
    if (stream) showStream(stream);
  } catch (e) {
    if (mine !== generation) return;
    // A saved device that is gone: fall back to the default once.
    if (e?.name === "OverconstrainedError" && (preview.cameraDevice || preview.micDevice)) {
      preview.cameraDevice = preview.micDevice = "";
      return startPreview();
    }
    preview.problem =
      e?.name === "NotAllowedError"
        ? blockedText([preview.camera ? "camera" : "microphone"])
        : "No preview: " + (e?.message || e);
  }
  await listDevices();
  renderPreview();
}

/** A capture of what is turned on. */
function ask(camera, mic) {
  return navigator.mediaDevices.getUserMedia({
    video: camera ? cameraConstraints() : false,
    audio: mic ? micConstraints() : false,
  });
}

/**
 * Captures what is turned on. When the browser refuses the camera and microphone together, each is
 * asked for alone: the one it allows is kept, and only the one it blocks is named.
 * @returns {Promise<{stream: MediaStream|null, blocked: string[]}>}
 */
async function captureAllowed() {
  try {
    return { stream: await ask(preview.camera, preview.mic), blocked: [] };
  } catch (e) {
    if (e?.name !== "NotAllowedError" || !preview.camera || !preview.mic) throw e;
  }
  const tracks = [];
  const blocked = [];
  for (const kind of ["camera", "microphone"]) {
    try {
      tracks.push(...(await ask(kind === "camera", kind === "microphone")).getTracks());
    } catch (e) {
      if (e?.name !== "NotAllowedError") {
        for (const t of tracks) t.stop();
        throw e;
      }
      blocked.push(kind);
    }
  }
  return { stream: tracks.length ? new MediaStream(tracks) : null, blocked };
}

function blockedText(kinds) {
  return `The browser blocked the ${kinds.join(" and ")}.`;
}

/** Shows the preview's capture, and takes the devices it came from as the chosen ones. */
function showStream(stream) {
  preview.stream = stream;
  $("preview-video").srcObject = stream;
  // The devices a person chose without a saved choice are the ones the browser picked.
  const cam = stream.getVideoTracks()[0];
  const mic = stream.getAudioTracks()[0];
  if (cam && !preview.cameraDevice) preview.cameraDevice = cam.getSettings().deviceId || "";
  if (mic && !preview.micDevice) preview.micDevice = mic.getSettings().deviceId || "";
}

/** Stops the preview (joining captures again, from the same devices). */
export function stopPreview() {
  stopStream();
}

/** Fills both pickers (labels are known once a capture was allowed). */
export async function listDevices() {
  if (!navigator.mediaDevices?.enumerateDevices) return;
  const devices = await navigator.mediaDevices.enumerateDevices();
  fillPicker($("device-camera"), devices.filter((d) => d.kind === "videoinput"), preview.cameraDevice, "Camera");
  fillPicker($("device-mic"), devices.filter((d) => d.kind === "audioinput"), preview.micDevice, "Microphone");
}

function fillPicker(select, devices, chosen, kind) {
  select.replaceChildren(
    ...devices.map((d, i) => {
      const o = document.createElement("option");
      o.value = d.deviceId;
      o.textContent = d.label || `${kind} ${i + 1}`;
      o.selected = d.deviceId === chosen;
      return o;
    }),
  );
  select.disabled = devices.length === 0;
}

export function renderPreview() {
  const cam = $("preview-camera");
  const mic = $("preview-mic");
  labelled(cam, "camera", preview.camera ? "Camera on" : "Camera off", { off: !preview.camera });
  labelled(mic, "mic", preview.mic ? "Mic on" : "Mic off", { off: !preview.mic });
  cam.setAttribute("aria-pressed", String(preview.camera));
  mic.setAttribute("aria-pressed", String(preview.mic));
  cam.dataset.state = preview.camera ? "on" : "off";
  mic.dataset.state = preview.mic ? "on" : "off";
  const live = !!preview.stream?.getVideoTracks().length;
  $("preview-off").hidden = live;
  $("preview-off").textContent = preview.problem || (preview.camera ? "Starting the camera…" : "Camera is off");
  // Over a live camera, a problem (a blocked microphone) is said under the picture.
  $("preview-note").hidden = !live || !preview.problem;
  $("preview-note").textContent = live ? preview.problem : "";
}

function save() {
  localStorage.setItem("atrium.camera", preview.camera ? "on" : "off");
  localStorage.setItem("atrium.mic", preview.mic ? "on" : "off");
  localStorage.setItem("atrium.cameraDevice", preview.cameraDevice);
  localStorage.setItem("atrium.micDevice", preview.micDevice);
}

/** Wires the toggles and pickers of the pre-join screen. */
export function wirePreview() {
  $("preview-camera").addEventListener("click", () => {
    preview.camera = !preview.camera;
    save();
    startPreview();
  });
  $("preview-mic").addEventListener("click", () => {
    preview.mic = !preview.mic;
    save();
    startPreview();
  });
  $("device-camera").addEventListener("change", (e) => {
    preview.cameraDevice = e.target.value;
    preview.camera = true;
    save();
    startPreview();
  });
  $("device-mic").addEventListener("change", (e) => {
    preview.micDevice = e.target.value;
    preview.mic = true;
    save();
    startPreview();
  });
  renderPreview();
}
