// Wires the content parts, loaded before it in the manifest's order: ask the worker whether this page
// is the episode's, find the anchor, draw the pattern, watch it; keep it in the page while the page
// re-renders (a removed or moved host goes back to its anchor, a few times), and follow URL changes:
// the operator's may leave the pattern's page, the page's own keep the pattern as it is.
"use strict";
(() => {
  if (window.top !== window) return;
  const { state, channel, spot, draw, exposure, input, choices, marks, urlpattern, language } = globalThis.pageHelper;
  const ANCHOR_WAIT_MS = 2500;
  // Re-injections per document before the pattern counts as tampered with: a re-render or two is
  // ordinary, a page that keeps removing, moving or marking the host is fighting it.
  const REINJECTIONS = 6;
  // A pattern the page took away whose anchor is still not found after this long was re-rendered away
  // (hydration, an A/B test relabelling the block): nothing puts it back, and the page has tampered.
  const ANCHOR_LOST_MS = 1000;
  let lastUrl = location.href;
  let missingTimer = 0;
  let unspoken = false;

  // In its place in this document: a host carried into another document (a frame the page made) is
  // connected there, but this document's listeners hear nothing of it.
  const placed = (mounted) =>
    mounted.host.isConnected && mounted.host.ownerDocument === document && mounted.host.parentNode === mounted.parent;

  function put(mounted, found) {
    spot.put(mounted, found, state.current.injection.placement);
    mounted.parent = mounted.host.parentNode;
  }

  // The page has won the pattern: it is taken out (wherever the page put it) and nothing puts it back.
  function giveUp(mounted, why) {
    if (mounted.gaveUp) return;
    mounted.gaveUp = true;
    clearTimeout(mounted.lostTimer);
    mounted.guard.disconnect();
    if (mounted.host.ownerDocument !== document) mounted.host.remove();
    channel.report("tampered", { why, times: mounted.strikes });
  }

  // One more strike against the page; true while re-injecting is still allowed.
  function strike(mounted, why) {
    mounted.strikes += 1;
    if (mounted.strikes <= REINJECTIONS) return true;
    giveUp(mounted, why);
    return false;
  }

  // The host is ours alone: attributes the page puts on it (hidden, inert, style...) come off at once;
  // a harness's element ids (marks.js) stay, as they stay on every other element.
  function bare(mounted) {
    const { host } = mounted;
    const names = [...host.attributes].map((attribute) => attribute.name).filter((name) => !marks.MARK_ATTRIBUTES.has(name));
    if (!names.length) return;
    names.forEach((name) => host.removeAttribute(name));
    if (strike(mounted, "marked")) channel.report("reinjected", { why: "marked", attributes: names, times: mounted.strikes });
  }

  function guard(mounted) {
    mounted.guard = new MutationObserver(() => {
      if (mounted.gaveUp || state.mounted !== mounted) return;
      if (mounted.host.isConnected && mounted.host.ownerDocument !== document) {
        mounted.strikes += 1;
        giveUp(mounted, "framed");
        return;
      }
      bare(mounted);
      if (!placed(mounted)) attempt();
    });
    mounted.guard.observe(document, { childList: true, subtree: true });
    mounted.guard.observe(mounted.host, { attributes: true });
  }

  function mount(offer, found) {
    // Where the nearest slot beside the anchor is a grid's cell, the pattern is drawn as one of its cells.
    const cell = found.slots && found.slots.length && found.slots[0].cell ? found.slots[0].target : null;
    const mounted = { ...draw.render(offer, found.el, cell), strikes: 0, gaveUp: false, lostTimer: 0 };
    state.mounted = mounted;
    input.capture(mounted);
    put(mounted, found);
    guard(mounted);
    const restore = offer.restore || {};
    draw.restore(mounted, restore);
    if (!restore.dismissed) draw.appear(mounted, offer.injection.style.delay_ms, () => exposure.watch(mounted));
  }

  // Back to the anchor, which the page may have re-rendered as a new element.
  function reinject(mounted, found) {
    clearTimeout(mounted.lostTimer);
    mounted.lostTimer = 0;
    const why = mounted.host.isConnected ? "moved" : "removed";
    if (mounted.gaveUp || !strike(mounted, why)) return;
    put(mounted, found);
    channel.report("reinjected", { why, times: mounted.strikes });
  }

  // Nothing is drawn into a document still being parsed: the pattern takes its look from the page as
  // parsed (state.js), and an anchor found halfway through would be drawn from half a page.
  function attempt() {
    const { current, mounted } = state;
    if (!current || state.rewritten || document.readyState === "loading" || (mounted && (mounted.gaveUp || placed(mounted)))) return;
    const found = spot.locate(current.injection);
    if (!found) {
      if (!mounted && !missingTimer) missingTimer = setTimeout(() => !state.mounted && channel.report("anchor_missing"), ANCHOR_WAIT_MS);
      if (mounted && !mounted.lostTimer) {
        // Said at once: a flow that moves on before the timer, the pattern gone, was bent by the page.
        channel.report("detached");
        mounted.lostTimer = setTimeout(() => state.mounted === mounted && !placed(mounted) && giveUp(mounted, "anchor lost"), ANCHOR_LOST_MS);
      }
      return;
    }
    if (mounted) {
      reinject(mounted, found);
      return;
    }
    clearTimeout(missingTimer);
    channel.report("anchor_found", { locator: found.index });
    mount(current, found);
    const spoken = current.language ? { language: current.language, language_by: current.languageBy } : { language: null };
    channel.report("injected", { placement: current.injection.placement, ...spoken });
  }

  // A reply of the worker: the injection offered here (or none), the task's control to watch, and the
  // words semantic locators need. A generic injection comes in the page's language, or not at all
  // (the episode notes the language the catalog has no texts in, once per document).
  function offered(reply) {
    state.watch = (reply && reply.watch) || null;
    state.vocabulary = (reply && reply.vocabulary) || null;
    if (!(reply && reply.injection)) return null;
    const spoken = language.textsFor(reply);
    if (spoken.missing) {
      if (!unspoken) channel.send({ kind: "event", token: reply.token, type: "language_missing", detail: { language: spoken.missing, by: spoken.by, url: location.href } });
      unspoken = true;
      return null;
    }
    return { ...reply, texts: spoken.texts, language: spoken.language, languageBy: spoken.by || null };
  }

  async function hello() {
    lastUrl = location.href;
    state.current = offered(await channel.send({ kind: "hello", url: location.href }));
    if (state.rewritten) globalThis.pageHelper.rewritten();
    attempt();
  }

  function forget() {
    const { mounted } = state;
    if (mounted) {
      clearTimeout(mounted.lostTimer);
      mounted.guard.disconnect();
      mounted.sight.stop();
      mounted.host.remove();
    }
    state.mounted = null;
    state.current = null;
    clearTimeout(missingTimer);
    missingTimer = 0;
  }

  // The URL changed within this document. The operator leaving the pattern's pages drops the pattern;
  // the page changing its own URL (a variant picker, a tracker) leaves it where it is.
  async function urlChanged() {
    const url = location.href;
    const by = input.urlChangedBy(url);
    lastUrl = url;
    const offer = offered(await channel.send({ kind: "navigated", url, by }));
    if (offer) {
      state.current ||= offer;
      attempt();
    } else if (by === "operator") {
      forget();
    }
  }

  // The page re-opened its document (input.js): its scripts may now hear input before the extension
  // does, so the pattern goes and stays away, and the page has tampered with it.
  globalThis.pageHelper.rewritten = () => {
    if (!state.current) return;
    channel.report("tampered", { why: "rewritten", times: 1 });
    forget();
  };

  channel.answer("choices", (message) => choices.describe(message.scroll_to));
  channel.answer("marks", (message) => marks.answer(message));

  let queued = false;
  function schedule() {
    if (queued) return;
    queued = true;
    setTimeout(() => {
      queued = false;
      if (urlpattern.withoutFragment(location.href) !== urlpattern.withoutFragment(lastUrl)) urlChanged();
      else attempt();
    }, 60);
  }
  new MutationObserver(schedule).observe(document.documentElement, { childList: true, subtree: true });
  document.addEventListener("readystatechange", schedule);
  if (window.navigation) window.navigation.addEventListener("currententrychange", schedule);

  hello();
})();
