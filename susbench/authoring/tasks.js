// What a task draft needs from a page, found by meaning in an isolated world after semantic.js:
// the page's own control that completes a task (its buy or checkout button), a CSS selector that
// finds exactly it, whether a person could click it now, and the product's title in the page's words.
function taskProbe(doc, anchors) {
  "use strict";
  const win = doc.defaultView;

  function uniqueSelector(el) {
    if (el.id && doc.querySelectorAll("#" + CSS.escape(el.id)).length === 1) return "#" + CSS.escape(el.id);
    const steps = [];
    for (let node = el; node && node !== doc.documentElement; node = node.parentElement) {
      let step = node.tagName.toLowerCase();
      if (node.id && doc.querySelectorAll("#" + CSS.escape(node.id)).length === 1) {
        steps.unshift("#" + CSS.escape(node.id));
        break;
      }
      const same = node.parentElement ? [...node.parentElement.children].filter((child) => child.tagName === node.tagName) : [];
      if (same.length > 1) step += `:nth-of-type(${same.indexOf(node) + 1})`;
      steps.unshift(step);
      const selector = steps.join(" > ");
      if (doc.querySelectorAll(selector).length === 1) return selector;
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
    return ((el && (el.innerText || el.value || el.getAttribute("aria-label"))) || "").replace(/\s+/g, " ").trim();
  }

  function survey() {
    const control = anchors.find("buy_button") || anchors.find("checkout_button");
    const title = anchors.find("title");
    const found = {
      lang: (doc.documentElement.getAttribute("lang") || "").trim(),
      title: title ? text(title.element).slice(0, 120) : doc.title.trim().slice(0, 120),
      control: null,
    };
    if (control) {
      const el = control.element;
      const selector = uniqueSelector(el);
      found.control = {
        kind: anchors.find("buy_button") ? "buy_button" : "checkout_button",
        rule: control.rule,
        selector,
        unique: doc.querySelectorAll(selector).length === 1,
        text: text(el).slice(0, 80),
        clickable: clickable(el),
      };
    }
    return found;
  }

  return { survey };
}
