// Hostile: the page dispatches pagehide events of its own, as if the visitor were leaving.
quirk.afterLoad(300, () => {
  setInterval(() => window.dispatchEvent(new PageTransitionEvent("pagehide", { persisted: false })), 250);
});
