// The page's language, for a generic injection's texts: the language the page declares (its lang
// attribute, else its Content-Language or og:locale meta tag) unless its visible text is plainly in
// another, else the one its visible text is written in (the writing system, then the catalog's
// frequent words of each language in it).
"use strict";
(() => {
  const helper = globalThis.pageHelper;
  const SCRIPTS = {
    latin: /\p{Script=Latin}/u,
    cyrillic: /\p{Script=Cyrillic}/u,
    greek: /\p{Script=Greek}/u,
    hebrew: /\p{Script=Hebrew}/u,
    arabic: /\p{Script=Arabic}/u,
    hangul: /\p{Script=Hangul}/u,
    han: /\p{Script=Han}/u,
    kana: /[\p{Script=Hiragana}\p{Script=Katakana}]/u,
  };
  const SAMPLE_CHARS = 40000;
  const MIN_LETTERS = 40;
  // Share of a text's words that must be the language's frequent words, and how far ahead of the
  // runner-up it must be, before content alone names the language.
  const MIN_SHARE = 0.03;
  const LEAD = 1.5;

  function declaration() {
    const root = document.documentElement;
    const lang = (root.getAttribute("lang") || root.getAttribute("xml:lang") || "").trim();
    if (lang) return { value: lang, by: "lang attribute" };
    const meta = [...document.querySelectorAll("meta[http-equiv], meta[property='og:locale']")].find(
      (el) => /^(content-language|og:locale)$/i.test(el.getAttribute("http-equiv") || el.getAttribute("property") || ""),
    );
    const content = meta ? (meta.getAttribute("content") || "").trim() : "";
    return content ? { value: content, by: "meta tag" } : null;
  }

  // "de-AT" -> "de", "zh-TW" -> "zh-Hant" (by the language's `declared` values); a language the catalog
  // lacks comes back as its own primary subtag.
  function fromTag(value, languages) {
    const tag = value.toLowerCase().replace(/_/g, "-").split(/[,;\s]/)[0];
    const primary = tag.split("-")[0];
    for (const wanted of [tag, primary]) {
      const hit = Object.keys(languages).find((name) => name.toLowerCase() === wanted || languages[name].declared.includes(wanted));
      if (hit) return hit;
    }
    return /^[a-z]{2,3}$/.test(primary) ? primary : "unknown";
  }

  function scriptCounts(text) {
    const counts = Object.fromEntries(Object.keys(SCRIPTS).map((name) => [name, 0]));
    for (const ch of text) {
      if (!/\p{L}/u.test(ch)) continue;
      const name = Object.keys(SCRIPTS).find((key) => SCRIPTS[key].test(ch));
      if (name) counts[name] += 1;
    }
    return counts;
  }

  // How much of the text is the language's frequent words (characters, for scripts without spaces).
  function share(text, tokens, language) {
    if (language.script === "han") {
      const han = [...text].filter((ch) => SCRIPTS.han.test(ch)).length || 1;
      return language.words.reduce((sum, word) => sum + text.split(word).length - 1, 0) / han;
    }
    const words = new Set(language.words);
    return tokens.filter((token) => words.has(token)).length / (tokens.length || 1);
  }

  function fromContent(languages) {
    const text = ((document.body && document.body.innerText) || "").slice(0, SAMPLE_CHARS);
    const counts = scriptCounts(text);
    const letters = Object.values(counts).reduce((a, b) => a + b, 0);
    if (letters < MIN_LETTERS) return "unknown";
    // Japanese mixes kana with Han characters; a tenth of kana among them marks it.
    if (counts.kana >= 0.1 * (counts.kana + counts.han)) counts.kana += counts.han;
    const script = Object.keys(counts).reduce((a, b) => (counts[b] > counts[a] ? b : a));
    const candidates = Object.keys(languages).filter((name) => languages[name].script === script);
    if (candidates.length === 1 && ["hangul", "kana", "hebrew"].includes(script)) return candidates[0];
    const tokens = text.toLowerCase().match(/[\p{L}\p{M}']+/gu) || [];
    const scored = candidates.map((name) => [name, share(text, tokens, languages[name])]).sort((a, b) => b[1] - a[1]);
    if (!scored.length) return "unknown";
    // The lead is over the best other language; variants of one language (pt, pt-BR) are told apart
    // by the words only one of them has.
    const [first, top] = scored[0];
    const family = (name) => name.split("-")[0];
    const rival = scored.find(([name]) => family(name) !== family(first)) || [null, 0];
    const enough = script === "han" ? top > 0 : top >= MIN_SHARE;
    if (!enough || top < LEAD * rival[1]) return "unknown";
    return variant(tokens, candidates.filter((name) => family(name) === family(first)), languages) || first;
  }

  function variant(tokens, names, languages) {
    if (names.length < 2) return null;
    const counted = new Map();
    for (const token of tokens) counted.set(token, (counted.get(token) || 0) + 1);
    const own = (name) => languages[name].words.filter((word) => names.every((other) => other === name || !languages[other].words.includes(word)));
    const hits = names.map((name) => [name, own(name).reduce((sum, word) => sum + (counted.get(word) || 0), 0)]).sort((a, b) => b[1] - a[1]);
    return hits[0][1] > hits[1][1] ? hits[0][0] : null;
  }

  // {language, by}: the catalog's tag of the page's language, or a tag (or "unknown") it lacks. A
  // declaration the page's own text contradicts (real sites ship a template's lang="en" over
  // Portuguese text) gives way to the text, and `by` says so.
  function detect(languages) {
    const declared = declaration();
    const written = fromContent(languages);
    if (!declared) return { language: written, by: "content" };
    const said = fromTag(declared.value, languages);
    const family = (name) => name.split("-")[0];
    if (languages[written] && family(written) !== family(said)) {
      return { language: written, by: `content: the ${declared.by} says ${declared.value}, the text is ${written}` };
    }
    return { language: said, by: declared.by };
  }

  // The texts an offered injection is drawn with: its own, or (a generic one) those of the page's
  // language, and how that language was told ({missing, by} when the catalog has none in it).
  function textsFor(offer) {
    if (!offer.languages) return { texts: offer.injection.texts, language: null };
    const { language, by } = detect(offer.languages);
    const known = offer.languages[language];
    return known && known.texts ? { texts: known.texts, language, by } : { missing: language, by };
  }

  helper.language = { detect, textsFor };
})();
