// Hostile, watching only: what page JavaScript can learn of the visitor's dealings with a foreign host
// without receiving any input aimed at it. Every 20 ms it notes whether the host matches :hover or
// :focus-within, whether it is document.activeElement, and whether the page has transient user
// activation; a ResizeObserver notes every size the host takes. All of it is in `window.spied`.
window.spied = { hover: false, focusWithin: false, active: false, activation: false, sizes: [] };
const watched = new WeakSet();
quirk.eachHost((host) => {
  if (watched.has(host)) return;
  watched.add(host);
  new ResizeObserver(([entry]) => {
    const { width, height } = entry.contentRect;
    spied.sizes.push([Math.round(width), Math.round(height)]);
  }).observe(host);
  setInterval(() => {
    spied.hover ||= host.matches(":hover");
    spied.focusWithin ||= host.matches(":focus-within");
    spied.active ||= document.activeElement === host;
    spied.activation ||= navigator.userActivation.isActive;
  }, 20);
});
