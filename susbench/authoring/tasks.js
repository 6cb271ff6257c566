// What a task draft needs from a page, found by meaning in an isolated world after semantic.js:
// the page's own control that completes a task (its buy or checkout button), a CSS selector that
// finds exactly it, whether a person could click it now, and the product's title in the page's words.
function taskProbe(doc, anchors) {
  "use strict";
  const win = doc.defaultView;

  const only = (selector) => {
    try {
      return doc.querySelectorAll(selector).length === 1;
    } catch (error) {
      return false;
    }
  };

  // The most readable selector that finds exactly the control: its id, its classes, its name, then
  // the nearest ancestor with an id, then a path from the document.
  function uniqueSelector(el) {
    const tag = el.tagName.toLowerCase();
    const classes = [...el.classList].filter((name) => !/^(js-|is-|has-)|\d{3,}/.test(name)).map((name) => "." + CSS.escape(name));
    const candidates = [];
    if (el.id) candidates.push("#" + CSS.escape(el.id));
    for (let count = 1; count <= classes.length; count++) candidates.push(tag + classes.slice(0, count).join(""));
    if (el.getAttribute("name")) candidates.push(`${tag}[name="${CSS.escape(el.getAttribute("name"))}"]`);
    for (let up = el.parentElement; up && up !== doc.documentElement; up = up.parentElement) {
      if (up.id && only("#" + CSS.escape(up.id))) {
        candidates.push(`#${CSS.escape(up.id)} ${tag}${classes.join("")}`);
        break;
      }
    }
    const found = candidates.find(only);
    if (found) return found;
    const steps = [];
    for (let node = el; node && node !== doc.documentElement; node = node.parentElement) {
      const same = node.parentElement ? [...node.parentElement.children].filter((child) => child.tagName === node.tagName) : [];
      steps.unshift(node.tagName.toLowerCase() + (same.length > 1 ? `:nth-of-type(${same.indexOf(node) + 1})` : ""));
      if (only(steps.join(" > "))) break;
    }
    return steps.join(" > ");
  }

  function clickable(el) {
    el.scrollIntoView({ block: "center", inline: "center" });
    const box = el.getBoundingClientRect();
    const s = win.getComputedStyle(el);
    if (box.width < 4 || box.height < 4 || s.visibility === "hidden" || s.pointerEvents === "none") return false;
    if (el.disabled || el.getAttribute("aria-disabled") === "true") return false;
    const hit = doc.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
    return Boolean(hit) && (hit === el || el.contains(hit) || hit.contains(el));
  }

  function text(el) {
    const words = (el && (el.innerText || el.value || el.getAttribute("aria-label"))) || "";
    return words.replace(/\s+/g, " ").trim().replace(/^[^\p{L}\p{N}]+/u, "");
  }

  // A cart's checkout button, or a product page's buy button (with the product's title and price
  // beside it): other pages (orders, articles without a product) are not proposed.
  function survey() {
    const checkout = anchors.find("checkout_button");
    const buy = anchors.find("buy_button");
    const title = anchors.find("title");
    const price = anchors.find("price");
    const chosen = checkout ? ["checkout_button", checkout] : buy && title && price ? ["buy_button", buy] : null;
    const found = {
      lang: (doc.documentElement.getAttribute("lang") || "").trim(),
      title: title ? text(title.element).slice(0, 120) : doc.title.trim().slice(0, 120),
      control: null,
    };
    if (chosen) {
      const [kind, hit] = chosen;
      const selector = uniqueSelector(hit.element);
      found.control = {
        kind,
        rule: hit.rule,
        selector,
        unique: only(selector),
        text: text(hit.element).slice(0, 80),
        clickable: clickable(hit.element),
      };
    }
    return found;
  }

  return { survey };
}
