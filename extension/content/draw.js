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
  HOST_SHEET.replaceSync(":host { all: initial !important; display: block !important; }");
  // An overlay's host spans the viewport above the page, letting clicks through wherever the pattern
  // draws nothing (its frame takes pointer events back).
  const OVERLAY_SHEET = new CSSStyleSheet();
  OVERLAY_SHEET.replaceSync(
    ":host { position: fixed !important; inset: 0 !important; z-index: 2147483000 !important; pointer-events: none !important; }" +
      " [data-part=frame] { pointer-events: auto; }",
  );

  const escapeHtml = (text) =>
    String(text).replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]);

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
    root.innerHTML = `<style>${drawn.css}\n${template.css}</style>${fill(template.html, texts || injection.texts)}`;
    const frame = root.querySelector("[data-part=frame]") || root.firstElementChild;
    // The page's own picture (already loaded by the page), or no picture part at all: never an empty box.
    root.querySelectorAll("img[data-look~=picture]").forEach((img) => {
      if (drawn.picture) img.src = drawn.picture;
      else img.remove();
    });
    frame.dataset.picture = drawn.picture ? "shown" : "none";
    frame.dataset.emphasis = injection.style.emphasis;
    const sight = { entry: null, box: null, why: "not shown", movedAt: 0, visibleSince: null, hiddenSince: null, obstructed: false };
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
    root.querySelectorAll("[data-part=hidden]").forEach((part) => part.removeAttribute("hidden"));
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
