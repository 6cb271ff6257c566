// The project's one URL-pattern language, as susbench/core/urlpattern.py defines it (both run every case of
// tests/data/url_patterns.json). A pattern is matched against the URL without scheme and fragment
// (`host[:port]/path?query`), as a whole, case ignored: `*` is any run of characters (none and `/`
// included), `?` exactly one character, and every other character stands for itself.
// Loaded by the service worker (importScripts) and first among the content scripts.
"use strict";
(() => {
  const REGEXP_SYNTAX = /[\\^$.*+?()[\]{}|]/;
  // Python's ignore-case makes i, I, dotted İ and dotless ı one letter; Unicode case folding does not.
  const ANY_I = "iIİı";

  function withoutFragment(url) {
    return url.split("#", 1)[0];
  }

  function stripUrl(url) {
    const plain = withoutFragment(url);
    const scheme = plain.indexOf("://");
    return scheme < 0 ? plain : plain.slice(scheme + 3);
  }

  function literal(ch) {
    if (ANY_I.includes(ch)) return `[${ANY_I}]`;
    return REGEXP_SYNTAX.test(ch) ? `\\${ch}` : ch;
  }

  // "u" makes `?` one code point and case folding Unicode's, as in Python; "s" lets `*` cross newlines.
  function compile(pattern) {
    const body = [...pattern].map((ch) => (ch === "*" ? ".*" : ch === "?" ? "." : literal(ch))).join("");
    return new RegExp(`^(?:${body})$`, "isu");
  }

  // `text` matches `pattern` as a whole, case ignored (hosts, ids: no URL stripping).
  function globMatches(pattern, text) {
    return compile(pattern).test(text);
  }

  function urlMatches(pattern, url) {
    return globMatches(pattern, stripUrl(url));
  }

  const helper = (globalThis.pageHelper ||= {});
  helper.urlpattern = { withoutFragment, stripUrl, globMatches, urlMatches };
})();
