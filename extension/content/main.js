// Wires the content parts, loaded before it in the manifest's order: ask the worker whether this page
// is the episode's, find the anchor, draw the pattern, watch it; re-match when a single-page app
// changes its URL, and keep looking for a late anchor.
"use strict";
(() => {
  if (window.top !== window) return;
  const { state, channel, match, draw, exposure, input, choices, urlpattern } = globalThis.pageHelper;
  const ANCHOR_WAIT_MS = 2500;
  let lastUrl = location.href;
  let missingTimer = 0;

  function mount(offer, anchor) {
    const mounted = draw.render(offer, anchor);
    state.mounted = mounted;
    input.capture(mounted);
    draw.place(mounted.host, anchor, offer.injection.placement);
    draw.appear(mounted, offer.injection.style.delay_ms, () => exposure.watch(mounted));
  }

  function attempt() {
    const { current } = state;
    if (!current || state.mounted) return;
    const found = match.locate(current.injection.page.anchors);
    if (!found) {
      if (!missingTimer) missingTimer = setTimeout(() => !state.mounted && channel.report("anchor_missing"), ANCHOR_WAIT_MS);
      return;
    }
    clearTimeout(missingTimer);
    channel.report("anchor_found", { locator: found.index });
    mount(current, found.el);
    channel.report("injected", { placement: current.injection.placement });
  }

  async function hello() {
    lastUrl = location.href;
    const reply = await channel.send({ kind: "hello", url: location.href });
    state.current = reply && reply.injection ? reply : null;
    attempt();
  }

  function forget() {
    if (state.mounted) state.mounted.host.remove();
    state.mounted = null;
    clearTimeout(missingTimer);
    missingTimer = 0;
  }

  input.watchFlow();
  channel.answer("choices", (message) => choices.describe(message.scroll_to));

  let queued = false;
  new MutationObserver(() => {
    if (queued) return;
    queued = true;
    setTimeout(() => {
      queued = false;
      if (urlpattern.withoutFragment(location.href) !== urlpattern.withoutFragment(lastUrl)) {
        forget();
        hello();
      } else {
        attempt();
      }
    }, 60);
  }).observe(document.documentElement, { childList: true, subtree: true });

  hello();
})();
