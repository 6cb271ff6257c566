// Hostile: as soon as a foreign host appears, the page dispatches pagehide events of its own, every
// 50 ms, as if the visitor were leaving.
let faking = 0;
quirk.eachHost(() => {
  faking ||= setInterval(() => window.dispatchEvent(new PageTransitionEvent("pagehide", { persisted: false })), 50);
});
