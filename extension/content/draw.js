// Drawing: the pattern's template, filled with the injection's texts and styled with the page's look,
// in a closed shadow root on a bare host placed at the anchor; and how the drawn pattern answers
// its own controls (reveal, opt out, dismiss).
"use strict";
(() => {
  const helper = globalThis.pageHelper;
  const { look } = helper;
  // The host's own style, from inside its shadow root: important declarations of the inner context win
  // over every page rule, `!important`, inline or layered, so page CSS can neither hide, move, clip nor
  // restyle the host (nor pass `pointer-events: none` into it). The look lives on the inner frame.
  const HOST_SHEET = new CSSStyleSheet();
  // Selection colours reach shadow content by inheritance from the host (a page's white-on-white
  // `::selection` with its body kept selected blanked the pattern): its own elements take the browser's.
  HOST_SHEET.replaceSync(
    ":host { all: initial !important; display: block !important; }" +
      " *::selection { color: HighlightText !important; background-color: Highlight !important; }",
  );
  // An overlay's host spans the viewport above the page, letting clicks through wherever the pattern
  // draws nothing (its frame takes pointer events back).
  const OVERLAY_SHEET = new CSSStyleSheet();
  OVERLAY_SHEET.replaceSync(
    ":host { position: fixed !important; inset: 0 !important; z-index: 2147483000 !important; pointer-events: none !important; }" +
      " [data-part=frame] { pointer-events: auto; }",
  );

  const escapeHtml = (text) =>
    String(text).replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]);

  // Where a custom property would be left undefined: the declaration is invalid at computed-value time,
  // as the browser would have it (`unset`).
  const UNDEFINED = "\u0001";

  // `text` with every var() of a look's value put in (its fallback where the look has none).
  function substitute(text, values, depth = 0) {
    let out = "";
    let at = 0;
    for (let start = text.indexOf("var(", at); start >= 0; start = text.indexOf("var(", at)) {
      let end = start + 4;
      for (let level = 1; end < text.length && level; end += 1) level += text[end] === "(" ? 1 : text[end] === ")" ? -1 : 0;
      const inner = text.slice(start + 4, end - 1);
      const comma = inner.indexOf(",");
      const name = (comma < 0 ? inner : inner.slice(0, comma)).trim();
      const value = name in values ? values[name] : comma < 0 ? null : inner.slice(comma + 1).trim();
      out += text.slice(at, start) + (value === null || depth > 4 ? UNDEFINED : substitute(value, values, depth + 1));
      at = end;
    }
    return out + text.slice(at);
  }

  // A style container query on a look's value, answered now: its rules kept or dropped.
  function answerQueries(css, values) {
    const query = /@container\s+style\(\s*(--[\w-]+)\s*:\s*([^)]*?)\s*\)\s*\{/g;
    let out = "";
    let at = 0;
    for (let found = query.exec(css); found; found = query.exec(css)) {
      let end = query.lastIndex;
      for (let level = 1; end < css.length && level; end += 1) level += css[end] === "{" ? 1 : css[end] === "}" ? -1 : 0;
      out += css.slice(at, found.index) + (values[found[1]] === found[2] ? css.slice(query.lastIndex, end - 1) : "");
      at = end;
      query.lastIndex = end;
    }
    return out + css.slice(at);
  }

  // The drawing's CSS with no custom property left in it. Custom properties would reach the page's
  // @property registrations of the same names: document-wide, they reach into closed shadow roots, and
  // `all: initial` does not stop them (inherits: false and an initial value of the page's gave the
  // pattern a font that draws nothing, or swapped its choices' prominence).
  function resolved(css, values) {
    let out = substitute(answerQueries(css, values), values);
    const invalid = new RegExp(`([\\w-]+)\\s*:[^;{}]*${UNDEFINED}[^;{}]*`, "g");
    out = out.replace(invalid, "$1:unset");
    return out;
  }

  function fill(html, texts) {
    return html.replace(/\{\{\s*([a-z_]+)\s*\}\}/g, (_, key) => escapeHtml(texts[key] || ""));
  }

  // The placements that put a pattern among the page's elements (the rest float over the page).
  const IN_FLOW = new Set(["before", "after", "prepend", "append"]);

  function place(host, anchor, placement) {
    if (placement === "before") anchor.before(host);
    else if (placement === "after") anchor.after(host);
    else if (placement === "prepend") anchor.prepend(host);
    else if (placement === "append") anchor.append(host);
    else document.body.append(host);
  }

  // A pattern placed as one of a grid's cells takes the cell's layout, one placed beside a set-in element
  // that element's column (`layout`: semantic.js's layoutOf); anywhere else, none.
  function fit(mounted, layout) {
    const sheets = mounted.root.adoptedStyleSheets.filter((sheet) => sheet === HOST_SHEET || sheet === OVERLAY_SHEET);
    if (layout) {
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(layout);
      sheets.push(sheet);
    }
    mounted.root.adoptedStyleSheets = sheets;
  }

  // A pattern drawn as a new item of a grid whose items name their columns (Ghost's Casper sets every
  // part of a post in `grid-column: main-start / main-end`) takes its neighbour's columns: its host's
  // reset style would otherwise auto-place it in the grid's first, narrowest track. A rule, or null;
  // called once the host is in the page.
  function gridColumn(host) {
    const grid = host.parentElement;
    const neighbour = host.nextElementSibling || host.previousElementSibling;
    if (!grid || !neighbour || !/grid/.test(getComputedStyle(grid).display)) return null;
    const { gridColumnStart: start, gridColumnEnd: end } = getComputedStyle(neighbour);
    if (start === "auto" && end === "auto") return null;
    return `:host { grid-column: ${start} / ${end} !important; }`;
  }

  // Returns the mounted pattern: {host, root, frame, exposed, sight (see exposure.look)}; it is not in
  // the page until `place`. `cell`: the grid cell it is drawn as one more of, if any.
  function render({ injection, template, texts }, anchor, cell) {
    // A plain element with no id, class or attribute: nothing in the page DOM names or marks it. Its
    // blank text (never rendered: the shadow tree has no slot) keeps it out of `:empty` rules.
    const host = document.createElement("div");
    host.append(" ");
    const root = host.attachShadow({ mode: "closed" });
    root.adoptedStyleSheets = injection.placement === "overlay" ? [HOST_SHEET, OVERLAY_SHEET] : [HOST_SHEET];
    const inline = !/data-look="[^"]*\bcard\b/.test(template.html);
    const drawn = look.paint(anchor, injection.style, inline, IN_FLOW.has(injection.placement), cell);
    root.innerHTML = `<style>${resolved(`${drawn.css}\n${template.css}`, drawn.values)}</style>${fill(template.html, texts || injection.texts)}`;
    const frame = root.querySelector("[data-part=frame]") || root.firstElementChild;
    // The page's own picture (already loaded by the page), or no picture part at all: never an empty box.
    root.querySelectorAll("img[data-look~=picture]").forEach((img) => {
      if (drawn.picture) img.src = drawn.picture;
      else img.remove();
    });
    frame.dataset.picture = drawn.picture ? "shown" : "none";
    frame.dataset.emphasis = injection.style.emphasis;
    const sight = { entry: null, box: null, why: "not shown", trail: [], visibleSince: null, hiddenSince: null, obstructed: false };
    return { host, root, frame, exposed: false, sight: { ...sight, stop: () => undefined } };
  }

  // Shows the pattern now or after the injection's delay (a late pop-up), then calls `shown`.
  function appear({ frame }, delayMs, shown) {
    const show = () => {
      frame.removeAttribute("hidden");
      shown();
    };
    if (delayMs > 0) {
      frame.setAttribute("hidden", "");
      setTimeout(show, delayMs);
    } else {
      show();
    }
  }

  // The part exposure is measured on: the panel, or the whole frame where the template has none.
  function panel(mounted) {
    return mounted.root.querySelector("[data-part=panel]") || mounted.frame;
  }

  function reveal({ root }) {
    root.querySelectorAll("[data-part=hidden]").forEach((part) => part.removeAttribute("data-concealed"));
    root.querySelectorAll("[data-role=reveal]").forEach((el) => el.setAttribute("aria-expanded", "true"));
  }

  function toggle(mounted, checked) {
    mounted.root.querySelectorAll("input[type=checkbox][data-role=manipulative]").forEach((box) => {
      box.checked = checked;
    });
    mounted.frame.dataset.state = checked ? "" : "declined";
  }

  // Carries out a chosen option; true when the choice dismissed the pattern.
  function act(mounted, role) {
    if (role === "reveal") reveal(mounted);
    if (role === "optout") toggle(mounted, false);
    const dismissed = (mounted.frame.dataset.dismiss || "").split(/\s+/).includes(role);
    if (dismissed) mounted.frame.hidden = true;
    return dismissed;
  }

  // What the operator already did to this pattern on an earlier document of the episode, drawn again
  // (the page reloaded itself, or a re-render replaced it): it stays revealed, declined or dismissed.
  function restore(mounted, { revealed, checked, dismissed }) {
    if (revealed) reveal(mounted);
    if (checked === false) toggle(mounted, false);
    if (dismissed) mounted.frame.hidden = true;
  }

  helper.draw = { render, place, fit, gridColumn, appear, panel, act, toggle, restore };
})();
