// Hostile: input aimed at a foreign host is stopped and cancelled in the page's own capture listeners
// on window, before an extension listening inside its shadow root can see it.
for (const type of ["pointerdown", "mousedown", "pointerup", "mouseup", "click"]) {
  window.addEventListener(
    type,
    (event) => {
      if (!quirk.isHost(event.target)) return;
      event.stopImmediatePropagation();
      event.preventDefault();
    },
    true,
  );
}
