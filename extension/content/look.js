// The host page's look: a style model read from the page's own components (its add-to-cart button and
// a second button, its body, muted, bold and heading text, its links, its cards, a real product image),
// so each part of a pattern is drawn as a copy of one native element. Colour roles the page keeps for
// something else (a price's or a sale badge's colour, a disabled grey) are never borrowed.
"use strict";
(() => {
  const helper = globalThis.pageHelper;
  const { state, match } = helper;

  // The one colour parser. Computed colours come as rgb()/rgba(); anything else (a keyword, a wide-gamut
  // colour) is null and each caller says what that means for it.
  function parseColor(color) {
    const m = String(color).match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const [r, g, b, a = 1] = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return { r, g, b, a };
  }

  const opaque = (c) => c !== null && c.a > 0.5;
  const luminance = (c) => 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b;
  // Grey, black or white: the colours body and muted text come in (a hue is a role: link, price, sale).
  const neutral = (c) => c !== null && Math.max(c.r, c.g, c.b) - Math.min(c.r, c.g, c.b) < 40;
  const light = (c) => c === null || c.a < 0.5 || luminance(c) > 215;
  // A fill as seen: a gradient's colour (the mean of its stops: it covers the colour under it), else
  // its colour, and the image it paints (a gradient, or a picture: a call to action is often no flat fill).
  function fillOf(style) {
    const image = style.backgroundImage && style.backgroundImage !== "none" ? style.backgroundImage : null;
    const stops = image && /gradient/.test(image) ? [...image.matchAll(/rgba?\([^)]+\)/g)].map((m) => parseColor(m[0])).filter(opaque) : [];
    if (!stops.length) return { color: opaque(parseColor(style.backgroundColor)) ? parseColor(style.backgroundColor) : null, image };
    const mean = (key) => Math.round(stops.reduce((sum, stop) => sum + stop[key], 0) / stops.length);
    return { color: { r: mean("r"), g: mean("g"), b: mean("b"), a: 1 }, image };
  }
  const filled = (style) => {
    const fill = fillOf(style);
    return opaque(fill.color) || fill.image !== null;
  };
  const rgbText = (c) => `rgb(${c.r}, ${c.g}, ${c.b})`;
  // WCAG's contrast ratio of two opaque colours (1 to 21).
  const contrastRatio = (a, b) => {
    const relative = (c) => {
      const linear = (v) => (v / 255 <= 0.04045 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4);
      return 0.2126 * linear(c.r) + 0.7152 * linear(c.g) + 0.0722 * linear(c.b);
    };
    const [hi, lo] = [relative(a), relative(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  // A control whose label can be read on the fill it is drawn on (its own, else `ground`): a button
  // with transparent or faint letters (an icon button whose text is hidden) is no look to copy.
  const readable = (look, ground) => {
    if (look.image && !/gradient/.test(look.image)) return true; // its own label on its own picture
    const ink = parseColor(look.color);
    const own = parseColor(look.tone || look.bg);
    const fill = opaque(own) ? own : parseColor(ground);
    return Boolean(ink && fill && ink.a >= 0.5 && contrastRatio(ink, fill) >= 3);
  };
  // A control still in the browser's own look (a saved copy whose stylesheet was lost, a bare form
  // button): the user-agent sheet's outset border, or its grey fill in its 13.33px control font. It
  // is no look of the page's, so it is never copied.
  const browserDefault = (style) =>
    /^(outset|inset)$/.test(style.borderTopStyle) || (style.fontSize === "13.3333px" && style.backgroundColor === "rgb(239, 239, 239)");

  // What the page uses a colour for, by the words of its classes and attributes.
  const PRICE = /price|preis|prix|precio|preco|prezzo|cena|cen[ae]|fiyat|amount|cost/i;
  const SALE = /sale|discount|promo|badge|offer|deal|saving|rabatt|oferta|desconto|atlaide|-?off\b/i;
  const DISABLED = /disabled|inactive|unavailable|sold-?out/i;
  const CONTROL = "a, button, input, select, textarea, label, option, summary, [role=button], [role=link], [role=tab]";

  const words = (el) => {
    const cls = el.className && el.className.baseVal !== undefined ? el.className.baseVal : el.className;
    return `${cls} ${el.id} ${el.getAttribute("itemprop") || ""}`;
  };

  function roleOf(el, found) {
    for (let at = el, depth = 0; at && at !== document.body && depth < 2; at = at.parentElement, depth += 1) {
      if (found.price && (at === found.price || found.price.contains(at))) return "price";
      const said = words(at);
      if (PRICE.test(said)) return "price";
      if (SALE.test(said)) return "sale";
      if (DISABLED.test(said) || at.matches(":disabled, [aria-disabled=true]")) return "disabled";
    }
    return null;
  }

  // Characters of text the parsed page must hold for the model to be read from it alone.
  const PARSED_TEXT = 200;

  // Every rendered element of the page with text of its own or a control's box, with its computed style
  // and the colour it is seen on: what the model picks its components from.
  function survey() {
    const backdrops = new Map();
    const backdrop = (el) => {
      if (!el || el === document.documentElement) return "rgb(255, 255, 255)";
      if (backdrops.has(el)) return backdrops.get(el);
      const own = getComputedStyle(el).backgroundColor;
      const seen = opaque(parseColor(own)) ? own : backdrop(el.parentElement);
      backdrops.set(el, seen);
      return seen;
    };
    const finder = match.finder();
    const hit = (kind) => (finder ? finder.find(kind)?.element || null : null);
    const found = { price: hit("price"), buy: hit("buy_button"), grid: hit("grid_item"), image: hit("image") };
    found.cta = finder ? finder.callToAction()?.element || null : null;
    const all = [];
    for (const el of document.body.querySelectorAll("*")) {
      if (all.length >= 5000) break;
      if (state.ours(el) || /^(script|style|noscript|template|svg|path|br|option|title)$/i.test(el.tagName)) continue;
      const text = state.ownText(el);
      const control = el.matches("button, input[type=submit], input[type=button], a, [role=button]");
      if (!text && !state.parsed?.get(el) && !control) continue;
      const style = getComputedStyle(el);
      const box = el.getBoundingClientRect();
      if (box.width <= 0 || box.height <= 0 || style.visibility === "hidden" || Number(style.opacity) < 0.1) continue;
      all.push({ el, style, text, box, seen: backdrop(el), role: roleOf(el, found), control });
    }
    // The page as parsed, in its words as parsed, when it says enough to read its type from; else (a
    // page its scripts build) all of it now.
    const now = all.filter((item) => item.text || item.control);
    const parsed = state.parsed
      ? all
        .filter((item) => state.parsed.has(item.el))
        .map((item) => ({ ...item, text: state.parsed.get(item.el) }))
        .filter((item) => item.text || item.control)
      : now;
    const enough = parsed.reduce((sum, item) => sum + item.text.length, 0) >= PARSED_TEXT;
    const within = enough && parsed !== now ? (el) => state.parsed.has(el) : () => true;
    return { items: enough ? parsed : now, found, backdrop, within };
  }

  // The colour the page writes most of its text in: its body colour, never a forbidden role.
  function mostCommon(items, key) {
    const counts = new Map();
    for (const item of items) counts.set(key(item), (counts.get(key(item)) || 0) + Math.min(item.text.length, 200));
    let best = null;
    for (const [value, count] of counts) if (best === null || count > best[1]) best = [value, count];
    return best ? best[0] : null;
  }

  const typeKey = ({ style }) => [style.fontFamily, style.fontSize, style.fontWeight, style.color, style.lineHeight].join("|");
  const pick = (items, key = typeKey) => {
    const wanted = mostCommon(items, key);
    return wanted === null ? null : items.find((item) => key(item) === wanted);
  };

  const TYPE = {
    font: "fontFamily",
    size: "fontSize",
    weight: "fontWeight",
    color: "color",
    line: "lineHeight",
    transform: "textTransform",
    spacing: "letterSpacing",
    decoration: "textDecorationLine",
  };

  function typeOf(style) {
    return Object.fromEntries(Object.entries(TYPE).map(([name, prop]) => [name, style[prop]]));
  }

  // Corners, and a card's padding, as drawn (boxes.js): a copy looks like the element, not its stylesheet.
  const cornerOf = (style, rect) => (rect ? `${Math.round(drawnCorner(style, rect))}px` : style.borderTopLeftRadius.split(" ")[0]);
  const paddingOf = (style, card) =>
    card ? contentInset(card, style).map((side) => `${side}px`).join(" ") : `${style.paddingTop} ${style.paddingRight} ${style.paddingBottom} ${style.paddingLeft}`;

  // `card`: the element is a card, whose padding is read as its content sits (a control's as written).
  function boxOf(style, seen, rect, card) {
    const fill = fillOf(style);
    // A picture is copied only when its address survives as a value (a data: URL's ";" does not).
    const image = fill.image && fill.image === clean(fill.image) ? fill.image : null;
    return {
      bg: opaque(parseColor(style.backgroundColor)) ? style.backgroundColor : fill.color ? rgbText(fill.color) : "transparent",
      // The colour a gradient is seen as, for telling whether its label reads on it.
      ...(fill.image && fill.color ? { tone: rgbText(fill.color) } : {}),
      ...(image
        ? { image, imagesize: style.backgroundSize, imagepos: style.backgroundPosition, imagerepeat: style.backgroundRepeat }
        : {}),
      seen,
      border: `${style.borderTopWidth} ${style.borderTopStyle} ${style.borderTopColor}`,
      radius: cornerOf(style, rect),
      pad: paddingOf(style, card),
      height: `${Math.round(parseFloat(style.height) || 0)}px`,
    };
  }

  // The page's call to action by meaning (semantic.js: its buy button, else its main form's submit),
  // as the control that draws it (a filled, gradient, pictured or outlined box around the label); else
  // the most button-like filled control. Never a disabled or sale-coloured one.
  function primaryButton({ items, found }) {
    const drawnControl = (el) => {
      for (let at = el, depth = 0; at && depth < 3; at = at.parentElement, depth += 1) {
        if (filled(getComputedStyle(at)) && at.matches("button, a, input, [role=button]")) return at;
      }
      return el.matches("button, input, a, [role=button]") ? el : null;
    };
    if (found.cta) {
      const own = drawnControl(found.cta) || found.cta.querySelector("button, input[type=submit]");
      if (own && !own.matches(":disabled, [aria-disabled=true]") && !browserDefault(getComputedStyle(own))) return own;
    }
    let best = null;
    let bestScore = -1;
    for (const item of items) {
      const fill = fillOf(item.style).color;
      if (!item.control || item.role || !(opaque(fill) || filled(item.style)) || light(fill) || browserDefault(item.style)) continue;
      const said = `${words(item.el)} ${item.el.textContent}`;
      const score = (/cart|basket|bag|buy|korb|panier|carrito|carrinho|grozs|grozā|comprar|kaufen/i.test(said) ? 8 : 0) +
        (/primary/i.test(said) ? 4 : 0) + (/btn|button/i.test(said) ? 2 : 0) + (item.box.width * item.box.height > 2000 ? 1 : 0);
      if (score > bestScore) [best, bestScore] = [item.el, score];
    }
    return best;
  }

  // The element whose own text a control's label is (an icon and a <span> label in a button): its type
  // is the label's, as the score reads it too.
  function labelOf(control) {
    // An icon's text (a ligature icon font's "shopping_cart", a hidden glyph) is no label.
    const icon = (el) => Boolean(el.closest("[aria-hidden=true], i, svg")) || /icon|material|awesome|glyph/i.test(getComputedStyle(el).fontFamily);
    const walker = document.createTreeWalker(control, NodeFilter.SHOW_TEXT, {
      acceptNode: (node) => (node.textContent.trim() && !icon(node.parentElement) ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP),
    });
    return walker.nextNode() ? walker.currentNode.parentElement : control;
  }

  const hasBorder = (style) => parseFloat(style.borderTopWidth) > 0 && style.borderTopStyle !== "none";

  // A control drawn as a button: a button, or a link with a fill or a border and room around its text.
  function buttonLike(item) {
    if (item.el.matches("button, input[type=submit], input[type=button], [role=button]")) return true;
    const boxed = opaque(parseColor(item.style.backgroundColor)) || hasBorder(item.style);
    return item.el.matches("a") && boxed && parseFloat(item.style.paddingLeft) >= 4;
  }

  // The page's second button: outlined, or filled in a light colour with a border; else another of
  // its boxed buttons (a fill or a border, room around the text) that is neither the primary one nor
  // disabled. It is drawn as a link with that box, so a bare text button is no candidate.
  function secondaryButton({ items }, primary) {
    const boxed = ({ style }) => (opaque(parseColor(style.backgroundColor)) || hasBorder(style)) && parseFloat(style.paddingLeft) >= 4;
    const usable = items.filter(
      (item) => item.text && item.el !== primary && !item.role && buttonLike(item) && boxed(item) && !browserDefault(item.style),
    );
    const outlined = usable.filter((item) => {
      const bg = parseColor(item.style.backgroundColor);
      return hasBorder(item.style) && (!opaque(bg) || light(bg));
    });
    const key = (item) => typeKey(item) + boxOf(item.style, item.seen).pad;
    return (pick(outlined, key) || pick(usable, key))?.el || null;
  }

  // The page's own button when it has no boxed one of its own look: the look most of its buttons share.
  // A page whose every control is in the browser's look (a saved copy that lost its stylesheets, eBay's
  // search page) shows that look, and a pattern's button in it is one of the page's; a page with
  // buttons drawn as links (amazon.com's "All") has links for buttons. None at all: null.
  function ownButton({ items, within }) {
    const buttons = items.filter(
      (item) => item.text && !item.role && buttonLike(item) && !item.el.matches(":disabled, [aria-disabled=true]"),
    );
    const styled = buttons.filter((item) => !browserDefault(item.style));
    const boxed = ({ style }) => opaque(parseColor(style.backgroundColor)) || hasBorder(style);
    // A page that styles its fields but left its button bare lost the button's rule: madeButton.
    if (styled.some(boxed) || (!styled.length && controlBox(within))) return null;
    const key = (item) => typeKey(item) + boxOf(item.style, item.seen).pad + item.style.backgroundColor;
    return pick(styled.length ? styled : buttons, key)?.el || null;
  }

  // A native card: a box with a border or a fill of its own, card-sized, on a light colour; the one
  // around the anchor when there is one, else the page's most common one.
  function card(anchor, { backdrop, within }, surface, forbidden) {
    const isCard = (el) => {
      if (state.ours(el) || !/^(div|section|aside|article|fieldset|form|li)$/i.test(el.tagName)) return false;
      const style = getComputedStyle(el);
      const box = el.getBoundingClientRect();
      if (box.width < 120 || box.height < 40 || box.width >= innerWidth * 0.9) return false;
      // One line around a field (a search box) is a control, not a card to hold a pattern.
      if (box.height <= 64 && el.querySelector("input:not([type=hidden]), select, textarea")) return false;
      const bg = parseColor(style.backgroundColor);
      const own = hasBorder(style) || (opaque(bg) && style.backgroundColor !== backdrop(el.parentElement));
      return own && light(parseColor(backdrop(el))) && !forbidden.fill.has(backdrop(el)) && !SALE.test(words(el));
    };
    for (let el = anchor.parentElement, depth = 0; el && el !== document.body && depth < 6; el = el.parentElement, depth += 1) {
      if (isCard(el) && backdrop(el) === surface) return el;
    }
    const cards = [...document.body.querySelectorAll("div, section, aside, article, fieldset, form, li")]
      .filter(within).slice(0, 4000).filter(isCard);
    const key = (el) => {
      const s = getComputedStyle(el);
      return [s.borderTopLeftRadius, s.paddingTop, s.paddingLeft, backdrop(el)].join("|");
    };
    const counts = new Map();
    for (const el of cards) counts.set(key(el), (counts.get(key(el)) || 0) + 1);
    // A card on the anchor's own background first (it sits in the page's flow unchanged), then any.
    const rank = (el) => (backdrop(el) === surface ? 1e6 : 0) + counts.get(key(el));
    let best = null;
    for (const el of cards) if (!best || rank(el) > rank(best)) best = el;
    return best;
  }

  // A real picture from the page for an advert: another product's (a listing card's), else the product's own.
  function picture({ found, within }) {
    // A product's picture: loaded, of some size, and no wider than 2.5 times its height (a logo or a
    // banner strip is wider: mobly.com.br's 650 x 126 logo was taken for an advert's product).
    const usable = (img) =>
      img && img.currentSrc && img.complete && img.naturalWidth >= 80 && img.naturalHeight >= 60 &&
      img.naturalWidth <= img.naturalHeight * 2.5 && img.getBoundingClientRect().width >= 60;
    // The grid's picture furthest from its first card, where an advert among the cards goes: the same
    // cover twice side by side gave books.toscrape.com's advert away.
    const cells = found.grid ? [...found.grid.parentElement.children].reverse() : [];
    const inGrid = cells.map((cell) => [...cell.querySelectorAll("img")].find(usable)).find(Boolean);
    const own = found.image && found.image.tagName === "IMG" ? found.image : found.image?.querySelector("img");
    const decor = (img) => /logo|icon|sprite|banner/i.test(`${img.currentSrc.slice(0, 200)} ${img.className} ${img.id} ${img.alt}`) ||
      Boolean(img.closest("[class*=logo i], [id*=logo i], header, nav, footer"));
    const any = [...document.images].filter((img) => within(img) && !state.ours(img) && usable(img) && !decor(img));
    // Another product's picture: one that links to another page (a related item; a gallery's
    // thumbnails link to their own picture files or nowhere). The product's own twice beside itself
    // gave opencart's advert away.
    const here = location.href.split("#")[0];
    const elsewhere = (img) => {
      const link = img.closest("a[href]");
      const target = link ? link.href.split("#")[0] : "";
      return Boolean(target) && target !== here && !/\.(jpe?g|png|webp|gif|avif)(\?|$)/i.test(target);
    };
    return inGrid || any.find((img) => img !== own && elsewhere(img)) || (usable(own) ? own : null) || any[0] || null;
  }

  // One of the page's grid cells as a card drawn among them shows it: the cell's body (the cell, or the
  // element it wraps alone, books.toscrape.com's <li> around its <article>) with its box where it has one,
  // its alignment, where that body sits in the cell, and the look of the cell's product name.
  function tileOf(cell, backdrop) {
    let body = cell;
    const chain = [cell];
    while (body.children.length === 1 && !body.firstElementChild.matches("a, img, picture")) {
      body = body.firstElementChild;
      chain.push(body);
    }
    const boxed = (el) => hasBorder(getComputedStyle(el)) || backdrop(el) !== backdrop(el.parentElement);
    const frame = chain.find(boxed) || body;
    const [outer, inner] = [cell.getBoundingClientRect(), frame.getBoundingClientRect()];
    const inset = [inner.top - outer.top, outer.right - inner.right, outer.bottom - inner.bottom, inner.left - outer.left];
    const named = (el) => el.textContent.trim().length >= 8 && el.getClientRects().length;
    const holder = [...cell.querySelectorAll("a")].find(named) || [...cell.querySelectorAll("h2, h3, h4")].find(named);
    // The element whose own text the name is (saucedemo.com's link wraps the styled <div> of its name).
    const words = holder && document.createTreeWalker(holder, NodeFilter.SHOW_TEXT, {
      acceptNode: (node) => (node.textContent.trim() ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP),
    });
    const name = words && words.nextNode() ? words.currentNode.parentElement : holder;
    // A cell whose picture stands beside its words (saucedemo.com's) is drawn so: the picture at the
    // card's edge, the words kept in from the others by the card's padding.
    const picture = [...cell.querySelectorAll("img")].find((img) => img.getClientRects().length);
    const beside = Boolean(picture && name && picture.getBoundingClientRect().right <= name.getBoundingClientRect().left + 1);
    return {
      frame,
      beside,
      align: getComputedStyle(frame).textAlign,
      margin: inset.map((side) => `${Math.max(0, Math.round(side))}px`).join(" "),
      tall: `${Math.round(inner.height)}px`,
      name: name ? typeOf(getComputedStyle(name)) : null,
    };
  }

  // The grid cell of the page's listing that holds the anchor, when no bordered or filled box lies between
  // them (a box there is the card to copy).
  function cellAround(anchor, { found }) {
    const grid = found.grid && found.grid.parentElement;
    if (!grid) return null;
    for (let el = anchor.parentElement; el && el !== grid; el = el.parentElement) {
      const style = getComputedStyle(el);
      if (hasBorder(style) || opaque(parseColor(style.backgroundColor))) return null;
      if (el.parentElement === grid) return el;
    }
    return null;
  }

  // The page's own frame around a grid picture (books.toscrape.com's thumbnail border), at its height.
  function pictureFrame(img, align, beside) {
    const style = getComputedStyle(img);
    return {
      ...boxOf(style, style.backgroundColor),
      height: style.height,
      sizing: style.boxSizing,
      inline: align === "center" && !beside ? "auto" : "0px",
      below: beside ? "0px" : "8px",
    };
  }

  // Characters of the page's prose around the anchor that make a neighbourhood to read its type from.
  const NEAR_TEXT = 120;
  // How much more prose than the neighbourhood a box around it may hold for its headings to be near.
  const NEAR_REACH = 3;

  // The nearest box around the anchor holding enough of the page's prose: its text is set as the
  // pattern's should be (a shop card that sets its own typeface on a page whose body sets none, a buy
  // box whose type is smaller than the page's articles). Null: read the whole page.
  function neighbourhood(anchor, prose) {
    for (let el = anchor.parentElement; el && el !== document.body; el = el.parentElement) {
      const inside = prose.filter((item) => el.contains(item.el));
      if (inside.reduce((sum, item) => sum + item.text.length, 0) >= NEAR_TEXT) return el;
    }
    return null;
  }

  // The page's type on one background: body, muted, bold, heading and link text, and a text button;
  // each read first from the anchor's neighbourhood, then from the whole page.
  function typeOn(page, surface, forbidden, anchor) {
    const { items } = page;
    // Text that can be seen on the colour behind it: white letters "on white" stand on a picture the
    // colour does not show (amazon.com's banner), and copied onto a card they vanish.
    const seen = (item) => {
      const ink = parseColor(item.style.color);
      const ground = parseColor(item.seen);
      return Boolean(ink && ground && ink.a >= 0.5 && contrastRatio(ink, ground) >= 1.5);
    };
    const prose = items.filter(
      (item) => item.text && !item.role && item.seen === surface && !forbidden.text.has(item.style.color) && !item.el.closest(CONTROL) &&
        !item.el.closest("h1, nav, header, footer") && seen(item),
    );
    const size = (item) => parseFloat(item.style.fontSize);
    const weight = (item) => Number(item.style.fontWeight) || 400;
    const near = anchor ? neighbourhood(anchor, prose) : null;
    // The neighbourhood's own elements when it has any of the kind, else the page's.
    const local = (list) => {
      const inside = near ? list.filter((item) => near.contains(item.el)) : [];
      return inside.length ? inside : list;
    };
    const regular = prose.filter((item) => weight(item) < 600 && size(item) >= 12 && neutral(parseColor(item.style.color)));
    const text = pick(local(regular)) || pick(local(prose));
    if (!text) return null;
    const base = size(text);
    const ground = luminance(parseColor(surface) || { r: 255, g: 255, b: 255 });
    const contrast = (item) => Math.abs(luminance(parseColor(item.style.color) || { r: 0, g: 0, b: 0 }) - ground);
    // Muted text is still text to read: a grey lighter than that (books.toscrape.com's #ccc of a
    // separator) is a decoration's colour, and a sentence drawn in it stood out as faded.
    const muted = pick(local(regular.filter((item) => size(item) <= base + 1 && contrast(item) < contrast(text) - 20 && contrast(item) >= 80)));
    const bold = (item) => weight(item) >= 600 || /^H[2-5]$/.test(item.el.tagName);
    const strong = pick(
      local(prose.filter((item) => weight(item) >= 600 && size(item) >= base - 1 && size(item) <= base * 1.4 && neutral(parseColor(item.style.color)))),
    );
    // A heading in a buy box is sized as the headings near it: the nearest box around the anchor that
    // holds one (not the page's article headings, 26 px over a buy box's 14 px text).
    const headings = prose.filter((item) => bold(item) && size(item) > base * 1.1 && size(item) <= 30);
    // Near = in the neighbourhood, or in a box around it that holds little more of the page's prose (a
    // box that holds the page's articles too is no longer near). None near: its bold text.
    const textIn = (el) => prose.reduce((sum, item) => sum + (el.contains(item.el) ? item.text.length : 0), 0);
    const reach = near ? NEAR_REACH * textIn(near) : 0;
    let title = null;
    for (let el = near; !title && el && el !== document.body && textIn(el) <= reach; el = el.parentElement) {
      title = pick(headings.filter((item) => el.contains(item.el)));
    }
    title = title || (anchor ? null : pick(headings));
    // A link in a heading has the heading's type (pretix's event name over every checkout step), and
    // an opt-out drawn in it stood out at 36 px. A link drawn as a button has a button's type: pretix's
    // "Go back" (17.5 px) made its opt-outs stand out beside its 14 px text.
    const links = items.filter(
      (item) => item.text && item.el.matches("a") && !item.role && item.seen === surface && !forbidden.text.has(item.style.color) &&
        !item.el.closest("h1, h2, h3, h4, h5, h6, nav, header, footer") && !buttonLike(item) && seen(item),
    );
    const link = pick(links.filter((item) => !neutral(parseColor(item.style.color)))) || pick(links);
    return {
      text: typeOf(text.style),
      muted: typeOf((muted || text).style),
      strong: typeOf((strong || text).style),
      title: typeOf((title || strong || text).style),
      link: typeOf((link || text).style),
    };
  }

  // The box the page gives its own form controls (fields, selects, buttons): the most common radius,
  // padding and height among those it styled itself.
  function controlBox(within) {
    const boxes = [...document.body.querySelectorAll("input, select, button")].filter(within).slice(0, 400).flatMap((el) => {
      if (state.ours(el) || /^(hidden|checkbox|radio|range|color|file|image)$/.test(el.type)) return [];
      const style = getComputedStyle(el);
      const box = el.getBoundingClientRect();
      const boxed = hasBorder(style) || opaque(parseColor(style.backgroundColor));
      // One line of a control (a field, a button): a many-line box is no measure of a button's height.
      return box.width > 0 && box.height >= 20 && box.height <= 64 && boxed && !browserDefault(style) ? [style] : [];
    });
    const key = (style) => [style.borderTopLeftRadius, style.paddingTop, style.paddingLeft, style.height].join("|");
    const counts = new Map();
    for (const style of boxes) counts.set(key(style), (counts.get(key(style)) || 0) + 1);
    let best = null;
    for (const style of boxes) if (!best || counts.get(key(style)) > counts.get(key(best))) best = style;
    return best;
  }

  // No usable button of the page's own (none, a disabled or a browser-default one): a finished button
  // made of the page's parts, never the browser's: its type (font stack and size, in bold), a fill in
  // its accent (a coloured link, else a coloured strip's fill, else its body text colour) with white or
  // body-coloured letters, the radius and padding of its own form controls or cards, and its controls' height.
  function madeButton(type, onFill, frame, forbidden, within) {
    const link = parseColor(type.link.color);
    const fill = link && !neutral(link) && !forbidden.fill.has(type.link.color) ? type.link.color : onFill ? onFill.seen : type.text.color;
    const ink = luminance(parseColor(fill) || { r: 0, g: 0, b: 0 }) > 160 ? type.text.color : "rgb(255, 255, 255)";
    const controls = controlBox(within);
    const box = controls || (frame ? getComputedStyle(frame) : null);
    const pad = box ? `${box.paddingTop} ${box.paddingRight} ${box.paddingBottom} ${box.paddingLeft}` : "8px 16px";
    return {
      ...type.text,
      weight: Number(type.strong.weight) >= 600 ? type.strong.weight : "700",
      color: ink,
      decoration: "none",
      bg: fill,
      seen: fill,
      border: `1px solid ${fill}`,
      radius: box ? box.borderTopLeftRadius : "4px",
      pad: parseFloat(box?.paddingLeft) >= 8 ? pad : "8px 16px",
      // A control's height; a card's is no button's (amazon.com's 209 px card made a 209 px button).
      height: controls && parseFloat(controls.height) >= 28 ? `${Math.round(parseFloat(controls.height))}px` : "auto",
    };
  }

  // The copied card as drawn where the pattern goes (on `outside`, in the card's colour `surface`). In
  // the page's flow with neither a border nor a fill unlike its ground it shows no box, and its padding
  // would only set the pattern in from the page's column (elkor.lv's gift wrap, 20 px right of the sizes
  // above it); a card that floats over the page (a pop-up) is always seen as one.
  function drawnCard(frame, surface, outside, inFlow) {
    const style = getComputedStyle(frame);
    const box = boxOf(style, surface, frame.getBoundingClientRect(), frame);
    const shows = !inFlow || hasBorder(style) || surface !== outside;
    return { ...box, bg: surface, ...(shows ? {} : { pad: "0px" }) };
  }

  // `inline`: the pattern has no card of its own and sits on the anchor's background; `inFlow`: it is
  // placed among the page's elements, not over them; `cell`: the grid cell (a disguised ad in the
  // page's product grid) it is drawn as one more of.
  function model(anchor, inline, inFlow, cell) {
    const page = survey();
    const { items, backdrop } = page;
    const special = anchor.matches("button, a, input, select, h1, h2, h3, h4, h5, h6");
    const context = (special ? anchor.parentElement : anchor) || document.body;
    const bodyColour = mostCommon(items.filter((item) => !item.role && !item.control), (item) => item.style.color);
    // Colours seen on prices, sale badges or disabled controls (their text and their fills), unless
    // they are the page's body colour or its ground.
    const ground = mostCommon(items, (item) => item.seen);
    const marked = items.filter((item) => item.role);
    const forbidden = {
      text: new Set(marked.map((item) => item.style.color).filter((c) => c !== bodyColour)),
      fill: new Set(marked.map((item) => item.style.backgroundColor).filter((c) => c !== ground && opaque(parseColor(c)))),
    };
    const outside = backdrop(context);
    const tile = !inline && cell ? tileOf(cell, backdrop) : null;
    // Anchored inside one of a listing's cells with no box of its own around the anchor (books.toscrape.com's
    // "Add to basket"), a pattern placed there is drawn in that cell's body, as its content stands: the
    // page's most common card (its sidebar's grey box) inside a product cell was no part of the page. A
    // pop-up floats over the page and keeps a card.
    const inCell = !tile && inFlow ? cellAround(anchor, page) : null;
    const held = inCell ? tileOf(inCell, backdrop) : null;
    const body = tile || held;
    const frame = inline ? null : body ? body.frame : card(anchor, page, outside, forbidden);
    const surface = frame ? backdrop(frame) : outside;
    const fallback = typeOf(getComputedStyle(context));
    const type = typeOn(page, surface, forbidden, anchor) || typeOn(page, outside, forbidden, anchor) ||
      { text: fallback, muted: fallback, strong: fallback, title: fallback, link: fallback };
    // Words on a coloured strip: words of its own (an icon's box holds only the white space around its
    // glyph: pretix's step circles, read as white text on purple, made the "-15%" a chip the page never shows).
    const onFill = pick(
      items.filter(
        (item) => item.text.trim() && !item.role && item.seen !== surface && !light(parseColor(item.seen)) && !forbidden.fill.has(item.seen) &&
          !item.el.matches("button, input, a"),
      ),
    );
    const primary = primaryButton(page);
    const secondary = secondaryButton(page, primary);
    // The call to action's type is its label's; another control's is its own.
    const control = (el, label = el) =>
      el ? { ...typeOf(getComputedStyle(label)), ...boxOf(getComputedStyle(el), backdrop(el), el.getBoundingClientRect()) } : null;
    const copied = control(primary, primary && labelOf(primary));
    const own = control(ownButton(page));
    const button = copied && readable(copied, surface)
      ? copied
      : own && readable(own, surface)
        ? own
        : madeButton(type, onFill, frame, forbidden, page.within);
    const second = control(secondary);
    // An offer's badge ("-15%") is drawn as the page draws its own: its sale badge (the one role a
    // discount may borrow), else its text on one of its coloured strips, else its bold text. A chip in
    // black or grey (mobly.com.br's footer) or in its button's colours (books.toscrape.com) is a badge
    // the page never shows.
    const sale = pick(
      items.filter((item) => item.role === "sale" && item.text && item.text.length <= 16 && item.seen !== ground && item.seen !== surface),
    );
    const chip = { border: "0px none transparent", radius: button.radius, pad: "4px 12px", height: "auto" };
    const owned = sale && opaque(parseColor(sale.style.backgroundColor));
    const badge = sale
      ? { ...typeOf(sale.style), ...(owned ? boxOf(sale.style, sale.seen, sale.box) : { bg: sale.seen, seen: sale.seen, ...chip }) }
      : onFill && !neutral(parseColor(onFill.seen))
        ? { ...typeOf(onFill.style), bg: onFill.seen, seen: onFill.seen, ...chip }
        : { ...type.strong, bg: "transparent", seen: surface, border: "0px none transparent", radius: "0px", pad: "0px", height: "auto" };
    const shown = picture(page);
    return {
      surface,
      ...type,
      badge,
      primary: button,
      secondary: second && readable(second, surface) ? second : null,
      card: frame ? drawnCard(frame, surface, outside, inFlow) : null,
      // Drawn as a cell or in one, card or line, the pattern takes its body's alignment; in a centred
      // cell its rows of choices and its icon line are centred too (`--body-justify`, for the templates).
      body: body ? { align: body.align, justify: body.align === "center" ? "center" : "flex-start" } : null,
      picture: shown ? shown.currentSrc : null,
      cell: tile
        ? {
          margin: tile.margin,
          tall: tile.tall,
          flow: tile.beside ? "row" : "column",
          // Beside its picture, the words keep the card's padding and the card none.
          pad: tile.beside ? "0px" : "var(--card-pad)",
          words: tile.beside ? "var(--card-pad)" : "0px",
          name: tile.name || type.text,
          frame: shown ? pictureFrame(shown, tile.align, tile.beside) : null,
        }
        : null,
    };
  }

  const clean = (value) => String(value || "").replace(/[{}<>;\\]/g, "");

  function vars(name, record) {
    return Object.entries(record || {}).map(([key, value]) => [`--${name}-${key}`, clean(value)]);
  }

  // Each component of the model as a rule any template part can take by `data-look`: the part is then
  // drawn as a copy of that native element (its type, colours, box). Templates set only layout.
  const TYPE_RULE =
    "font-family:var(--N-font);font-size:var(--N-size);font-weight:var(--N-weight);line-height:var(--N-line);color:var(--N-color);" +
    "text-transform:var(--N-transform);letter-spacing:var(--N-spacing);text-decoration-line:var(--N-decoration)";
  const BOX_RULE =
    "background:var(--N-bg);background-image:var(--N-image);background-size:var(--N-imagesize);background-position:var(--N-imagepos);" +
    "background-repeat:var(--N-imagerepeat);border:var(--N-border);border-radius:var(--N-radius);padding:var(--N-pad);box-sizing:border-box";
  const RULES = [
    ...["text", "muted", "strong", "title", "link"].map((name) => `[data-look~=${name}]{${TYPE_RULE.replaceAll("N", name)}}`),
    // A link choice is one box, so its centre is on it, as a click aims: a block in the line, which wraps
    // inside its card (unbroken, a long "No thanks" ran out of books.toscrape.com's narrow tiles). No
    // weight of its own (:where), so a template's layout for its links wins.
    "a[data-look]{cursor:pointer}",
    ":where(a[data-look]){display:inline-block;max-width:100%}",
    `[data-look~=badge]{${TYPE_RULE.replaceAll("N", "badge")};${BOX_RULE.replaceAll("N", "badge")};display:inline-block}`,
    ...["primary", "secondary"].map(
      (name) =>
        `[data-look~=${name}]{${TYPE_RULE.replaceAll("N", name)};${BOX_RULE.replaceAll("N", name)};` +
        `display:inline-block;min-height:var(--${name}-height);cursor:pointer;text-align:center}`,
    ),
    "[data-part=frame]{text-align:var(--body-align,start)}",
    `[data-look~=card]{${BOX_RULE.replaceAll("N", "card")}}`,
    "img[data-look~=picture]{display:block;width:100%;object-fit:contain}",
  ].join("\n");
  // A card drawn as one of the page's grid cells: placed, aligned and sized as the cell's body, its
  // product name in the cell's name look, its picture in the cell's picture frame.
  const CELL_RULES = [
    "[data-look~=card]{margin:var(--cell-margin);min-height:var(--cell-tall);padding:var(--cell-pad)}",
    // Inside the frame, so the template's own layout of the same parts gives way.
    "[data-part=frame] [data-look~=tile]{flex-direction:var(--cell-flow)}",
    "[data-part=frame] [data-look~=words]{padding:var(--cell-words)}",
    `[data-look~=name]{${TYPE_RULE.replaceAll("N", "name")}}`,
    "[data-look~=card] img[data-look~=picture]{width:auto;max-width:100%;height:var(--frame-height);box-sizing:var(--frame-sizing);" +
      "background:var(--frame-bg);border:var(--frame-border);border-radius:var(--frame-radius);padding:var(--frame-pad);" +
      "margin-left:var(--frame-inline);margin-right:var(--frame-inline);margin-bottom:var(--frame-below);flex:none}",
  ].join("\n");

  // The page's look as rules over named values (`values`, custom property names; draw.js puts them in,
  // so no custom property is left for a page's @property registration to reach), and the address of
  // the page's picture the pattern's <img> shows. A component the page lacks falls back to its nearest kin: no
  // second button, a link; no usable primary button, one made of the page's parts (madeButton).
  function paint(anchor, style, inline, inFlow, cell) {
    const look = model(anchor, inline, inFlow, cell);
    const bare = { bg: "transparent", border: "0px none transparent", radius: "0px", pad: "0px", height: "auto" };
    const list = [
      ["--surface", clean(look.surface)],
      ["--font", clean(look.text.font)],
      ["--accent", clean(style.accent || look.link.color)],
      ["--width", style.max_width && !look.cell ? `${style.max_width}px` : "none"],
      ...["text", "muted", "strong", "title", "link"].flatMap((name) => vars(name, look[name])),
      ...vars("badge", look.badge),
      ...vars("primary", look.primary),
      ...vars("secondary", look.secondary || { ...look.link, ...bare }),
      ...vars("card", look.card || { ...bare, bg: look.surface }),
      ...vars("body", look.body),
    ];
    if (!look.cell) return { css: RULES, values: Object.fromEntries(list), picture: look.picture };
    const { name, frame, ...placed } = look.cell;
    list.push(...vars("cell", placed), ...vars("name", name), ...vars("frame", frame));
    return { css: `${RULES}\n${CELL_RULES}`, values: Object.fromEntries(list), picture: look.picture };
  }

  helper.look = { paint, model };
})();
