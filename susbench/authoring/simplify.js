// The paper's step 3: the page's source around one spot, cut down to what an author (or a model)
// needs to draft an injection there: the region's markup without scripts, tracking, hidden or
// off-region nodes, and the computed styles that give the region its look. Runs in an isolated
// world after semantic.js, so the page can neither see nor bend it.
function pageSimplifier(doc, anchors) {
  "use strict";
  const win = doc.defaultView;
  const DROP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "IFRAME", "OBJECT", "EMBED", "LINK", "META", "CANVAS", "VIDEO", "AUDIO", "SOURCE", "TRACK"]);
  const KEEP_ATTRIBUTES = new Set(["id", "class", "href", "src", "alt", "title", "type", "name", "value", "role", "for", "placeholder", "lang", "dir", "checked", "disabled", "selected", "colspan", "rowspan"]);
  const TRACKING = /(^|[?&])(utm_[a-z]+|gclid|fbclid|mc_[a-z]+|_ga|ref|tag)=[^&]*/gi;
  const STYLE_PROPS = ["font-family", "font-size", "font-weight", "line-height", "color", "background-color", "border", "border-radius", "padding", "margin", "display", "text-transform", "letter-spacing", "box-shadow"];
  const MAX_STYLED = 40;
  const MIN_REGION_TEXT = 200;
  const MAX_REGION_BYTES = 24000;

  const shows = (el) => {
    const s = win.getComputedStyle(el);
    if (s.display === "none" || s.visibility === "hidden" || Number(s.opacity) === 0) return false;
    const box = el.getBoundingClientRect();
    return box.width > 1 && box.height > 1;
  };

  function target(near) {
    if (!near) return { element: doc.querySelector("main") || doc.body, how: "the page's main content" };
    if (anchors.kinds.includes(near)) {
      const hit = anchors.find(near);
      if (!hit) return { element: null, how: `no ${near} found on the page by meaning` };
      return { element: hit.element, how: `semantic ${near} (${hit.rule})` };
    }
    let element = null;
    try {
      element = doc.querySelector(near);
    } catch (error) {
      return { element: null, how: `not a CSS selector: ${near}` };
    }
    return { element, how: element ? `css ${near}` : `the CSS selector ${near} matched nothing` };
  }

  // The smallest ancestor with enough text around the spot to show the page's own components.
  function region(element) {
    let chosen = element;
    while (chosen.parentElement && chosen !== doc.body) {
      const parent = chosen.parentElement;
      if (parent.outerHTML.length > MAX_REGION_BYTES * 4) break;
      chosen = parent;
      if ((chosen.innerText || "").trim().length >= MIN_REGION_TEXT) break;
    }
    return chosen;
  }

  function cleanUrl(value) {
    if (value.startsWith("data:")) return value.slice(0, 40) + "…";
    return value.replace(TRACKING, "").replace(/[?&]$/, "");
  }

  function selectorOf(el) {
    const classes = [...el.classList].slice(0, 3).map((name) => "." + CSS.escape(name)).join("");
    return el.tagName.toLowerCase() + (el.id ? "#" + CSS.escape(el.id) : "") + classes;
  }

  function copy(el, styled) {
    if (DROP.has(el.tagName) || !shows(el)) return null;
    if (el.tagName === "IMG" && (el.naturalWidth <= 2 || el.naturalHeight <= 2)) return null;
    const out = doc.createElement(el.tagName.toLowerCase() === "svg" ? "svg" : el.tagName);
    for (const attribute of el.attributes) {
      const name = attribute.name.toLowerCase();
      if (KEEP_ATTRIBUTES.has(name) || name.startsWith("aria-")) {
        out.setAttribute(name, name === "href" || name === "src" ? cleanUrl(attribute.value) : attribute.value);
      }
    }
    if (el.tagName.toLowerCase() === "svg") return out;
    const selector = selectorOf(el);
    if (!styled.has(selector) && styled.size < MAX_STYLED) styled.set(selector, el);
    for (const child of el.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) {
        const text = child.textContent.replace(/\s+/g, " ");
        if (text.trim()) out.appendChild(doc.createTextNode(text));
      } else if (child.nodeType === Node.ELEMENT_NODE) {
        const kept = copy(child, styled);
        if (kept) out.appendChild(kept);
      }
    }
    return out;
  }

  function styles(styled) {
    const rules = [];
    for (const [selector, el] of styled) {
      const s = win.getComputedStyle(el);
      const parent = el.parentElement ? win.getComputedStyle(el.parentElement) : null;
      const props = STYLE_PROPS.filter((prop) => {
        const value = s.getPropertyValue(prop);
        if (!value || value === "normal" || value === "none" || value === "0px" || value === "rgba(0, 0, 0, 0)") return false;
        if (prop === "border" && value.startsWith("0px")) return false;
        if (prop === "display" && !/flex|grid|inline-block/.test(value)) return false;
        return !parent || parent.getPropertyValue(prop) !== value || prop.startsWith("border") || prop === "padding";
      });
      if (props.length) rules.push(`${selector} { ${props.map((prop) => `${prop}: ${s.getPropertyValue(prop)}`).join("; ")} }`);
    }
    return rules.join("\n");
  }

  function simplify(near) {
    const found = target(near);
    const whole = doc.documentElement.outerHTML;
    if (!found.element) return { found: false, how: found.how, before_bytes: whole.length };
    const chosen = region(found.element);
    const styled = new Map();
    const kept = copy(chosen, styled);
    const html = kept ? kept.outerHTML : "";
    return {
      found: true,
      how: found.how,
      region: selectorOf(chosen),
      spot: selectorOf(found.element),
      spot_text: (found.element.innerText || found.element.getAttribute("aria-label") || "").trim().slice(0, 200),
      html,
      css: styles(styled),
      lang: (doc.documentElement.getAttribute("lang") || "").trim(),
      title: doc.title,
      before_bytes: new TextEncoder().encode(whole).length,
    };
  }

  return { simplify };
}
