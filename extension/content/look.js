// The host page's look, read from its own elements (fonts, colours, its primary and secondary buttons,
// the card around the anchor), so the pattern is drawn in the page's own visual family.
"use strict";
(() => {
  const helper = globalThis.pageHelper;
  const { state, match } = helper;

  // The one colour parser. Computed colours come as rgb()/rgba(); anything else (a keyword, a wide-gamut
  // colour) is null and each caller says what that means for it.
  function parseColor(color) {
    const m = color.match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const [r, g, b, a = 1] = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return { r, g, b, a };
  }

  const opaque = (c) => c !== null && c.a > 0.5;
  // A solid fill that is not (near) white: what a primary button has and a secondary one lacks.
  const filled = (c) => opaque(c) && !(c.r > 235 && c.g > 235 && c.b > 235);
  const light = (c) => c === null || c.a < 0.5 || 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b > 215;

  function primaryButton() {
    let best = null;
    let bestScore = -1;
    for (const el of document.querySelectorAll("button, a, input[type=submit]")) {
      if (state.ours(el) || !match.isRendered(el) || !filled(parseColor(getComputedStyle(el).backgroundColor))) continue;
      const cls = String(el.className);
      const box = el.getBoundingClientRect();
      const score = (/primary/i.test(cls) ? 4 : 0) + (/btn|button/i.test(cls) ? 2 : 0) + (box.width * box.height > 2000 ? 1 : 0);
      if (score > bestScore) [best, bestScore] = [el, score];
    }
    return best;
  }

  function secondaryButton(primary) {
    for (const el of document.querySelectorAll("button, a")) {
      if (el === primary || state.ours(el) || !match.isRendered(el) || !/btn|button/i.test(String(el.className))) continue;
      const style = getComputedStyle(el);
      if (parseFloat(style.borderTopWidth) > 0 && !filled(parseColor(style.backgroundColor))) return el;
    }
    return null;
  }

  // The nearest light, bordered, rounded box around the anchor (a card, a summary, a fieldset):
  // the injected panel copies its border, radius and surface so it sits in the same visual family.
  function framed(anchor) {
    const isFrame = (el) => {
      const style = getComputedStyle(el);
      return parseFloat(style.borderTopWidth) > 0 && parseFloat(style.borderTopLeftRadius) > 0 && light(parseColor(style.backgroundColor));
    };
    const start = anchor.matches("button, a, input, select") ? anchor.parentElement : anchor;
    for (let el = start, depth = 0; el && el !== document.body && depth < 6; el = el.parentElement, depth += 1) {
      if (isFrame(el)) return el;
    }
    return [...document.querySelectorAll("[class*=card], [class*=summary], fieldset")].find((el) => !state.ours(el) && isFrame(el)) || null;
  }

  function background(el) {
    for (; el; el = el.parentElement) {
      const color = getComputedStyle(el).backgroundColor;
      if (opaque(parseColor(color))) return color;
    }
    return "rgb(255, 255, 255)";
  }

  const clean = (value) => String(value || "").replace(/[{}<>;]/g, "");

  // The page's look as custom properties on the pattern's frame, for the template's stylesheet. They sit
  // inside the closed shadow root, not on the host, so `getComputedStyle(host)` shows none of them.
  function frameStyle(anchor, style) {
    // Controls and headings have their own colours and sizes; the body text around them is what
    // the panel should match.
    const special = anchor.matches("button, a, input, select, h1, h2, h3, h4, h5, h6");
    const context = (special ? anchor.parentElement : anchor) || document.body;
    const text = getComputedStyle(context);
    const rootStyle = getComputedStyle(document.documentElement);
    const primary = primaryButton();
    const p = primary ? getComputedStyle(primary) : text;
    const secondary = secondaryButton(primary);
    const s = secondary ? getComputedStyle(secondary) : null;
    const card = framed(anchor);
    const c = card ? getComputedStyle(card) : null;
    const heading = document.querySelector("h1, h2");
    const primaryBg = primary ? p.backgroundColor : text.color;
    const accent = style.accent || rootStyle.getPropertyValue("--accent").trim() || primaryBg;
    const vars = {
      "--font": text.fontFamily,
      "--size": text.fontSize,
      "--line": text.lineHeight,
      "--text": text.color,
      "--heading": heading ? getComputedStyle(heading).color : text.color,
      "--bg": background(context),
      "--primary-bg": primaryBg,
      "--primary-fg": primary ? p.color : "#fff",
      "--primary-border": primary ? p.borderTopColor : primaryBg,
      "--primary-radius": primary ? p.borderTopLeftRadius : "6px",
      "--primary-weight": primary ? p.fontWeight : "700",
      "--primary-transform": primary ? p.textTransform : "none",
      "--primary-spacing": primary ? p.letterSpacing : "normal",
      "--primary-font": primary ? p.fontFamily : text.fontFamily,
      "--secondary-fg": s ? s.color : text.color,
      "--secondary-bg": s ? s.backgroundColor : "transparent",
      "--secondary-border": s ? `${s.borderTopWidth} ${s.borderTopStyle} ${s.borderTopColor}` : `1px solid ${text.color}`,
      "--radius": c ? c.borderTopLeftRadius : primary ? p.borderTopLeftRadius : "6px",
      "--border": c ? `${c.borderTopWidth} solid ${c.borderTopColor}` : "1px solid rgba(0,0,0,.12)",
      "--surface": c ? background(card) : background(context),
      "--accent": accent,
      "--width": style.max_width ? `${style.max_width}px` : "none",
    };
    return `[data-part=frame]{${Object.entries(vars).map(([k, v]) => `${k}:${clean(v)}`).join(";")}}`;
  }

  helper.look = { frameStyle };
})();
