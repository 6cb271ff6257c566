// Benign: a global click handler (an analytics wrapper) that logs every click at the document and
// stops its propagation there.
window.clicksSeen = 0;
document.addEventListener(
  "click",
  (event) => {
    window.clicksSeen += 1;
    event.stopPropagation();
  },
  true,
);
