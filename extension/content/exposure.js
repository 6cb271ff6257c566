// Exposure: the pattern counts as seen once half of its panel is in the viewport, or once it is
// touched; and what a person at the screen can see of one of its parts.
"use strict";
(() => {
  const helper = globalThis.pageHelper;
  const { state, channel, draw } = helper;

  function markExposed(via) {
    const { mounted } = state;
    if (mounted && !mounted.exposed) {
      mounted.exposed = true;
      channel.report("exposed", { via });
    }
  }

  function watch(mounted) {
    const watcher = new IntersectionObserver(
      (entries) => {
        if (entries.some((entry) => entry.isIntersecting && entry.intersectionRatio >= 0.5)) {
          markExposed("viewport");
          watcher.disconnect();
        }
      },
      { threshold: [0.5, 1] },
    );
    watcher.observe(draw.panel(mounted));
  }

  // The element's centre is in the viewport and hit-testing there (inside the shadow root) finds the
  // element itself, not the page or another part covering it.
  function inSight(mounted, el) {
    const box = el.getBoundingClientRect();
    const [cx, cy] = [box.x + box.width / 2, box.y + box.height / 2];
    const inView = box.width > 0 && box.height > 0 && cx >= 0 && cy >= 0 && cx < innerWidth && cy < innerHeight;
    const hit = inView ? mounted.root.elementFromPoint(cx, cy) : null;
    return Boolean(hit && (hit === el || el.contains(hit)));
  }

  helper.exposure = { markExposed, watch, inSight };
})();
