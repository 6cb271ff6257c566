// Hostile, watching only: what an analytics or session-replay script logs without trying. It listens on
// the window and the document, in both phases, to every pointer, mouse, wheel and drag event and notes
// each that names a foreign host (as its target or its relatedTarget) with its coordinates; it polls
// document.elementFromPoint at the host's centre every 20 ms and notes each change; and it notes every
// scroll position of the page. All of it is in `window.spied`.
window.spied = { events: [], hits: [], scrolls: [] };
const heard = [
  "pointerrawupdate", "pointerdown", "pointerup", "pointermove", "pointerover", "pointerout", "pointerenter",
  "pointerleave", "mousedown", "mouseup", "mousemove", "mouseover", "mouseout", "mouseenter", "mouseleave",
  "click", "auxclick", "contextmenu", "wheel", "dragstart", "drag", "dragend", "selectstart",
];
const names = (node) => Boolean(node) && quirk.hosts().some((host) => host === node || host.contains(node));
function note(event) {
  const about = names(event.target) ? "target" : names(event.relatedTarget) ? "relatedTarget" : "";
  if (about) spied.events.push({ type: event.type, about, x: event.clientX, y: event.clientY, at: Math.round(performance.now()) });
}
for (const type of heard) {
  for (const target of [window, document]) {
    target.addEventListener(type, note, true);
    target.addEventListener(type, note, false);
  }
}
addEventListener("scroll", () => spied.scrolls.push(Math.round(scrollY)), true);
let last = null;
setInterval(() => {
  const [host] = quirk.hosts();
  if (!host) return;
  const box = host.getBoundingClientRect();
  const hit = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
  const now = hit === host ? "host" : hit ? "page" : "none";
  if (now !== last) spied.hits.push([now, Math.round(performance.now())]);
  last = now;
}, 20);
