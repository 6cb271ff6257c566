// What this page holds for the running episode, shared by the content parts. All content scripts of
// the extension share one isolated world, and its globals (this namespace) are invisible to the page.
// Loaded at document_start with the channel and the input part; the others join at document_idle.
"use strict";
(() => {
  const helper = (globalThis.pageHelper ||= {});
  helper.state = {
    // This document, so the worker can tell a page's documents apart (randomUUID needs a secure context).
    doc: [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join(""),
    current: null, // {injection, template, token, restore} while this page is the injection's page
    mounted: null, // the drawn pattern (see draw.render) once it is in the page
    watch: null, // {token, control}: the task's page control whose use completes it, while an episode runs
    vocabulary: null, // the words semantic locators are found by, when the episode has any
    rewritten: false, // the page re-opened this document (document.open): nothing more is drawn in it
    parsed: null, // each element the document held when parsed (its HTML, its parse-time scripts) to its own words then

    // An element's own words: its text nodes', not its children's.
    ownText(el) {
      return [...el.childNodes].filter((node) => node.nodeType === 3).map((node) => node.textContent.trim()).join(" ");
    },

    // The drawn pattern is never an anchor, a button whose look is copied, or a site control.
    ours(el) {
      return Boolean(this.mounted) && (el === this.mounted.host || this.mounted.host.contains(el));
    },
  };
  // The style model reads the page as parsed, a view every load of the same page has: what scripts
  // fetch later (lazily loaded reviews, a stock check's answer over its "Checking availability…")
  // arrives sooner or later from load to load, and the words a deferred script writes follow the clock
  // (a delivery cut-off). Its elements and their words are taken when parsing ends (readyState
  // "interactive"), before any deferred script runs; nothing is drawn before (main.js).
  if (document.readyState === "loading") {
    const taken = () => {
      const parsed = new WeakMap();
      for (const el of document.querySelectorAll("*")) parsed.set(el, helper.state.ownText(el));
      helper.state.parsed = parsed;
    };
    document.addEventListener("readystatechange", taken, { once: true });
  }
})();
