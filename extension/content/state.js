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
    parsed: null, // the elements the document held when it was parsed (its HTML and its parse-time scripts)

    // The drawn pattern is never an anchor, a button whose look is copied, or a site control.
    ours(el) {
      return Boolean(this.mounted) && (el === this.mounted.host || this.mounted.host.contains(el));
    },
  };
  // The style model reads the page as parsed, a view every load of the same page has: what scripts
  // fetch later (lazily loaded reviews) arrives sooner or later from load to load. Taken when parsing
  // ends (readyState "interactive"), before any deferred script runs; nothing is drawn before (main.js).
  if (document.readyState === "loading") {
    document.addEventListener("readystatechange", () => (helper.state.parsed = new WeakSet(document.querySelectorAll("*"))), {
      once: true,
    });
  }
})();
