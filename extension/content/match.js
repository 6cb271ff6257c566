// Page matching: finds what a locator names (an anchor, a site control) as a person would see it.
// CSS narrows, text and role + accessible name filter; the deepest text match wins. A semantic locator
// names a kind of element any shop page has (its buy button, its price...), found by meaning
// (semantic.js, loaded before this file, with the words the worker hands over for the episode).
"use strict";
(() => {
  const helper = globalThis.pageHelper;
  const { state } = helper;
  const IMPLICIT_ROLES = {
    button: "button, input[type=submit], input[type=button], input[type=reset], [role=button]",
    link: "a[href], [role=link]",
    heading: "h1, h2, h3, h4, h5, h6, [role=heading]",
    navigation: "nav, [role=navigation]",
    main: "main, [role=main]",
    banner: "header, [role=banner]",
    contentinfo: "footer, [role=contentinfo]",
    form: "form, [role=form]",
    search: "search, [role=search]",
    checkbox: "input[type=checkbox], [role=checkbox]",
    radio: "input[type=radio], [role=radio]",
    textbox: "input:not([type]), input[type=text], input[type=email], input[type=tel], textarea, [role=textbox]",
    searchbox: "input[type=search], [role=searchbox]",
    combobox: "select, [role=combobox]",
    list: "ul, ol, [role=list]",
    listitem: "li, [role=listitem]",
    img: "img, svg[role=img], [role=img]",
    region: "section[aria-label], section[aria-labelledby], [role=region]",
    article: "article, [role=article]",
  };

  const collapse = (text) => (text || "").replace(/\s+/g, " ").trim();
  const norm = (text) => collapse(text).toLowerCase();
  const roleSelector = (role) => IMPLICIT_ROLES[role] || `[role="${role}"]`;

  function accessibleName(el) {
    const label = el.getAttribute("aria-label");
    if (label) return label;
    const labelledBy = el.getAttribute("aria-labelledby");
    if (labelledBy) {
      return labelledBy.split(/\s+/).map((id) => document.getElementById(id)?.textContent || "").join(" ");
    }
    if (el.labels && el.labels.length) return [...el.labels].map((l) => l.textContent).join(" ");
    if (el.matches("input[type=submit], input[type=button]")) return el.value;
    return el.getAttribute("alt") || el.textContent || el.getAttribute("title") || "";
  }

  // The text a control shows, as it goes into the evidence.
  function label(el) {
    return collapse(el.getAttribute("aria-label") || el.textContent);
  }

  function isRendered(el) {
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0;
  }

  // The page's own elements by meaning. A fresh finder per look: it caches what it found, and the page
  // may have re-rendered since the last one. Null when the episode handed over no words.
  function finder() {
    if (!state.vocabulary) return null;
    return semanticAnchors(document, state.vocabulary, { isOurs: (el) => state.ours(el) });
  }

  // `anchors`: a finder to share between the semantic locators of one look.
  function find(locator, anchors = null) {
    if (locator.semantic) {
      const hit = (anchors || finder())?.find(locator.semantic);
      return hit && !state.ours(hit.element) ? hit.element : null;
    }
    let candidates;
    try {
      if (locator.css) candidates = [...document.querySelectorAll(locator.css)];
      else if (locator.role) candidates = [...document.querySelectorAll(roleSelector(locator.role))];
      else candidates = [...document.body.querySelectorAll("*")];
    } catch {
      return null; // an invalid selector simply does not match
    }
    if (locator.role && locator.css) candidates = candidates.filter((el) => el.matches(roleSelector(locator.role)));
    if (locator.name) candidates = candidates.filter((el) => norm(accessibleName(el)) === norm(locator.name));
    if (locator.text) {
      const want = norm(locator.text);
      candidates = candidates.filter((el) => !el.matches("script, style, template") && norm(el.textContent) === want);
      candidates = candidates.filter((el) => !candidates.some((other) => other !== el && el.contains(other)));
    }
    return candidates.find((el) => !state.ours(el) && isRendered(el)) || null;
  }

  helper.match = { find, finder, label, isRendered };
})();
