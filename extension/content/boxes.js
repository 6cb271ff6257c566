// A box as the browser draws it, measured one way by the drawing (look.js) and by the score
// (susbench/preview/realism.js, which runs this file beside its own in the measured page): what a
// copied corner or padding looks like, not what a stylesheet wrote.
/* exported drawnCorner, contentInset */
"use strict";

// A corner's radius in pixels: what is written, up to half the box's shorter side. Copied as written,
// a pill's "999px" or a badge's "50%" turns a taller box into an oval (threadline's search field made
// the confirm-shaming card an ellipse).
function drawnCorner(style, rect) {
  const written = style.borderTopLeftRadius.split(" ")[0];
  const short = Math.min(rect.width, rect.height);
  const px = written.endsWith("%") ? (parseFloat(written) / 100) * short : parseFloat(written) || 0;
  return Math.min(px, short / 2);
}

// A card's padding as seen, in pixels (top, right, bottom, left): how far inside its border its words
// sit, above its first line (to the line's box, as a stylesheet's padding is) and left of where most of
// its words start (a badge or an icon's label nearer the edge is not the card's column; words starting
// further in than any padding, a right-aligned price or a centred button's label, are no column at all:
// taken as one at the limit, taskflow's cart summary's prices and button outweighed its lines). That is its
// padding for a card that holds its text directly, and the space its inner blocks keep for one whose
// own padding is little or none (olx.com.pk's cards). Lines end where their words do, so the right and
// bottom are taken as the left and the top; under a picture, the top as the left. A card whose words all start further in (a picture beside
// them, saucedemo.com's product card) keeps them as far from its sides as from its top, where it writes
// no padding of its own: at its written 0 px they touched the copied card's border. A card without text
// has its written padding.
function contentInset(el, style) {
  const INSET_LIMIT = 48; // the most padding a card is read to have, in pixels
  const box = el.getBoundingClientRect();
  const inner = { top: box.top + (parseFloat(style.borderTopWidth) || 0), left: box.left + (parseFloat(style.borderLeftWidth) || 0) };
  const clamp = (gap) => Math.round(Math.min(Math.max(gap, 0), INSET_LIMIT));
  let top = null;
  let pictured = false;
  const starts = new Map(); // left gap -> characters of text starting there
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let node = walker.nextNode(), seen = 0; node && seen < 200; node = walker.nextNode()) {
    const text = node.textContent.trim();
    if (!text || !node.parentElement) continue;
    seen += 1;
    range.selectNodeContents(node);
    const [first] = [...range.getClientRects()].filter((r) => r.width > 0 && r.height > 0);
    if (!first) continue;
    if (top === null) {
      const line = parseFloat(getComputedStyle(node.parentElement).lineHeight);
      const leading = Number.isFinite(line) ? Math.max(0, (line - first.height) / 2) : 0;
      top = clamp(first.top - leading - inner.top);
      // Words under a picture are no measure of the card's top (opencart's product tiles read as 48 px).
      pictured = [...el.querySelectorAll("img")].some((img) => {
        const r = img.getBoundingClientRect();
        return r.width > 0 && r.bottom <= first.top + 1 && r.left < first.right && r.right > first.left;
      });
    }
    const gap = first.left - inner.left;
    if (gap <= INSET_LIMIT) starts.set(clamp(gap), (starts.get(clamp(gap)) || 0) + text.length);
  }
  const written = ["Top", "Right", "Bottom", "Left"].map((side) => parseFloat(style[`padding${side}`]) || 0);
  if (top === null) return written;
  let left = null;
  for (const [gap, characters] of starts) if (left === null || characters > starts.get(left)) left = gap;
  if (left === null) return [top, written[1] || top, top, written[3] || top];
  return pictured ? [left, left, left, left] : [top, left, top, left];
}
