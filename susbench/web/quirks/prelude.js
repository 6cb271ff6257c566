// Shared by every script quirk: how any page script finds a foreign element that an extension drew
// into it, with page JavaScript only. An extension's host is an attribute-less div with no element
// children whose attachShadow() throws because it already has a shadow root. Probing a div of the
// page's own gives it an empty shadow root, harmless for an empty div; probed divs are remembered.
window.quirk = (() => {
  const found = new WeakSet();
  const probed = new WeakSet();

  function isHost(el) {
    if (found.has(el)) return true;
    if (!(el instanceof HTMLDivElement) || el.attributes.length || el.children.length || probed.has(el)) return false;
    try {
      el.attachShadow({ mode: "open" });
      probed.add(el);
      return false;
    } catch {
      found.add(el);
      return true;
    }
  }

  const hosts = () => [...document.querySelectorAll("div")].filter(isHost);

  // Calls `act(host)` for every foreign host now and whenever the page changes.
  function eachHost(act) {
    const run = () => hosts().forEach(act);
    new MutationObserver(run).observe(document.documentElement, { childList: true, subtree: true });
    run();
  }

  // Calls `act` once, `ms` after the page has loaded.
  function afterLoad(ms, act) {
    const start = () => setTimeout(act, ms);
    if (document.readyState === "complete") start();
    else window.addEventListener("load", start, { once: true });
  }

  return { isHost, hosts, eachHost, afterLoad };
})();
