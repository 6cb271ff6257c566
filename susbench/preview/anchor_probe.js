// The measuring side of `susbench injections anchor`, evaluated after extension/semantic.js into an
// isolated world of the page (like a content script: the page sees none of it). It renders a
// stand-in of one generic injection at a time (its real template filled with its texts, in a closed
// shadow root, sized by the page's own font), places it where the semantic anchors say, and measures
// what a person would see. Phase 2 swaps the stand-in for the extension itself.

/* exported anchorProbe */
function anchorProbe(vocabulary) {
  "use strict";
  let mounted = null; // {host, panel}
  const isOurs = (el) => Boolean(mounted && el && (el === mounted.host || mounted.host.contains(el)));
  const anchors = semanticAnchors(document, vocabulary, { isOurs });
  let last = null; // {verdict, corner}

  const inView = (x, y) => x >= 0 && y >= 0 && x < innerWidth && y < innerHeight;
  const onTop = (x, y) => inView(x, y) && isOurs(document.elementFromPoint(x, y));

  // Drawn above the page at its centre and at least 3 of 5 points, as a click would find it.
  function hitTest(el) {
    const box = el.getBoundingClientRect();
    const points = [[0.5, 0.5], [0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75]];
    const hits = points.filter(([fx, fy]) => onTop(box.left + box.width * fx, box.top + box.height * fy));
    return hits.length >= 3 && onTop(box.left + box.width / 2, box.top + box.height / 2);
  }

  function scrolledTo(el) {
    if (!(last && last.corner)) el.scrollIntoView({ block: "center", inline: "nearest", behavior: "instant" });
    return el;
  }

  // The page's consent wall, modal or consent banner, put away as a person would by accepting it.
  // The harness hides it rather than clicking: a saved copy's consent script is often missing, and
  // where it is present the click may submit a form and leave the page.
  function clearLayers() {
    const found = anchors.pageLayers();
    if (!found) return null;
    for (const el of found.layers) el.style.setProperty("display", "none", "important");
    for (const el of [document.documentElement, document.body]) el.style.setProperty("overflow", "visible", "important");
    return { layers: found.layers.map(describe), accept: found.accept ? describe(found.accept) : null };
  }

  function describe(el) {
    const id = el.id ? `#${el.id}` : "";
    const cls = typeof el.className === "string" && el.className.trim() ? `.${el.className.trim().split(/\s+/)[0]}` : "";
    const text = (el.textContent || el.getAttribute("alt") || "").replace(/\s+/g, " ").trim().slice(0, 40);
    return `${el.tagName.toLowerCase()}${id}${cls}${text ? ` "${text}"` : ""}`;
  }

  function nearestTruth(el, prices) {
    const truth = prices.flatMap((price) => anchors.showing(price));
    if (!truth.length) return null;
    const box = el.getBoundingClientRect();
    return Math.round(Math.min(...truth.map((t) => anchors.gap(box, t.getBoundingClientRect()))));
  }

  // Which rule finds each kind of element, and how far the found price is from the true one.
  function survey(prices) {
    const result = {};
    for (const kind of anchors.kinds) {
      const hit = anchors.find(kind);
      result[kind] = hit ? { rule: hit.rule, element: describe(hit.element) } : null;
    }
    const truth = prices.flatMap((price) => anchors.showing(price));
    const price = anchors.find("price");
    return { kinds: result, truth_found: truth.length > 0, price_distance: price ? nearestTruth(price.element, prices) : null };
  }

  // Custom properties the templates read, taken from the page where cheap (font, text colour);
  // the extension computes the full look in phase 2.
  function look(anchor, style) {
    const text = getComputedStyle(anchor.parentElement || document.body);
    const clean = (value) => String(value).replace(/[{}<>;]/g, "");
    const vars = {
      "--font": text.fontFamily,
      "--size": text.fontSize,
      "--text": text.color,
      "--heading": text.color,
      "--bg": "#fff",
      "--surface": "#fff",
      "--border": "1px solid rgba(0,0,0,.15)",
      "--radius": "6px",
      "--primary-bg": "#222",
      "--primary-fg": "#fff",
      "--primary-border": "#222",
      "--primary-radius": "4px",
      "--primary-weight": "700",
      "--primary-transform": "none",
      "--primary-spacing": "normal",
      "--primary-font": text.fontFamily,
      "--secondary-fg": text.color,
      "--secondary-bg": "transparent",
      "--secondary-border": `1px solid ${text.color}`,
      "--accent": "#c0392b",
      "--width": style.max_width ? `${style.max_width}px` : "none",
    };
    return `:host{${Object.entries(vars).map(([k, v]) => `${k}:${clean(v)}`).join(";")}}`;
  }

  function filled(html, texts) {
    const safe = (text) => String(text).replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
    return html.replace(/\{\{\s*([a-z_]+)\s*\}\}/g, (_, key) => safe(texts[key] || ""));
  }

  function mount(slot, injection, template, anchor) {
    const host = document.createElement("div");
    const root = host.attachShadow({ mode: "closed" });
    const cell = anchors.layoutOf(slot) || "";
    root.innerHTML = `<style>${look(anchor, injection.style)}\n${cell}\n${template.css}</style>${filled(template.html, injection.texts)}`;
    const frame = root.querySelector("[data-part=frame]") || root.firstElementChild;
    frame.dataset.emphasis = injection.style.emphasis;
    if (slot.corner) {
      frame.dataset.corner = slot.corner;
      if (slot.top !== undefined) frame.style.top = `${Math.round(slot.top * innerHeight)}px`;
      document.body.append(host);
    } else if (slot.placement === "before" || slot.placement === "prepend") {
      slot.target[slot.placement === "before" ? "before" : "prepend"](host);
    } else {
      slot.target[slot.placement === "after" ? "after" : "append"](host);
    }
    const panel = root.querySelector("[data-part=panel]") || frame;
    mounted = { host, panel };
    return {
      element: panel,
      remove: () => {
        host.remove();
        if (mounted && mounted.host === host) mounted = null;
      },
    };
  }

  // A pop-up shows while its anchor is in view: centred, at the top or at the bottom of the
  // viewport, at the first of these moments with a free spot (else at the least bad one).
  function popUp(anchor, put) {
    let best = null;
    for (const block of ["center", "start", "end"]) {
      anchor.scrollIntoView({ block, behavior: "instant" });
      const verdict = put();
      if (!verdict || verdict.cost === 0) return verdict;
      verdict.placed.remove();
      if (!best || verdict.cost < best.cost) best = { block, cost: verdict.cost };
    }
    anchor.scrollIntoView({ block: best.block, behavior: "instant" });
    return put();
  }

  // The first of the injection's anchors that is found and has a slot beside it (else the first found).
  function anchorOf(injection) {
    let first = null;
    for (const locator of injection.page.anchors) {
      const hit = locator.semantic ? anchors.find(locator.semantic) : null;
      if (!hit) continue;
      const candidates = anchors.slotsFor(hit.element, locator.semantic, injection);
      const found = { hit, kind: locator.semantic, candidates };
      if (candidates.length) return found;
      first = first || found;
    }
    return first;
  }

  // Put the injection's stand-in at its anchor; says which anchor and rule matched and where it went.
  function inject(injection, template, prices) {
    remove();
    const chosen = anchorOf(injection);
    if (!chosen) return { anchored: false };
    const { hit, kind, candidates } = chosen;
    const corner = injection.placement === "corner";
    last = { verdict: null, corner };
    const put = () =>
      anchors.place(
        candidates,
        (slot) => mount(slot, injection, template, hit.element),
        (panel) => hitTest(scrolledTo(panel)),
      );
    const verdict = corner ? popUp(hit.element, put) : put();
    const distance = kind === "price" && prices.length ? nearestTruth(hit.element, prices) : null;
    const found = { anchored: true, anchor_kind: kind, rule: hit.rule, anchor: describe(hit.element), distance };
    if (!verdict) return { ...found, placed: false };
    last = { verdict, corner };
    const { top, corner: side, placement, target } = verdict.slot;
    const edge = top === undefined ? side : `${side} at ${Math.round(top * 100)}% height`;
    return { ...found, placed: true, slot: edge || `${placement} ${describe(target)}` };
  }

  // Scroll to the stand-in and test what is on top at its points, as a click would find it.
  function reveal() {
    const panel = scrolledTo(mounted.panel);
    const box = panel.getBoundingClientRect();
    const covered = anchors.covering(panel);
    const visible = anchors.shows(panel) && hitTest(panel);
    const pad = 110;
    const left = Math.max(0, box.left - pad);
    const top = Math.max(0, box.top - pad);
    const clip = {
      x: left,
      y: top,
      width: Math.max(1, Math.min(innerWidth, box.right + pad) - left),
      height: Math.max(1, Math.min(innerHeight, box.bottom + pad) - top),
    };
    return { visible, covered: covered.map(describe), displaced: last.verdict.displaced.map(describe), clip };
  }

  function remove() {
    if (mounted) mounted.host.remove();
    mounted = null;
    last = null;
  }

  return { clearLayers, survey, inject, reveal, remove };
}
