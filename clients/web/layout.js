// The participant area's layout. "grid": every tile the same size, as large as the area allows at
// 16:9 (the column count that gives the largest tiles). "speaker": one featured tile (the pinned
// participant, else the active speaker) fills the area above a strip of the others. With a share on
// the stage, or on a narrow screen, the stylesheet lays the tiles out instead (a column, two columns).

const GAP = 12;
const STRIP = 124;

/** The column count and tile size that fit `n` 16:9 tiles into `width` x `height` best. */
export function bestGrid(n, width, height) {
  let best = { cols: 1, w: 0, h: 0 };
  for (let cols = 1; cols <= Math.max(1, n); cols++) {
    const rows = Math.ceil(n / cols);
    let w = (width - GAP * (cols - 1)) / cols;
    let h = (w * 9) / 16;
    if (h * rows + GAP * (rows - 1) > height) {
      h = (height - GAP * (rows - 1)) / rows;
      w = (h * 16) / 9;
    }
    if (w > best.w) best = { cols, w: Math.floor(w), h: Math.floor(h) };
  }
  return best;
}

/**
 * Sizes the tiles of `grid` for `mode` ("grid" or "speaker"); `featured` is the featured tile's
 * participant id in speaker mode. Returns the mode applied ("auto" when the stylesheet decides).
 * @param {HTMLElement} grid
 * @param {HTMLElement[]} tiles   in display order
 */
export function layoutTiles(grid, tiles, mode, featured) {
  const area = /** @type {HTMLElement} */ (grid.parentElement);
  const narrow = window.matchMedia("(max-width: 760px)").matches;
  const auto = narrow || area.classList.contains("has-share");
  grid.dataset.layout = auto ? "auto" : mode;
  for (const t of tiles) {
    t.style.width = t.style.height = "";
    t.dataset.featured = "false";
  }
  if (auto || !tiles.length) return grid.dataset.layout;
  const box = area.getBoundingClientRect();
  const width = box.width - 24;
  const height = box.height - 24;
  if (mode === "speaker" && tiles.length > 1) {
    const main = tiles.find((t) => t.dataset.participantId === featured) ?? tiles[0];
    const others = tiles.filter((t) => t !== main);
    main.dataset.featured = "true";
    const mainH = Math.max(120, height - STRIP - GAP);
    const mainW = Math.min(width, (mainH * 16) / 9);
    main.style.width = `${Math.floor(mainW)}px`;
    main.style.height = `${Math.floor((mainW * 9) / 16)}px`;
    const w = Math.min(((STRIP - 4) * 16) / 9, (width - GAP * (others.length - 1)) / others.length);
    for (const t of others) {
      t.style.width = `${Math.floor(w)}px`;
      t.style.height = `${Math.floor((w * 9) / 16)}px`;
    }
    return "speaker";
  }
  const { w, h } = bestGrid(tiles.length, width, height);
  for (const t of tiles) {
    t.style.width = `${w}px`;
    t.style.height = `${h}px`;
  }
  return "grid";
}
