// The participant area's layout. "grid": every tile the same size, as large as the area allows at
// 16:9 (the column count that gives the largest tiles). "speaker": one featured tile (the pinned
// participant, else the active speaker) fills the area above a strip of the others. With a share on
// the stage, or on a narrow screen, the stylesheet lays the tiles out instead (a column, two columns);
// on a narrow screen the speaker view puts the featured tile first, as wide as the screen.

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
 * Why the speaker view cannot apply in the participant area now, or "" when it can: with a share,
 * the stage has the room and the tiles are a column beside it.
 * @param {HTMLElement} area
 */
export function speakerViewBlocked(area) {
  return area.classList.contains("has-share") ? "The shared screen fills the stage; the tiles are in a column beside it." : "";
}

/**
 * Sizes the tiles of `grid` for `mode` ("grid" or "speaker"); `featured` is the featured tile's
 * participant id in speaker mode. Returns the layout applied: "grid", "speaker", "auto" (the
 * stylesheet decides) or "narrow-speaker" (the stylesheet's columns, the featured tile first).
 * @param {HTMLElement} grid
 * @param {HTMLElement[]} tiles   in display order
 */
export function layoutTiles(grid, tiles, mode, featured) {
  const area = /** @type {HTMLElement} */ (grid.parentElement);
  const narrow = window.matchMedia("(max-width: 760px)").matches;
  const blocked = !!speakerViewBlocked(area);
  const auto = narrow || blocked;
  for (const t of tiles) {
    t.style.width = t.style.height = "";
    t.dataset.featured = "false";
  }
  const main = mode === "speaker" && tiles.length > 1 ? featuredTile(tiles, featured) : null;
  if (main && narrow && !blocked) {
    main.dataset.featured = "true";
    grid.dataset.layout = "narrow-speaker";
    return grid.dataset.layout;
  }
  grid.dataset.layout = auto ? "auto" : mode;
  if (auto || !tiles.length) return grid.dataset.layout;
  const box = area.getBoundingClientRect();
  const width = box.width - 24;
  const height = box.height - 24;
  if (main) {
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

/** The tile the speaker view features: `featured`'s, else the first. */
function featuredTile(tiles, featured) {
  return tiles.find((t) => t.dataset.participantId === featured) ?? tiles[0];
}
