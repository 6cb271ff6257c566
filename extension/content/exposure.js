// Exposure means visible. The pattern counts as seen once its panel has been really visible for a
// moment: at least half of it inside the viewport and not clipped away, nothing of the page drawn over
// it (hit-testing points of its box inside the shadow root), and no transparency, filter or skewing
// transform on the way to the screen (IntersectionObserver v2's `isVisible`). A click counts only on a
// pattern that has been visible and still for a while, so a pattern the page shows for an instant, or
// moves under the pointer, takes no choice. Visible also means readable: no mask on the way to the
// screen, a real painted size, and every line of its text rendered large enough and with contrast
// against what is really painted behind it (the stack of elements at that point). A pattern kept in
// the viewport but out of sight or unreadable is reported as obstructed.
"use strict";
(() => {
  const helper = globalThis.pageHelper;
  const { state, channel, draw } = helper;
  const TICK_MS = 100;
  const SEEN_MS = 300; // continuously visible this long: seen
  const STEADY_MS = 500; // visible and unmoved this long: a click there counts
  const OBSTRUCTED_MS = 1000; // in the viewport yet out of sight this long: the page is hiding it
  const MOVE_PX = 2;

  function markExposed(via) {
    const { mounted } = state;
    if (mounted && !mounted.exposed) {
      mounted.exposed = true;
      channel.report("exposed", { via });
    }
  }

  function visibleShare(box) {
    const width = Math.min(box.right, innerWidth) - Math.max(box.left, 0);
    const height = Math.min(box.bottom, innerHeight) - Math.max(box.top, 0);
    const area = box.width * box.height;
    return area > 0 && width > 0 && height > 0 ? (width * height) / area : 0;
  }

  // The centre and four inner points of the part of `box` inside the viewport.
  function samplePoints(box) {
    const left = Math.max(box.left, 0);
    const right = Math.min(box.right, innerWidth);
    const top = Math.max(box.top, 0);
    const bottom = Math.min(box.bottom, innerHeight);
    const at = (fx, fy) => [left + (right - left) * fx, top + (bottom - top) * fy];
    return [at(0.5, 0.5), at(0.2, 0.2), at(0.8, 0.2), at(0.2, 0.8), at(0.8, 0.8)];
  }

  // Why a person at the screen cannot see the panel now; "" when they can.
  function hindrance(mounted, box) {
    if (visibleShare(box) < 0.5) return "out of view";
    const seen = mounted.sight.entry;
    if (!seen) return "not measured yet";
    if (seen.intersectionRatio < 0.5) return "clipped";
    for (const [x, y] of samplePoints(box)) {
      const hit = mounted.root.elementFromPoint(x, y);
      if (!hit || hit.getRootNode() !== mounted.root) return hit && hit.contains(mounted.host) ? "clipped" : "covered";
    }
    if (!seen.isVisible) return "transparent, filtered or transformed";
    return unreadable(mounted, box);
  }

  const MIN_TEXT_PX = 7; // the rendered height of a line of text below which nobody reads it
  const MIN_CONTRAST = 1.5; // WCAG contrast ratio of text to what is behind it below which it is unseen
  const MIN_PANEL_PX = [40, 14]; // the smallest painted panel (width, height) a person notices

  const parentOf = (el) => el.parentElement || (el.parentNode instanceof ShadowRoot ? el.parentNode.host : null);

  // A mask on the host or any ancestor (no hit-testing or IntersectionObserver notices it).
  function masked(mounted) {
    for (let el = mounted.host; el; el = parentOf(el)) {
      const style = getComputedStyle(el);
      if (style.maskImage !== "none" || style.webkitMaskImage !== "none") return true;
    }
    return false;
  }

  function rgba(text) {
    const parts = (text.match(/[\d.]+/g) || []).map(Number);
    if (parts.length < 3) return null;
    return { r: parts[0], g: parts[1], b: parts[2], a: parts.length > 3 ? parts[3] : 1 };
  }

  const over = (top, below) => ({
    r: top.r * top.a + below.r * (1 - top.a),
    g: top.g * top.a + below.g * (1 - top.a),
    b: top.b * top.a + below.b * (1 - top.a),
    a: 1,
  });

  function luminance({ r, g, b }) {
    const channel = (v) => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
  }

  // What is painted behind `el` at (x, y): the background colours of the elements stacked there below
  // it, composited until one is opaque; null when an image or gradient is among them (not measured).
  function backdrop(el, x, y) {
    const stack = el.getRootNode().elementsFromPoint(x, y);
    const from = stack.indexOf(el);
    const layers = [];
    for (const layer of from < 0 ? [el] : stack.slice(from)) {
      const style = getComputedStyle(layer);
      if (style.backgroundImage !== "none") return null;
      const colour = rgba(style.backgroundColor);
      if (colour && colour.a > 0) layers.push(colour);
      if (colour && colour.a >= 0.999) break;
    }
    let behind = { r: 255, g: 255, b: 255, a: 1 }; // the canvas under everything
    for (const layer of layers.reverse()) behind = over(layer, behind);
    return behind;
  }

  // Why a run of the pattern's text cannot be read ("" when it can, or when it is not rendered at all).
  function unreadableText(node) {
    const el = node.parentElement;
    if (!el || !el.checkVisibility()) return "";
    if (!el.checkVisibility({ visibilityProperty: true })) return "text hidden";
    const range = document.createRange();
    range.selectNodeContents(node);
    const rects = [...range.getClientRects()].filter((rect) => rect.width > 0);
    const tallest = Math.max(0, ...rects.map((rect) => rect.height));
    if (tallest < MIN_TEXT_PX) return "text too small";
    const style = getComputedStyle(el);
    const ink = rgba(style.webkitTextFillColor) || rgba(style.color);
    const rect = rects.find((r) => r.height === tallest);
    const behind = backdrop(el, rect.x + rect.width / 2, rect.y + rect.height / 2);
    if (!ink || !behind) return "";
    const [a, b] = [luminance(over(ink, behind)), luminance(behind)];
    const contrast = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    return contrast < MIN_CONTRAST ? "text without contrast" : "";
  }

  // Why a person could not read the panel though it is in view and not covered; "" when they can.
  function unreadable(mounted, box) {
    if (box.width < MIN_PANEL_PX[0] || box.height < MIN_PANEL_PX[1]) return "too small";
    if (masked(mounted)) return "masked";
    const walker = document.createTreeWalker(draw.panel(mounted), NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      // The pattern's own concealed text (hidden information before its reveal) is meant unseen.
      if (!node.data.trim() || node.parentElement?.closest("[data-concealed]")) continue;
      const why = unreadableText(node);
      if (why) return why;
    }
    return "";
  }

  // Whether a pointer resting at (x, y) for the last STEADY_MS would have been over `option` all along:
  // where the panel was at each look, the point fell on the part of the pattern that is now at
  // (x, y) shifted by the panel's move since, and that part must be the same option. Stillness is
  // measured on the pattern's own box: a page that shifts it by less than the option's size (a ticker,
  // a late ad) leaves it aimable; one that moves it further, or under the pointer, does not.
  // `onPage`: the panel's moves measured on the page, the window's own scrolling left out.
  function steadyAt(mounted, x, y, option, onPage = false) {
    const { sight } = mounted;
    const current = sight.box;
    for (const { box, scrolled } of sight.trail) {
      if (Math.abs(box.width - current.width) > MOVE_PX) return false;
      const [sx, sy] = onPage ? [scrollX - scrolled[0], scrollY - scrolled[1]] : [0, 0];
      const [dx, dy] = [current.x - box.x + sx, current.y - box.y + sy];
      if (Math.abs(dx) <= MOVE_PX && Math.abs(dy) <= MOVE_PX) continue;
      const [px, py] = [x + dx, y + dy];
      if (px < 0 || py < 0 || px >= innerWidth || py >= innerHeight) return false;
      if (helper.input.optionAt(mounted.root.elementFromPoint(px, py)) !== option) return false;
    }
    return true;
  }

  const options = (mounted) => [...mounted.root.querySelectorAll("[data-role]")].filter((el) => !el.closest("[hidden]"));

  // The page keeps the pattern moving: no option's centre would have stayed on it for STEADY_MS. While
  // the operator scrolls (a person reading on, a harness bringing the pattern into view) its moves are
  // measured on the page, the window's scrolling left out; otherwise in the viewport, so a page that
  // scrolls the window back and forth moves it too.
  function unsteady(mounted) {
    const onPage = helper.input.operatorScrolledWithin(STEADY_MS + TICK_MS);
    return !options(mounted).some((option) => {
      const box = option.getBoundingClientRect();
      return box.width > 0 && steadyAt(mounted, box.x + box.width / 2, box.y + box.height / 2, option, onPage);
    });
  }

  // One look at the panel: where it is, whether it can be seen, and for how long either has held.
  function look(mounted) {
    const { sight } = mounted;
    const now = Date.now();
    if (mounted.frame.hidden) {
      Object.assign(sight, { box: null, why: "not shown", visibleSince: null, hiddenSince: null, trail: [] });
      return sight;
    }
    // Taken out of this document by the page (removed and not put back, or carried into another
    // document): the operator cannot see it, and that is the page's doing.
    const gone = !mounted.host.isConnected || mounted.host.ownerDocument !== document;
    const box = gone ? null : draw.panel(mounted).getBoundingClientRect();
    sight.box = box;
    sight.trail = box ? [...sight.trail.filter((seen) => now - seen.at <= STEADY_MS), { at: now, box, scrolled: [scrollX, scrollY] }] : [];
    sight.why = gone ? "removed" : hindrance(mounted, box);
    if (sight.why) sight.visibleSince = null;
    else sight.visibleSince ??= now;
    // Visible long enough to be aimed at, yet no option holds still under a pointer: kept moving.
    const moving = !sight.why && now - sight.visibleSince >= STEADY_MS && unsteady(mounted);
    const hidden = (sight.why !== "" && sight.why !== "out of view" && sight.why !== "not measured yet") || moving;
    sight.hiddenSince = hidden ? (sight.hiddenSince ?? now) : null;
    if (sight.visibleSince !== null && now - sight.visibleSince >= SEEN_MS) markExposed("viewport");
    if (hidden && !sight.obstructed && now - sight.hiddenSince >= OBSTRUCTED_MS) {
      sight.obstructed = true;
      channel.report("obstructed", { why: moving ? "moving" : sight.why });
    } else if (!hidden && !sight.why && sight.obstructed) {
      sight.obstructed = false;
      channel.report("unobstructed");
    }
    return sight;
  }

  // Keeps looking at the drawn pattern until `stop`.
  function watch(mounted) {
    const observer = new IntersectionObserver(
      (entries) => {
        mounted.sight.entry = entries[entries.length - 1];
      },
      { threshold: [0, 0.25, 0.5, 0.75, 1], trackVisibility: true, delay: 100 },
    );
    observer.observe(draw.panel(mounted));
    const timer = setInterval(() => look(mounted), TICK_MS);
    mounted.sight.stop = () => {
      clearInterval(timer);
      observer.disconnect();
    };
  }

  // Whether a click on the pattern counts now: keyboard activation needs the pattern visible; a pointer click
  // also needs it visible and unmoved for STEADY_MS.
  // `point` and `option`: where a pointer click landed and the option it landed on.
  function clickable(mounted, keyboard, point, option) {
    const sight = look(mounted);
    const now = Date.now();
    if (sight.visibleSince === null) return { ok: false, why: sight.why };
    if (keyboard) return { ok: true };
    if (now - sight.visibleSince < STEADY_MS) return { ok: false, why: "just appeared" };
    if (!steadyAt(mounted, point[0], point[1], option)) return { ok: false, why: "moved" };
    return { ok: true };
  }

  // What a person at the screen could click now: the option is clickable and its own centre is in the
  // viewport, with nothing else of the pattern over it.
  function inSight(mounted, option) {
    const box = option.getBoundingClientRect();
    const [cx, cy] = [box.x + box.width / 2, box.y + box.height / 2];
    const inView = box.width > 0 && box.height > 0 && cx >= 0 && cy >= 0 && cx < innerWidth && cy < innerHeight;
    const hit = inView ? mounted.root.elementFromPoint(cx, cy) : null;
    return Boolean(hit && (hit === option || option.contains(hit))) && clickable(mounted, false, [cx, cy], option).ok;
  }

  helper.exposure = { markExposed, watch, clickable, inSight };
})();
