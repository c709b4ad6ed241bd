// Notices: a strip of short messages in the page's flow, above the meeting (never over a control).
// Each expires (info 8 s, stop reasons 10 s, errors 12 s; `ttl: 0` stays until dismissed), a
// repeat of one already shown refreshes it and counts (×2) instead of stacking, at most four are
// shown (the oldest goes first), and a notice may carry buttons (a share request: Allow, Deny).

const TTL = { info: 8000, "share-stopped": 10000, error: 12000 };
const MAX = 4;

/**
 * @typedef {object} NoticeAction
 * @property {string} label
 * @property {string} testid
 * @property {() => void} onClick
 * @property {string} [className]
 */

/**
 * Shows (or refreshes) a notice.
 * @param {{kind?: string, text: string, reason?: string, code?: string, ttl?: number, key?: string,
 *          actions?: NoticeAction[]}} n
 * @returns {HTMLElement}
 */
export function notify({ kind = "info", text, reason, code, ttl, key, actions = [] }) {
  const box = /** @type {HTMLElement} */ (document.getElementById("notices"));
  const id = key ?? `${kind}|${reason ?? ""}|${code ?? ""}|${text}`;
  const life = ttl ?? TTL[kind] ?? TTL.info;
  let item = [...box.children].find((n) => /** @type {HTMLElement} */ (n).dataset.key === id);
  if (item) {
    const count = Number(item.dataset.count || "1") + 1;
    item.dataset.count = String(count);
    const badge = item.querySelector(".count");
    if (badge) badge.textContent = `×${count}`;
    box.append(item); // the newest goes last
  } else {
    const textEl = document.createElement("span");
    textEl.className = "text";
    textEl.textContent = text;
    if (code) {
      const c = document.createElement("code");
      c.dataset.testid = "notice-code";
      c.textContent = code;
      textEl.append(" ", c);
    }
    item = document.createElement("div");
    item.className = "notice";
    Object.assign(item.dataset, { testid: "notice", kind, key: id, count: "1" });
    if (reason) item.dataset.reason = reason;
    if (code) item.dataset.code = code;
    if (kind === "error") item.setAttribute("role", "alert");
    const count = document.createElement("span");
    count.className = "count";
    count.setAttribute("aria-label", "times");
    item.append(textEl, count);
    for (const a of actions) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = a.className ?? "";
      b.dataset.testid = a.testid;
      b.textContent = a.label;
      b.addEventListener("click", () => {
        item?.remove();
        a.onClick();
      });
      item.append(b);
    }
    const close = document.createElement("button");
    close.type = "button";
    close.className = "dismiss";
    close.setAttribute("aria-label", "Dismiss notice");
    close.textContent = "×";
    close.addEventListener("click", () => item?.remove());
    item.append(close);
    box.append(item);
  }
  const el = item;
  clearTimeout(/** @type {any} */ (el).timer);
  if (life) /** @type {any} */ (el).timer = setTimeout(() => el.remove(), life);
  while (box.children.length > MAX) box.firstElementChild?.remove();
  return el;
}

/** Removes the notices `match` selects (all of them without it): stale ones after a rejoin. */
export function clearNotices(match = () => true) {
  const box = document.getElementById("notices");
  for (const n of [...(box?.children ?? [])]) if (match(/** @type {HTMLElement} */ (n))) n.remove();
}

/** Removes the notices with one key (a share request answered elsewhere). */
export function dropNotice(key) {
  clearNotices((n) => n.dataset.key === key);
}
