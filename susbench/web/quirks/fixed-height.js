// Generic: a layout script that sizes its boxes to the content it rendered itself (as masonry and
// animation libraries measure their items) and clips what overflows them, so anything added later is
// cut off by an ancestor.
document.addEventListener("DOMContentLoaded", () => {
  const own = (box) => [...box.children].filter((el) => !quirk.isHost(el)).pop();
  const boxes = [...document.querySelectorAll(".buy-box, .product-grid")].map((box) => [box, own(box)]);
  const fit = () => {
    for (const [box, last] of boxes) {
      const height = last.getBoundingClientRect().bottom - box.getBoundingClientRect().top;
      Object.assign(box.style, { alignSelf: "start", height: `${height}px`, overflow: "hidden" });
    }
  };
  fit();
  new MutationObserver(fit).observe(document.body, { childList: true, subtree: true });
  window.addEventListener("load", fit);
});
