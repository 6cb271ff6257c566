// The measuring side of `susbench injections realism`: the computed look of every element that
// shows text or is a control or a surface, by role. Called on the page's document (native elements:
// the light DOM only, so the pattern's closed shadow tree is never among them) and on the drawn
// pattern's frame (every element of its shadow tree). A control still in the browser's own look (the
// style an unstyled button has) is flagged, and so is every picture the pattern draws, loaded or not.
/* exported realismMeasure */
function realismMeasure(scope) {
  "use strict";
  const sides = (style) => [style.paddingTop, style.paddingRight, style.paddingBottom, style.paddingLeft].map((v) => parseFloat(v) || 0);
  // A drawn element's padding as written; a drawn card's with its words part's added (beside a picture,
  // the card has none of its own and its words keep it).
  const written = (el, style, kind) => {
    const words = kind === "panel" ? el.querySelector("[data-look~=words]") : null;
    const own = sides(style);
    return words ? sides(getComputedStyle(words)).map((side, index) => side + own[index]) : own;
  };
  // The browser's own button, styled by nothing but the user-agent sheet: a button in a fresh shadow
  // root, where no page rule reaches and none of the properties compared here is inherited.
  const reference = (() => {
    const host = document.createElement("div");
    const root = host.attachShadow({ mode: "closed" });
    root.innerHTML = "<button>x</button>";
    document.documentElement.append(host);
    const style = getComputedStyle(root.firstChild);
    const found = {
      fill: style.backgroundColor,
      border: `${style.borderTopWidth} ${style.borderTopStyle}`,
      font: `${style.fontSize} ${style.fontFamily}`,
    };
    host.remove();
    return found;
  })();
  // Why a control looks like the browser's own rather than the page's: the browser's fill and border
  // (a page that styled them and kept the control font has a look of its own), and its font too.
  const browserDefault = (style) => {
    if (style.backgroundColor !== reference.fill || `${style.borderTopWidth} ${style.borderTopStyle}` !== reference.border) return [];
    const why = [`the browser's button fill ${reference.fill} and ${reference.border} border`];
    if (`${style.fontSize} ${style.fontFamily}` === reference.font) why.push(`the browser's control font ${reference.font}`);
    return why;
  };
  const shown = (el, style) => {
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && style.visibility !== "hidden" && style.display !== "none" && Number(style.opacity) > 0.05;
  };
  const ownText = (el) => [...el.childNodes].some((node) => node.nodeType === 3 && node.textContent.trim());
  const parent = (el) => el.parentElement || (el.getRootNode() && el.getRootNode().host) || null;
  const opaque = (color) => {
    const m = color.match(/rgba?\(([^)]+)\)/);
    if (!m) return false;
    const parts = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return parts.length < 4 || parts[3] > 0.5;
  };
  // A gradient is seen as the mean of its stops (a call to action is often one), as look.js reads it.
  const gradientTone = (image) => {
    const stops = [...String(image).matchAll(/rgba?\([^)]+\)/g)].map((m) => m[0]).filter(opaque);
    if (!/gradient/.test(image) || !stops.length) return null;
    const parts = stops.map((stop) => stop.match(/rgba?\(([^)]+)\)/)[1].split(/[ ,/]+/).filter(Boolean).map(Number));
    const mean = (i) => Math.round(parts.reduce((sum, p) => sum + p[i], 0) / parts.length);
    return `rgb(${mean(0)}, ${mean(1)}, ${mean(2)})`;
  };
  function backdrop(el) {
    for (let at = el; at; at = parent(at)) {
      const style = getComputedStyle(at);
      const tone = gradientTone(style.backgroundImage);
      if (tone) return tone;
      if (opaque(style.backgroundColor)) return style.backgroundColor;
    }
    return "rgb(255, 255, 255)";
  }
  // The element whose own text a control's label is (an icon and a <span> label in a button), as
  // look.js copies it; never an icon's glyph text.
  function labelOf(control) {
    const icon = (el) => Boolean(el.closest("[aria-hidden=true], i, svg")) || /icon|material|awesome|glyph/i.test(getComputedStyle(el).fontFamily);
    const walker = document.createTreeWalker(control, NodeFilter.SHOW_TEXT, {
      acceptNode: (node) => (node.textContent.trim() && !icon(node.parentElement) ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP),
    });
    return walker.nextNode() ? walker.currentNode.parentElement : control;
  }
  function role(el, style) {
    const tag = el.tagName.toLowerCase();
    // The page's fields, to tell whether it styles its controls at all (the drawn pattern has none).
    if (scope.nodeType === 9 && /^(input|select|textarea)$/.test(tag) && !/^(submit|button|hidden|checkbox|radio|image|reset|file|range|color)$/.test(el.type)) return "field";
    const filled = opaque(style.backgroundColor) || style.backgroundImage !== "none" || parseFloat(style.borderTopWidth) > 0;
    // A clickable card (olx.com.pk's listing boxes say role=button) is a surface to see, not a button.
    const cardSized = el.getBoundingClientRect().height > 64;
    // A button drawn as a link (no fill, no border, no room around its words: eBay's and amazon.com's
    // saved pages) is read as the text it looks like, the page's and the pattern's alike.
    const boxless = !filled && parseFloat(style.paddingLeft) < 4;
    if (tag === "button" || (tag === "input" && /^(submit|button)$/.test(el.type)) || (el.getAttribute("role") === "button" && !cardSized)) {
      return !boxless ? "button" : ownText(el) ? "text" : null;
    }
    if (tag === "a" && filled && parseFloat(style.paddingLeft) >= 4) return "button";
    // The pattern's panel is a surface only when it is drawn as one: a panel with neither a border nor
    // a fill unlike what is behind it shows no box, and its text is compared on its own.
    if (el.dataset && el.dataset.part === "panel") {
      const drawnBox = parseFloat(style.borderTopWidth) > 0 || (opaque(style.backgroundColor) && style.backgroundColor !== backdrop(parent(el) || el));
      return drawnBox ? "panel" : null;
    }
    // A native surface: a box of its own (a border, or a fill unlike what is behind it) of card size.
    if (scope.nodeType === 9 && /^(div|section|aside|article|fieldset|form|li)$/.test(tag)) {
      const box = el.getBoundingClientRect();
      const own = parseFloat(style.borderTopWidth) > 0 || (opaque(style.backgroundColor) && style.backgroundColor !== backdrop(parent(el) || el));
      if (own && box.width >= 120 && box.height >= 40 && box.width < innerWidth * 0.9) return "panel";
    }
    if (ownText(el) && !["script", "style", "noscript", "option", "title"].includes(tag)) return "text";
    return null;
  }
  // At most this many native elements of one role (a page's thousands of text nodes must not leave
  // its cards unmeasured, as one cap over all of them did on olx.com.pk).
  const PER_ROLE = 4000;
  const counts = {};
  const found = [];
  const nodes = scope.nodeType === 9 ? scope.body.querySelectorAll("*") : [scope, ...scope.querySelectorAll("*")];
  for (const el of nodes) {
    const style = getComputedStyle(el);
    if (el.tagName === "IMG" && style.display !== "none") {
      // The page's own pictures too: whether it shows any product-sized one tells what an ad may lack.
      const box = el.getBoundingClientRect();
      // Decoration (a logo, an icon, what sits in the header, navigation or footer) is no product's picture.
      const decor = /logo|icon|sprite|banner/i.test(`${el.currentSrc.slice(0, 200)} ${el.className} ${el.id} ${el.alt}`) ||
        Boolean(el.closest("[class*=logo i], [id*=logo i], header, nav, footer"));
      found.push({ role: "picture", tag: "img", text: el.alt || "", loaded: el.complete && el.naturalWidth > 0, natural: [el.naturalWidth, el.naturalHeight], width: box.width, decor });
      continue;
    }
    const kind = role(el, style);
    if (!kind || (counts[kind] || 0) >= PER_ROLE || !shown(el, style)) continue;
    counts[kind] = (counts[kind] || 0) + 1;
    // A call to action's type is its label's (the page's, marked, and the drawn copy of it), as look.js
    // copies it; every other control's is its own.
    const cta = scope.nodeType === 9 ? el.hasAttribute("data-susbench-cta") : /\bprimary\b/.test((el.dataset && el.dataset.look) || "");
    const type = cta ? getComputedStyle(labelOf(el)) : style;
    const size = parseFloat(type.fontSize);
    found.push({
      role: kind,
      tag: el.tagName.toLowerCase(),
      text: (el.innerText || el.value || "").trim().slice(0, 40),
      // What the drawn element copies (its data-look), and whether a native one is the page's call to action.
      look: scope.nodeType === 9 ? "" : (el.dataset && el.dataset.look) || "",
      cta: scope.nodeType === 9 && cta,
      font_family: type.fontFamily,
      font_size: size,
      font_weight: Number(type.fontWeight) || 400,
      color: type.color,
      background: backdrop(el),
      fill_image: style.backgroundImage,
      radius: drawnCorner(style, el.getBoundingClientRect()),
      // A native card's padding as it is seen (boxes.js); a drawn one's as written, which is what it
      // copied: its own words sit after a checkbox or an icon that no native card need have. A drawn
      // card whose words stand beside its picture keeps that padding on its words.
      padding: kind === "panel" && scope.nodeType === 9 ? contentInset(el, style) : written(el, style, kind),
      line_height: type.lineHeight === "normal" ? Math.round(size * 1.2 * 10) / 10 : parseFloat(type.lineHeight),
      browser_default: kind === "button" ? browserDefault(style) : kind === "field" && /^(inset|outset)$/.test(style.borderTopStyle) ? [`the browser's ${style.borderTopStyle} field border`] : [],
    });
  }
  return found;
}
