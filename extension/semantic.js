// Semantic anchors: a shop page's own elements found by meaning, not by selectors written for one site.
//
// One function and nothing else: no side effects of its own, no page-visible globals. The extension
// loads this file as one more content script (isolated world); `susbench injections anchor` evaluates
// the same file into an isolated world of the page it measures.
//
//   const anchors = semanticAnchors(document, vocabulary, { isOurs });
//   anchors.find("price")  // {element, rule} | null
//
// `vocabulary` is extension/semantic-vocabulary.yaml as JSON; `isOurs(el)` marks injected nodes,
// which are never returned. Per element kind the rules are tried in this order and the first rule
// with a usable candidate wins: schema.org Product ("microdata", "json-ld"), accessible role and
// name ("role"), multilingual visible text ("text"), common class and id words ("vocabulary").

/* exported semanticAnchors */
function semanticAnchors(doc, vocabulary, options) {
  "use strict";
  const isOurs = (options && options.isOurs) || (() => false);
  const win = doc.defaultView;
  const KINDS = ["buy_button", "price", "title", "image", "grid_item", "checkout_button", "options"];
  const CONTROLS =
    "a[href], button, input:not([type=hidden]), select, textarea, summary, [contenteditable=true], " +
    "[role=button], [role=link], [role=checkbox], [role=radio], [role=switch], [role=tab], [role=menuitem], " +
    "[role=option], [role=combobox], [role=spinbutton], [role=slider], [role=textbox]";
  const CLICKABLE = "a[href], button, input[type=submit], input[type=button], input[type=image], [role=button], [role=link]";
  const OPTION_CONTROLS = "select, input[type=number], input[type=radio], [role=spinbutton], [role=radiogroup], [role=listbox], [role=combobox]";
  const PRODUCT_TYPES = /^(Product|ProductGroup|IndividualProduct|ProductModel|Book|Vehicle|Car)$/i;
  const MIN_SLOT_WIDTH = 200;
  // Where a non-modal pop-up may sit in the viewport, tried in this order: the corners and edge
  // middles, then down the right and left edges (`top` as a share of the viewport's height).
  const CORNERS = ["bottom right", "bottom left", "top right", "top left", "middle right", "middle left", "bottom center", "top center"];
  const EDGE_STEPS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7];

  // ---- geometry and visibility ----
  const up = (el) => el.parentElement || (el.getRootNode() instanceof win.ShadowRoot ? el.getRootNode().host : null);
  const style = (el) => win.getComputedStyle(el);

  function overlap(a, b) {
    const width = Math.min(a.right, b.right) - Math.max(a.left, b.left);
    const height = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    return width > 0 && height > 0 ? { width, height } : null;
  }

  function gap(a, b) {
    const dx = Math.max(0, a.left - b.right, b.left - a.right);
    const dy = Math.max(0, a.top - b.bottom, b.top - a.bottom);
    return Math.hypot(dx, dy);
  }

  // Drawn with a size, not hidden by CSS, on the page and not clipped away by an ancestor. Scroll
  // containers do not count as clipping: what they hide can be scrolled to.
  function shows(el) {
    if (!el || !el.isConnected) return false;
    if (!el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) return false;
    const box = el.getBoundingClientRect();
    if (box.width < 2 || box.height < 2 || box.right + win.scrollX <= 0 || box.bottom + win.scrollY <= 0) return false;
    for (let a = up(el); a && a !== doc.body && a !== doc.documentElement; a = up(a)) {
      const s = style(a);
      const clips = [s.overflowX, s.overflowY].some((value) => value === "hidden" || value === "clip");
      if (clips) {
        const seen = overlap(box, a.getBoundingClientRect());
        if (!seen || seen.width < 2 || seen.height < 2) return false;
      }
    }
    return true;
  }

  const visible = (el) => !isOurs(el) && shows(el);

  // Whole: no ancestor that clips what overflows it (a carousel's track, a fixed-height row) cuts
  // any of it away (a scrolling box does not: what it holds is scrolled to), and no card around it
  // (a bordered or filled box narrower than the page) is too small to hold it: saucedemo.com's
  // listing cards are 240 px tall whatever they hold, and their border ran through a pattern's last
  // line. A page's own element may show in part; a drawn pattern is either all there, inside the
  // boxes it is placed in, or not placed there, since a strip of a card is no pattern a person could read.
  function whole(el) {
    const box = el.getBoundingClientRect();
    for (let a = up(el); a && a !== doc.body && a !== doc.documentElement; a = up(a)) {
      const s = style(a);
      const clipsX = s.overflowX === "hidden" || s.overflowX === "clip";
      const clipsY = s.overflowY === "hidden" || s.overflowY === "clip";
      const around = a.getBoundingClientRect();
      const inside = box.top >= around.top + (parseFloat(s.borderTopWidth) || 0) - 0.5 && box.bottom <= around.bottom - (parseFloat(s.borderBottomWidth) || 0) + 0.5;
      if (edged(s) && around.width < win.innerWidth * 0.9 && !inside) return false;
      if (!clipsX && !clipsY) continue;
      const seen = overlap(box, around);
      if (!seen || (clipsX && seen.width < box.width - 2) || (clipsY && seen.height < box.height - 2)) return false;
    }
    return true;
  }

  // A box a person sees the edges of: a border, or a fill.
  function edged(s) {
    const sides = ["Top", "Right", "Bottom", "Left"];
    const bordered = sides.some((side) => parseFloat(s[`border${side}Width`]) > 0 && !["none", "hidden"].includes(s[`border${side}Style`]));
    const filled = !/^(transparent|rgba\(.*,\s*0\))$/.test(s.backgroundColor);
    return bordered || filled;
  }

  // Site chrome (navigation, banner, footer, dialogs) never holds the product's own elements.
  function inChrome(el) {
    const chrome = "nav, [role=navigation], [role=banner], [role=contentinfo], dialog, [role=dialog], [aria-modal=true]";
    if (el.closest(`${chrome}, [class*=breadcrumb i], [id*=breadcrumb i]`)) return true;
    const edge = el.closest("header, footer");
    return Boolean(edge && !edge.parentElement?.closest("article, aside, main, section, [role=main]"));
  }

  // ---- text ----
  const norm = (text) => String(text || "").replace(/\s+/g, " ").trim().toLowerCase();
  const bare = (text) => norm(text).replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "");
  const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const words = (entry, key) => Object.values((entry && entry[key]) || {}).flat().map((w) => norm(w));

  function nameOf(el) {
    const label = el.getAttribute("aria-label");
    if (label && label.trim()) return label;
    const ids = el.getAttribute("aria-labelledby");
    if (ids) return ids.split(/\s+/).map((id) => doc.getElementById(id)?.textContent || "").join(" ");
    if (el.matches("input[type=submit], input[type=button], input[type=reset]")) return el.value;
    if (el.matches("input[type=image]")) return el.alt || el.value;
    if (el.labels && el.labels.length) return [...el.labels].map((l) => l.textContent).join(" ");
    const text = el.textContent.trim();
    if (text) return text;
    return el.getAttribute("title") || el.querySelector("img[alt]")?.alt || "";
  }

  // A label matcher: the text starts with a phrase (then at most `slack` more characters) or is one
  // of the exact words.
  function labelMatcher(entry) {
    const slack = entry.slack ?? vocabulary.slack;
    const phrases = words(entry, "names").map(escape);
    const exact = words(entry, "exact").map(escape);
    const starts = phrases.length ? new RegExp(`^(?:${phrases.join("|")})(?![\\p{L}\\p{N}])`, "u") : null;
    const whole = exact.length ? new RegExp(`^(?:${exact.join("|")})$`, "u") : null;
    return (text) => {
      const t = bare(text);
      if (!t) return false;
      const m = starts && starts.exec(t);
      return Boolean((m && t.length - m[0].length <= slack) || (whole && whole.test(t)));
    };
  }

  function attributeSelector(entry) {
    const parts = (entry.attributes || []).map((w) => {
      const v = JSON.stringify(w);
      return `[id*=${v} i], [class*=${v} i], [name*=${v} i], [data-testid*=${v} i]`;
    });
    return parts.join(", ") || null;
  }

  function queryAll(selector, root = doc) {
    if (!selector) return [];
    try {
      return [...root.querySelectorAll(selector)];
    } catch {
      return []; // a vocabulary word that makes an invalid selector simply matches nothing
    }
  }

  // Every text node of the page's body with its element (scripts and styles left out).
  function textNodes(test) {
    const out = [];
    if (!doc.body) return out;
    const walker = doc.createTreeWalker(doc.body, win.NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const el = node.parentElement;
      if (el && !el.closest("script, style, template, noscript") && test(node.data)) out.push(el);
    }
    return out;
  }

  // ---- amounts ("1.299,00", "23.450", "$87.11"): every value a written number may stand for ----
  const AMOUNT = /\d{1,3}(?:[.,'\u00a0\u202f ]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,3})?/g;

  function readings(token) {
    const digits = String(token).replace(/[\s\u00a0\u202f']/g, "");
    const values = new Set([Number(digits.replace(/[.,]/g, "")).toFixed(2)]);
    const last = Math.max(digits.lastIndexOf("."), digits.lastIndexOf(","));
    if (last >= 0) {
      const whole = digits.slice(0, last).replace(/[.,]/g, "");
      values.add(Number(`${whole}.${digits.slice(last + 1)}`).toFixed(2));
    }
    return values;
  }

  function showsAmount(text, value) {
    const wanted = readings(value);
    return (String(text).match(AMOUNT) || []).some((token) => [...readings(token)].some((v) => wanted.has(v)));
  }

  // The smallest visible elements whose short text shows `value` (prices split over spans included).
  function showing(value) {
    const found = new Set();
    for (const el of textNodes((t) => /\d/.test(t))) {
      if (el.closest("del, s, strike")) continue; // a struck-out price is the old one
      for (let a = el, depth = 0; a && depth < 4 && a !== doc.body; a = a.parentElement, depth += 1) {
        const text = a.textContent;
        if (text.length > 48) break;
        if (showsAmount(text, value)) {
          if (visible(a)) found.add(a);
          break;
        }
      }
    }
    return [...found];
  }

  // ---- schema.org ----
  const once = (fn) => {
    let cache;
    return () => (cache === undefined ? (cache = fn()) : cache);
  };

  const productScopes = once(() =>
    queryAll("[itemscope][itemtype]").filter((el) =>
      el.getAttribute("itemtype").split(/\s+/).some((t) => PRODUCT_TYPES.test(t.replace(/^.*[/#]/, ""))),
    ),
  );
  const inProduct = (el) => productScopes().some((scope) => scope.contains(el));

  // Properties of the product itself (a brand's or a seller's `name` has its own item scope).
  function itemprops(prop, own) {
    return productScopes().flatMap((scope) =>
      queryAll(`[itemprop~=${prop}]`, scope).filter((el) => !own || up(el)?.closest("[itemscope]") === scope),
    );
  }

  const jsonLdProducts = once(() => {
    const products = [];
    const visit = (node) => {
      if (Array.isArray(node)) return node.forEach(visit);
      if (!node || typeof node !== "object") return undefined;
      const types = [].concat(node["@type"] || []).map((t) => String(t).replace(/^.*[/#:]/, ""));
      if (types.some((t) => PRODUCT_TYPES.test(t))) products.push(node);
      ["@graph", "mainEntity", "mainEntityOfPage", "hasVariant"].forEach((key) => visit(node[key]));
      return undefined;
    };
    for (const script of queryAll('script[type="application/ld+json" i]')) {
      try {
        visit(JSON.parse(script.textContent));
      } catch {
        // a broken JSON-LD block is the page's problem, not an anchor
      }
    }
    return products;
  });

  const ldValues = (key) =>
    jsonLdProducts().flatMap((product) => [].concat(product[key] || [])).map((v) => (v && typeof v === "object" ? v.url || v["@id"] || v.price : v));
  const ldPrices = () =>
    jsonLdProducts()
      .flatMap((p) => [].concat(p.offers || []))
      .flatMap((offer) => [offer, ...[].concat(offer.offers || []), ...[].concat(offer.priceSpecification || [])])
      .flatMap((offer) => [offer.price, offer.lowPrice])
      .filter((v) => v !== undefined && v !== null && /\d/.test(String(v)));

  // The deepest visible elements whose whole text is `text` (or contains it, within a little slack).
  function withText(text) {
    const want = bare(text);
    if (want.length < 3) return [];
    const found = new Set();
    for (const el of textNodes((t) => {
      const b = bare(t);
      return b.length > 1 && want.includes(b);
    })) {
      for (let a = el; a && a !== doc.body; a = a.parentElement) {
        const have = bare(a.textContent);
        if (have.length > want.length * 1.3 + 12) break;
        if (have.includes(want)) {
          if (visible(a)) found.add(a);
          break;
        }
      }
    }
    return [...found];
  }

  const fileName = (url) => String(url || "").split(/[?#]/)[0].split("/").pop().toLowerCase();

  function imagesOf(urls) {
    const names = urls.map(fileName).filter((name) => name.length >= 5);
    if (!names.length) return [];
    return queryAll("img").filter((img) => {
      const sources = [img.currentSrc, img.src, img.srcset, img.dataset.src, img.dataset.srcset, img.dataset.oldHires]
        .join(" ")
        .toLowerCase();
      return names.some((name) => sources.includes(name));
    });
  }

  // ---- repeated cards (product grids) ----
  // The smallest ancestors of the markers that sit beside at least two others holding a marker.
  function repeated(markers) {
    const holders = new Map(); // parent -> its children that hold a marker
    for (const marker of markers) {
      for (let a = marker, depth = 0; a.parentElement && depth < 8; a = a.parentElement, depth += 1) {
        if (!holders.has(a.parentElement)) holders.set(a.parentElement, new Set());
        holders.get(a.parentElement).add(a);
      }
    }
    const groups = new Set();
    for (const marker of markers) {
      for (let a = marker, depth = 0; a.parentElement && depth < 8; a = a.parentElement, depth += 1) {
        if (holders.get(a.parentElement).size >= 3) {
          groups.add(a.parentElement);
          break;
        }
      }
    }
    // Most cards of a product grid show a price (menus and galleries do not); bigger grids first.
    const priced = (items) => items.filter((item) => currency.test(item.innerText)).length;
    return [...groups]
      .filter((parent) => !inChrome(parent))
      .map((parent) => [...holders.get(parent)].filter((item) => visible(item) && isCard(item)))
      .filter((items) => items.length >= 3 && priced(items) * 2 >= items.length)
      .sort((a, b) => b.length - a.length);
  }

  // A product card links somewhere, shows a picture and names something (thumbnail strips and
  // price tables do not); it never holds the page's own product title.
  function isCard(el) {
    if (!el.matches("a[href], :has(a[href])") || !el.querySelector("img, picture, [role=img]")) return false;
    const title = find("title");
    return bare(el.innerText).length >= 8 && !(title && el.contains(title.element));
  }

  // Where each rule sees repeated product cards, and every card the page shows (related items,
  // recommendations, listings): a buy button or price inside one belongs to another product.
  const GRID_MARKERS = {
    microdata: () => productScopes(),
    role: () => queryAll("li, [role=listitem], article, [role=article]").filter(isCard),
    text: () => priceTexts(),
    vocabulary: () => queryAll(attributeSelector(vocabulary.grid_item)),
  };
  const grids = new Map();
  const gridsBy = (rule) => grids.get(rule) || grids.set(rule, repeated(GRID_MARKERS[rule]())).get(rule);
  const cards = once(() => new Set(Object.keys(GRID_MARKERS).flatMap((rule) => gridsBy(rule).flat())));
  // The product card that holds `el`, if any.
  const cardOf = (el) => {
    for (let a = el; a && a !== doc.body; a = a.parentElement) if (cards().has(a)) return a;
    return null;
  };
  const inCard = (el) => cardOf(el) !== null;

  // ---- the rules, per kind: [rule, () => candidates] in the order they are tried ----
  const buyLabel = labelMatcher(vocabulary.buy_button);
  const checkoutLabel = labelMatcher(vocabulary.checkout_button);
  const optionLabel = labelMatcher(vocabulary.options);
  const priceLabel = labelMatcher(vocabulary.price);
  // A currency next to an amount; letter codes ("kr", "Rs", "EUR") only as whole words.
  const money = vocabulary.price.currencies
    .map((c) => (/\p{L}$/u.test(c) ? `${escape(c)}(?!\\p{L})` : escape(c)))
    .map((c) => (/^\p{L}/u.test(c) ? `(?<!\\p{L})${c}` : c))
    .join("|");
  const currency = new RegExp(`(?:${money})\\s?\\d|\\d[\\d.,\\s\\u00a0]*\\s?(?:${money})`, "iu");
  const priceText = (text) => {
    const t = norm(text);
    return t.length <= 32 && /\d/.test(t) && !t.includes("%") && currency.test(t);
  };

  const clickable = (el) => el.closest(CLICKABLE) || el;
  const controlIn = (el) => (el.matches(CLICKABLE) ? el : el.querySelector(CLICKABLE) || el);
  const namedControls = (matches) => queryAll(CLICKABLE).filter((el) => matches(nameOf(el)));
  const textControls = (matches) => textNodes(matches).map(clickable);
  const innermost = (list) => list.filter((el) => !list.some((other) => other !== el && el.contains(other)));

  // The options an anchor means: a choice's row of choices (a size button's sizes), else the element.
  function optionArea(el) {
    const control = el.matches(`${OPTION_CONTROLS}, button, [role=button], [role=radio]`) ? el : null;
    const parent = el.parentElement;
    if (control && parent && parent !== doc.body && parent.textContent.length < 400) return parent;
    return el;
  }

  const RULES = {
    title: [
      ["microdata", () => itemprops("name", true)],
      ["json-ld", () => ldValues("name").flatMap(withText)],
      ["role", () => queryAll("h1, [role=heading][aria-level='1']").filter((el) => bare(el.textContent).length >= 3)],
      [
        "text",
        () => {
          const title = doc.querySelector("meta[property='og:title']")?.content || doc.title;
          return String(title || "")
            .split(/\s[|–—:-]\s/)
            .filter((part) => part.trim().length >= 8)
            .flatMap(withText);
        },
      ],
      ["vocabulary", () => innermost(queryAll(attributeSelector(vocabulary.title)).filter((el) => bare(el.textContent).length >= 3))],
    ],
    price: [
      [
        "microdata",
        () => {
          const props = itemprops("price").concat(itemprops("lowPrice"));
          const shown = props.filter((el) => visible(el) && /\d/.test(el.textContent));
          if (shown.length) return shown;
          return props.map((el) => el.getAttribute("content") || el.textContent).filter((v) => /\d/.test(v)).flatMap(showing);
        },
      ],
      ["json-ld", () => ldPrices().flatMap(showing)],
      ["role", () => queryAll("[aria-label]").filter((el) => priceLabel(el.getAttribute("aria-label")) && /\d/.test(el.getAttribute("aria-label")))],
      ["text", priceTexts],
      ["vocabulary", () => innermost(queryAll(attributeSelector(vocabulary.price)).filter((el) => priceText(el.textContent)))],
    ],
    buy_button: [
      ["role", () => namedControls(buyLabel)],
      ["text", () => textControls(buyLabel)],
      [
        "vocabulary",
        () => queryAll(attributeSelector(vocabulary.buy_button)).map(controlIn).concat(
          queryAll((vocabulary.buy_button.form_actions || []).map((w) => `form[action*=${JSON.stringify(w)} i] [type=submit]`).join(", ")),
        ),
      ],
    ],
    checkout_button: [
      ["role", () => namedControls(checkoutLabel)],
      ["text", () => textControls(checkoutLabel)],
      ["vocabulary", () => queryAll(attributeSelector(vocabulary.checkout_button)).map(controlIn)],
    ],
    image: [
      [
        "microdata",
        () => itemprops("image").flatMap((el) => (el.matches("img") ? [el] : el.matches("meta, link") ? imagesOf([el.content || el.href]) : queryAll("img", el))),
      ],
      ["json-ld", () => imagesOf(ldValues("image"))],
      [
        "role",
        () => {
          const title = find("title");
          const name = title ? bare(title.element.textContent) : "";
          if (name.length < 5) return [];
          return queryAll("img[alt], [role=img][aria-label]").filter((el) => {
            const alt = bare(nameOf(el) || el.alt);
            return alt.length >= Math.min(name.length, 40) * 0.6 && (name.includes(alt) || alt.includes(name.slice(0, 40)));
          });
        },
      ],
      [
        "vocabulary",
        () =>
          imagesOf([doc.querySelector("meta[property='og:image']")?.content]).concat(
            queryAll(attributeSelector(vocabulary.image)).flatMap((el) => (el.matches("img, picture") ? [el] : queryAll("img", el))),
          ),
      ],
    ],
    grid_item: Object.keys(GRID_MARKERS).map((rule) => [rule, () => gridsBy(rule).flat()]),
    options: [
      [
        "role",
        () =>
          queryAll(OPTION_CONTROLS)
            .filter((el) => optionLabel(nameOf(el)) || optionLabel(el.getAttribute("name")) || optionLabel(el.closest("fieldset")?.querySelector("legend")?.textContent))
            .map(optionArea),
      ],
      [
        "text",
        () =>
          textNodes(optionLabel)
            .map((label) => {
              for (let a = label.parentElement, depth = 0; a && a !== doc.body && depth < 3; a = a.parentElement, depth += 1) {
                const choices = queryAll("button, [role=button], [role=radio], a[href]", a).filter(visible);
                if (queryAll(OPTION_CONTROLS, a).some(visible) || choices.length >= 2) return a;
              }
              return null;
            })
            .filter(Boolean),
      ],
      [
        "vocabulary",
        () => {
          // A label named like the choices (elkor.lv's "variantsLabel" above its size buttons) is no
          // choice: where any named element holds a control, those are the options.
          const named = innermost(queryAll(attributeSelector(vocabulary.options)));
          const choice = `${OPTION_CONTROLS}, ${CLICKABLE}`;
          const choosing = named.filter((el) => el.matches(choice) || queryAll(choice, el).some(visible));
          return (choosing.length ? choosing : named).map(optionArea);
        },
      ],
    ],
  };

  // The element that shows one price: a short text with a currency, climbing out of split spans.
  function priceBox(el) {
    let best = null;
    for (let a = el, depth = 0; a && a !== doc.body && depth < 3; a = a.parentElement, depth += 1) {
      const text = a.textContent;
      if (text.length > 40) break;
      if (priceText(text)) {
        best = a;
        break;
      }
    }
    if (!best || best.closest("del, s, strike") || style(best).textDecorationLine.includes("line-through")) return null;
    return best;
  }

  function priceTexts() {
    return innermost([...new Set(textNodes((t) => /\d/.test(t)).map(priceBox).filter(Boolean))]);
  }

  // A product's own page, not a listing: schema.org describes a product, or a title and a price
  // show outside every card.
  const productPage = once(() => {
    const described = jsonLdProducts().length;
    if ((described > 0 && described < 3) || productScopes().some((scope) => !inCard(scope))) return true;
    const title = find("title");
    return Boolean(title && !inCard(title.element) && priceTexts().some((el) => !inCard(el)));
  });

  // The page's primary call to action, by meaning: its buy button, else the submit of its main form
  // (the form, never a search, with the most fields a person fills; one in the page's chrome only if
  // no other has any). A drawn pattern's manipulative button copies it, and the nativeness score holds
  // that button against it (not against whichever button happens to look closest).
  const FIELDS =
    "input:not([type=hidden]):not([type=submit]):not([type=button]):not([type=checkbox]):not([type=radio]):not([type=image]), select, textarea";
  const SUBMITS = "button[type=submit], button:not([type]), input[type=submit], input[type=image]";
  // A submit that says what it does: a label of words, not one character (a quantity's "2", a pager's
  // "›", a "+"). A bare <button> in a form submits it, and hellofresh's "2" was taken for its call to
  // action.
  const says = (el) => {
    const label = bare(nameOf(el) || "");
    return /\p{L}/u.test(label) && [...label].length > 1;
  };
  const callToAction = once(() => {
    const buy = find("buy_button");
    if (buy) return { element: controlIn(buy.element), by: "buy button" };
    const searching = (form) =>
      form.matches("[role=search]") || Boolean(form.querySelector("input[type=search], input[name=s], input[name=q]")) ||
      /search|suche|recherche|busca|cerca|szukaj/i.test(`${form.getAttribute("action") || ""} ${form.id} ${form.className}`);
    const fields = (form) => queryAll(FIELDS, form).filter(visible).length;
    const submits = (form) => queryAll(SUBMITS, form).filter((el) => visible(el) && says(el));
    const forms = queryAll("form").filter((form) => !isOurs(form) && !searching(form) && fields(form) > 0 && submits(form).length);
    const weight = (form) => (inChrome(form) ? 0 : 1000) + fields(form);
    const main = forms.reduce((best, form) => (!best || weight(form) > weight(best) ? form : best), null);
    return main ? { element: submits(main)[0], by: "main form's submit" } : null;
  });

  // ---- choosing among a rule's candidates ----
  const found = new Map();

  function rank(kind, candidates) {
    if (kind === "grid_item") return candidates[0]; // the first card of the largest grid
    if (kind === "title") {
      // Inside the schema.org product first, then headings before other text, then the bigger.
      const level = (el) => Number((el.tagName.match(/^H([1-6])$/) || [0, 7])[1]);
      const key = (el) => [inProduct(el) ? 0 : 1, level(el), -Number.parseFloat(style(el).fontSize)];
      const before = (a, b) => {
        const [x, y] = [key(a), key(b)];
        const i = x.findIndex((value, index) => value !== y[index]);
        return i >= 0 && x[i] < y[i];
      };
      return candidates.reduce((best, el) => (before(el, best) ? el : best));
    }
    if (kind === "checkout_button") {
      const area = (el) => el.getBoundingClientRect().width * el.getBoundingClientRect().height;
      return candidates.reduce((a, b) => (area(b) > area(a) ? b : a));
    }
    // Near the product's title (and inside its schema.org scope), not in a list of related items.
    const title = find("title");
    const focus = title ? title.element.getBoundingClientRect() : null;
    const score = (el) => (inProduct(el) ? 0 : 1e7) + (focus ? gap(el.getBoundingClientRect(), focus) : 0);
    return candidates.reduce((a, b) => (score(b) < score(a) ? b : a));
  }

  function find(kind) {
    if (found.has(kind)) return found.get(kind);
    if (!RULES[kind]) throw new Error(`unknown anchor kind ${kind}; expected one of ${KINDS.join(", ")}`);
    found.set(kind, null); // a rule that asks for its own kind gets nothing, not a loop
    let result = null;
    // On a product's own page, what sits in the cards of other products is not the product's.
    const own = kind !== "title" && kind !== "grid_item" && productPage() ? (el) => !inCard(el) : () => true;
    for (const [rule, candidates] of RULES[kind]) {
      const usable = [...new Set(candidates())].filter((el) => el && visible(el) && (kind === "grid_item" || (!inChrome(el) && own(el))));
      if (usable.length) {
        result = { element: rank(kind, usable), rule };
        break;
      }
    }
    found.set(kind, result);
    return result;
  }

  // ---- placement: where an injected block goes without covering or displacing the page's controls ----
  function stacks(parent, cell) {
    const s = style(parent);
    if (["block", "flow-root", "list-item", "table-cell", "inline-block"].includes(s.display)) return true;
    if (s.display.endsWith("flex")) return s.flexDirection.startsWith("column") || (cell && s.flexWrap !== "nowrap");
    if (s.display.endsWith("grid")) return cell || s.gridTemplateColumns === "none" || s.gridTemplateColumns.trim().split(/\s+/).length === 1;
    return false;
  }

  // Candidate slots beside the anchor, nearest first: block-level boxes (the anchor or its
  // ancestors, never inside a control) whose parent stacks its children and has room for a panel.
  // `cell`: the pattern is a card among the parent's cards (grids and wrapping rows accepted); the
  // slot beside the card itself says `cell`, and the pattern is laid out as one of the grid's cells.
  function slots(anchor, placement, { cell = false } = {}) {
    if (placement === "corner") {
      const edges = ["right", "left"].flatMap((side) => EDGE_STEPS.map((top) => ({ corner: side, top })));
      return CORNERS.map((corner) => ({ corner })).concat(edges);
    }
    const out = [];
    let el = anchor.closest("a[href], button, label, summary, select, [role=button], [role=link]") || anchor;
    // A listing's card (books.toscrape.com's "Add to basket" is in one) in a row of cards: the pattern
    // may go under (or over) the card's row instead, in the card's column, as if the card had grown.
    // Floated cards must: a card taller than its row catches the next row's cards, leaving a hole in
    // the grid. Cards in a flex or grid row take the pattern inside where it fits, else (saucedemo.com's
    // are 240 px tall whatever they hold: see `whole`) under their row. (A page's floated columns,
    // Bootstrap 3's buy box beside its gallery, are no listing: patterns stay inside them.)
    const card = cell ? null : cardOf(anchor);
    const rows = card && (placement === "before" || placement === "after") ? rowKind(card) : null;
    for (let depth = 0; el && el.parentElement && el !== doc.body && depth < 12; el = el.parentElement, depth += 1) {
      const parent = el.parentElement;
      const own = style(el);
      if (parent === doc.documentElement || own.position === "absolute" || own.position === "fixed") continue;
      if (own.display.startsWith("inline") || own.display === "contents" || own.display.startsWith("table-")) continue;
      if (rows === "float" && card.contains(parent)) continue;
      if (rows && el === card) {
        out.push(rowSlot(card, placement, rows));
        continue;
      }
      if (!stacks(parent, cell && depth === 0) || parent.getBoundingClientRect().width < MIN_SLOT_WIDTH) continue;
      out.push(cell && depth === 0 ? { target: el, placement, cell: true } : { target: el, placement });
    }
    return out;
  }

  // The slots for `injection` anchored on `el`, found as `kind`: beside a grid item, cells of its grid.
  // An advert anchored inside a listing's card (a buy button on a category page) is one more card of
  // the listing, as shops show adverts there, not a second picture and name inside a product's card.
  function slotsFor(el, kind, injection) {
    const card = kind === "grid_item" ? el : injection.type === "disguised_ad" ? cardOf(el) : null;
    return card ? slots(card, injection.placement, { cell: true }) : slots(el, injection.placement);
  }

  const isFloated = (el) => style(el).float !== "none";

  // How a card's listing lays its cards out in rows: floated, a wrapping flex row or a grid of
  // columns; null where each card has a line of its own.
  function rowKind(card) {
    if (isFloated(card)) return "float";
    const s = style(card.parentElement);
    if (s.display.endsWith("flex") && s.flexDirection.startsWith("row") && s.flexWrap !== "nowrap") return "flex";
    if (s.display.endsWith("grid") && s.gridTemplateColumns.trim().split(/\s+/).length > 1) return "grid";
    return null;
  }

  // The slot past the end (after) or before the start (before) of a card's row: the cells beside it,
  // in the same flow, that share its top. `under` is the card whose column the pattern takes.
  function rowSlot(card, placement, rows) {
    const top = card.getBoundingClientRect().top;
    const inRow = (sibling) =>
      sibling.getBoundingClientRect().width > 0 && !["absolute", "fixed"].includes(style(sibling).position) &&
      (rows !== "float" || isFloated(sibling)) && Math.abs(sibling.getBoundingClientRect().top - top) <= 2;
    const row = [...card.parentElement.children].filter(inRow);
    const target = placement === "after" ? row[row.length - 1] : row[0];
    return { target, placement, under: card, rows };
  }

  // A pattern drawn as one of a grid's cells takes that cell's place in the grid's layout: its float and
  // width (books.toscrape.com floats its cells, and a block between two of them lay over the first
  // one's button), its share of a flex or grid row, its margins and its height. The cell's padding and
  // box are the pattern's card (extension/content/look.js). A rule for the pattern's shadow host.
  const CELL_LAYOUT = [
    "float", "width", "box-sizing", "vertical-align", "align-self", "flex-grow", "flex-shrink", "flex-basis",
    "grid-column-start", "grid-column-end", "grid-row-start", "grid-row-end",
    "margin-top", "margin-right", "margin-bottom", "margin-left",
  ];

  function cellLayout(cell) {
    const s = style(cell);
    const layout = CELL_LAYOUT.map((prop) => `${prop}: ${s.getPropertyValue(prop)} !important`);
    const display = s.display.startsWith("inline") ? "inline-block" : "block";
    return `:host { display: ${display} !important; padding: 0 !important; min-height: ${s.height} !important; ${layout.join("; ")}; }`;
  }

  // A pattern placed under or over a card's row takes the card's column, at the card's content box
  // (a floated cell's padding is the grid's gutter), on a line of its own: clear of the row's floats,
  // the whole of a flex line (its padding keeps it to the column), or every column of the grid.
  function rowBreak(card, rows) {
    const outer = contentBox(card.parentElement);
    const own = contentBox(card);
    const left = Math.round(own.left - outer.left);
    const right = Math.round(outer.right - own.right);
    if (rows === "float") {
      return `:host { clear: both !important; margin-left: ${left}px !important; width: ${Math.round(own.right - own.left)}px !important; }`;
    }
    const line = rows === "flex" ? "flex: 0 0 100% !important" : "grid-column: 1 / -1 !important";
    return `:host { ${line}; box-sizing: border-box !important; padding: 0 ${right}px 0 ${left}px !important; }`;
  }

  // Where an element's content starts and ends across the page: inside its border and padding.
  function contentBox(el) {
    const s = style(el);
    const box = el.getBoundingClientRect();
    return {
      left: box.left + (parseFloat(s.borderLeftWidth) || 0) + (parseFloat(s.paddingLeft) || 0),
      right: box.right - (parseFloat(s.borderRightWidth) || 0) - (parseFloat(s.paddingRight) || 0),
    };
  }

  // The rule for a pattern's shadow host in `slot` (from `slots`): a grid cell's layout, a
  // card's column under its row, or the column of a set-in element; null where it needs none.
  function layoutOf(slot) {
    if (slot.corner) return null;
    if (slot.cell) return cellLayout(slot.target);
    if (slot.under) return rowBreak(slot.under, slot.rows);
    return columnOf(slot.target, slot.placement);
  }

  // A pattern placed before or after an element whose content stands in from its parent's left (a
  // centred card; saucedemo.com's product card inside a full-width band, reached through the band's
  // lone wrappers) takes that content's column: at the band's edge it stood apart from the page. A rule
  // for the pattern's shadow host, or null (content at the parent's left: the pattern is there already).
  function columnOf(target, placement) {
    if (placement !== "before" && placement !== "after") return null;
    const parent = target.parentElement;
    if (!parent || isFloated(target)) return null;
    let near = target;
    let shown = [];
    for (let depth = 0; depth < 6; depth += 1) {
      shown = [...near.children].filter((child) => child.getBoundingClientRect().width > 0);
      if (shown.length !== 1) break;
      near = shown[0];
    }
    // Where the content is: the element reached where it shows a box, else the span of its children (a
    // listing's cards, set in from the list's edge by their margins).
    const inFlow = shown.filter((child) => !["absolute", "fixed"].includes(style(child).position));
    let spans = (inFlow.length > 1 && !edged(style(near)) ? inFlow : [near]).map((child) => child.getBoundingClientRect());
    // A grid whose items keep to one column but a few (Ghost's Casper: a post's title, excerpt and
    // byline in its text column, the feature image wider) is that column, not the span of them all.
    if (spans.length > 2 && /grid/.test(style(near).display)) {
      const column = (box) => `${Math.round(box.left)}:${Math.round(box.right)}`;
      const counts = new Map();
      spans.forEach((box) => counts.set(column(box), (counts.get(column(box)) || 0) + 1));
      const [usual, held] = [...counts].reduce((best, entry) => (entry[1] > best[1] ? entry : best));
      if (held * 2 > spans.length) spans = spans.filter((box) => column(box) === usual);
    }
    const own = { left: Math.min(...spans.map((b) => b.left)), width: Math.max(...spans.map((b) => b.right)) - Math.min(...spans.map((b) => b.left)) };
    const left = own.left - contentBox(parent).left;
    if (left < 8 || own.width < MIN_SLOT_WIDTH) return null;
    return `:host { margin-left: ${Math.round(left)}px !important; max-width: ${Math.round(own.width)}px !important; }`;
  }

  // Visible page controls (inside `scope`).
  const controls = (scope = doc) => queryAll(CONTROLS, scope).filter(visible);

  // Overlap either way counts (a control drawn over the pattern is as out of place as one under
  // it), except that floating controls (fixed or sticky: headers, chat buttons) pass over all
  // content as the page scrolls and count only against a floating pattern.
  function floating(el) {
    for (let a = el; a && a !== doc.documentElement; a = up(a)) {
      if (["fixed", "sticky"].includes(style(a).position)) return true;
    }
    return false;
  }

  function covering(el) {
    const box = el.getBoundingClientRect();
    const flowing = !floating(el);
    return queryAll(CONTROLS).filter((control) => {
      const seen = overlap(box, control.getBoundingClientRect());
      return seen && seen.width >= 2 && seen.height >= 2 && visible(control) && !(flowing && floating(control));
    });
  }

  // Tries `candidates` (from `slots`) in order. `insert(slot)` is the caller's side effect: it puts
  // the pattern there and returns {element, remove}; `onTop(element)` (optional) says whether no
  // page element is drawn over it, which only hit-testing in the viewport can tell. The first slot
  // where the pattern shows, covers no control and leaves every control of its parent visible is
  // kept; otherwise the least bad one (the verdict's `cost`: 0 is clean).
  function place(candidates, insert, onTop = () => true) {
    let best = null;
    for (const slot of candidates) {
      const scope = slot.target ? slot.target.parentElement : null;
      const before = scope ? controls(scope) : [];
      const placed = insert(slot);
      const verdict = {
        slot,
        placed,
        shown: shows(placed.element) && whole(placed.element) && onTop(placed.element),
        covered: covering(placed.element),
        displaced: before.filter((control) => !visible(control)),
      };
      verdict.cost = (verdict.shown ? 0 : 1000) + verdict.covered.length + verdict.displaced.length;
      if (verdict.cost === 0) return verdict;
      placed.remove();
      if (!best || verdict.cost < best.cost) best = verdict;
    }
    if (!best) return null;
    best.placed = insert(best.slot);
    return best;
  }

  // The page's own layers in the way of anything drawn on it: a wall over most of the viewport (a
  // consent wall, a modal and its veil) or a floating consent banner. A layer is the outermost
  // element that is fixed, or absolute and lifted by a z-index, and holds none of the product's own
  // elements. `accept` is the button a person would click to make it go away, if there is one.
  function pageLayers() {
    const lifted = (el) => {
      const s = style(el);
      return s.position === "fixed" || (s.position === "absolute" && Number.parseInt(s.zIndex, 10) > 0);
    };
    const rootOf = (el) => {
      let root = null;
      for (let a = el; a && a !== doc.body && a !== doc.documentElement; a = a.parentElement) if (lifted(a)) root = a;
      return root;
    };
    const product = ["title", "price", "buy_button"].map(find).filter(Boolean).map((hit) => hit.element);
    const free = (root) => Boolean(root) && !isOurs(root) && !product.some((mine) => root.contains(mine));
    const layers = [];
    const add = (root) => {
      if (free(root) && !layers.some((layer) => layer.contains(root))) layers.push(root);
    };
    const viewport = { left: 0, top: 0, right: win.innerWidth, bottom: win.innerHeight };
    const share = (el) => {
      const seen = overlap(el.getBoundingClientRect(), viewport);
      return seen ? (seen.width * seen.height) / (win.innerWidth * win.innerHeight) : 0;
    };
    const wall = [];
    for (const el of doc.elementsFromPoint(win.innerWidth / 2, win.innerHeight / 2)) {
      if (isOurs(el)) continue;
      const root = rootOf(el);
      if (!free(root)) break;
      wall.push(root);
    }
    if (wall.some((root) => share(root) >= 0.6)) {
      wall.forEach(add);
      queryAll("dialog[open], [role=dialog], [role=alertdialog], [aria-modal=true]").filter(shows).map(rootOf).forEach(add);
    }
    const accept = labelMatcher(vocabulary.consent);
    const topic = new RegExp(vocabulary.consent.topics.map(escape).join("|"), "i");
    const buttons = queryAll(CLICKABLE).filter((el) => shows(el) && accept(nameOf(el)));
    for (const button of buttons) {
      const root = rootOf(button);
      if (root && topic.test(root.textContent)) add(root);
    }
    if (!layers.length) return null;
    return { layers, accept: buttons.find((button) => layers.some((layer) => layer.contains(button))) || null };
  }

  return { kinds: KINDS, find, callToAction, slots, slotsFor, layoutOf, place, covering, showing, shows, gap, pageLayers };
}
