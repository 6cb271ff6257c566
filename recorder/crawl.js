// The page side of the recorder's generic crawl, evaluated after extension/semantic.js into an
// isolated world of the page (like a content script: the page sees none of it). It only reads the
// page and scrolls: the crawl clicks with the real mouse, from Python.
//
//   const crawl = crawlPage(vocabulary);
//   crawl.look()          // {product, links: [{url, name, card, chrome, footer, shown}]}
//   crawl.target(kind)    // the semantic anchor of `kind` scrolled into view: {x, y, rule, url, label, covered}
//   crawl.consent()       // the accept button of a consent layer, or null

/* exported crawlPage */
function crawlPage(vocabulary) {
  "use strict";
  const CHROME = "nav, [role=navigation], header, [role=banner]";
  const FOOTER = "footer, [role=contentinfo]";
  const fresh = () => semanticAnchors(document, vocabulary, {}); // the DOM changes between calls
  const squeeze = (text) => String(text || "").replace(/\s+/g, " ").trim();

  function nameOf(a) {
    return squeeze(a.getAttribute("aria-label") || a.textContent || a.getAttribute("title") || a.querySelector("img[alt]")?.alt).slice(0, 80);
  }

  // The cards of the page's largest product grid (semantic.js gives its first card).
  function cards(anchors) {
    const first = anchors.find("grid_item");
    return first && first.element.parentElement ? [...first.element.parentElement.children] : [];
  }

  function look() {
    const anchors = fresh();
    const grid = cards(anchors);
    const inCard = (el) => grid.some((card) => card.contains(el));
    const buy = anchors.find("buy_button");
    const title = anchors.find("title");
    const links = [...document.querySelectorAll("a[href]")].map((a) => ({
      url: a.href,
      name: nameOf(a),
      card: inCard(a),
      chrome: Boolean(a.closest(CHROME)),
      footer: Boolean(a.closest(FOOTER)),
      shown: anchors.shows(a),
    }));
    return { product: Boolean(buy && title && !inCard(buy.element)), links };
  }

  function pointAt(el) {
    const box = el.getBoundingClientRect();
    const x = box.left + box.width / 2;
    const y = box.top + box.height / 2;
    const top = document.elementFromPoint(x, y);
    return { x, y, covered: !(top && (el === top || el.contains(top) || top.contains(el))) };
  }

  function target(kind) {
    const hit = fresh().find(kind);
    if (!hit) return null;
    const el = hit.element;
    el.scrollIntoView({ block: "center", inline: "nearest", behavior: "instant" });
    const form = el.form || el.closest("form");
    const url = el.closest("a[href]")?.href || (form ? form.action : null);
    return { ...pointAt(el), rule: hit.rule, url, label: squeeze(el.textContent || el.value || el.getAttribute("aria-label")).slice(0, 80) };
  }

  function consent() {
    const layers = fresh().pageLayers();
    if (!layers || !layers.accept) return null;
    return { ...pointAt(layers.accept), label: squeeze(layers.accept.textContent).slice(0, 80) };
  }

  return { look, target, consent };
}
