// Line icons (24x24, stroked with the text colour) for the meeting page's buttons. Every button
// that shows one also has a text label: the icon helps recognition, the words say the state.

const PATHS = {
  mic: '<rect x="9" y="3" width="6" height="11" rx="3"/><path d="M5 11a7 7 0 0 0 14 0M12 18v3M8 21h8"/>',
  camera: '<rect x="3" y="6" width="13" height="12" rx="2"/><path d="M16 10l5-3v10l-5-3z"/>',
  screen: '<rect x="3" y="4" width="18" height="12" rx="2"/><path d="M8 20h8M12 16v4"/>',
  pause: '<path d="M9 5v14M15 5v14"/>',
  play: '<path d="M7 5l12 7-12 7z"/>',
  hand:
    '<path d="M8 13V6a1.5 1.5 0 0 1 3 0v5M11 11V4.5a1.5 1.5 0 0 1 3 0V11M14 11V6a1.5 1.5 0 0 1 3 0v7a6 6 0 0 1-6 6h-1a6 6 0 0 1-5-3l-2-4a1.5 1.5 0 0 1 2.5-1.5L8 13"/>',
  leave: '<path d="M10 4H5v16h5M14 8l4 4-4 4M18 12H9"/>',
  link: '<path d="M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1"/>',
  pin: '<path d="M9 4h6l-1 6 3 3H7l3-3zM12 13v7"/>',
  fullscreen: '<path d="M4 9V4h5M15 4h5v5M20 15v5h-5M9 20H4v-5"/>',
  grid: '<rect x="4" y="4" width="7" height="7"/><rect x="13" y="4" width="7" height="7"/><rect x="4" y="13" width="7" height="7"/><rect x="13" y="13" width="7" height="7"/>',
  speaker: '<rect x="3" y="4" width="18" height="11" rx="1"/><path d="M3 19h4M10 19h4M17 19h4"/>',
  remove: '<path d="M6 6l12 12M18 6L6 18"/>',
  slash: '<path d="M3 3l18 18"/>',
};

/**
 * An inline SVG icon, hidden from assistive technology (the button's text says it).
 * @param {keyof PATHS} name
 * @param {{off?: boolean}} [options]  off: crossed out (a microphone or camera that is off)
 */
export function icon(name, { off = false } = {}) {
  const span = document.createElement("span");
  span.className = `icon icon-${name}${off ? " off" : ""}`;
  span.setAttribute("aria-hidden", "true");
  span.innerHTML =
    `<svg viewBox="0 0 24 24" width="20" height="20" fill="none" stroke="currentColor" stroke-width="2" ` +
    `stroke-linecap="round" stroke-linejoin="round">${PATHS[name] ?? ""}${off ? PATHS.slash : ""}</svg>`;
  return span;
}

/**
 * Sets a button's content to an icon and a visible label; unchanged content is left alone, so that a
 * click in progress (mousedown on the label, mouseup after a render) is not lost.
 */
export function labelled(button, name, label, options) {
  const key = `${name}|${label}|${options?.off ? 1 : 0}`;
  if (button.dataset.iconKey === key) return;
  button.dataset.iconKey = key;
  const text = document.createElement("span");
  text.className = "label";
  text.textContent = label;
  button.replaceChildren(icon(name, options), text);
}

/**
 * Signal bars for a network quality level (`network_quality`: excellent, good, poor, lost).
 * @param {string} level
 */
export function bars(level) {
  const lit = { excellent: 3, good: 2, poor: 1, lost: 0 }[level] ?? 0;
  const span = document.createElement("span");
  span.className = "bars";
  span.setAttribute("aria-hidden", "true");
  span.innerHTML = [1, 2, 3]
    .map((i) => `<i class="${i <= lit ? "lit" : ""}" style="height:${4 + i * 3}px"></i>`)
    .join("");
  return span;
}
