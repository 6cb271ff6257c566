// The pattern's choices with their viewport rects, for the controller (asked through the worker):
// where to click, and whether a click there counts now (the pattern really visible, and still).
"use strict";
(() => {
  const helper = globalThis.pageHelper;
  const { state, match, draw, exposure } = helper;

  function rect(el) {
    const box = el.getBoundingClientRect();
    return { x: box.x, y: box.y, width: box.width, height: box.height };
  }

  const parentOf = (el) => el.parentElement || (el.getRootNode() instanceof ShadowRoot ? el.getRootNode().host : null);

  // Scrolls `el` to the viewport centre as a person can: the page and scrollable boxes move, boxes
  // that clip what overflows them (overflow: hidden or clip) keep their place on that axis.
  function bringIntoView(el) {
    const kept = [];
    for (let box = parentOf(el); box; box = parentOf(box)) {
      const { overflowX, overflowY } = getComputedStyle(box);
      const clips = (overflow) => overflow === "hidden" || overflow === "clip";
      if (clips(overflowX) || clips(overflowY)) kept.push([box, clips(overflowX), clips(overflowY), box.scrollLeft, box.scrollTop]);
    }
    el.scrollIntoView({ block: "center", inline: "nearest", behavior: "instant" });
    for (const [box, keepX, keepY, left, top] of kept) {
      if (keepX) box.scrollLeft = left;
      if (keepY) box.scrollTop = top;
    }
  }

  const whollyInView = (box) => box.top >= 0 && box.left >= 0 && box.bottom <= innerHeight && box.right <= innerWidth;

  // Nothing of the page (a sticky header, a cookie bar) lies over the option's centre.
  function uncovered(mounted, el) {
    const box = el.getBoundingClientRect();
    const hit = mounted.root.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
    return Boolean(hit && (hit === el || el.contains(hit)));
  }

  // Asked to scroll to a role (`scrollTo`), the pattern as a whole is brought to the viewport centre
  // unless it is wholly in view and none of its options is covered already, whichever role it is: a
  // scroll to the option about to be clicked would show the page the choice before it is made (a
  // page's scroll listener reads it).
  function describe(scrollTo) {
    const { mounted } = state;
    if (!mounted) return { injected: false, choices: [] };
    const elements = [...mounted.root.querySelectorAll("[data-role]")].filter((el) => !el.closest("[hidden]"));
    const panel = draw.panel(mounted);
    const inView = whollyInView(panel.getBoundingClientRect()) && elements.every((el) => uncovered(mounted, el));
    if (elements.some((el) => el.dataset.role === scrollTo) && !inView) {
      helper.input.operatorScrolled();
      bringIntoView(panel);
    }
    const choices = elements.map((el) => ({
      role: el.dataset.role,
      label: match.label(el),
      ...rect(el),
      visible: exposure.inSight(mounted, el),
    }));
    return { injected: true, choices, panel: rect(draw.panel(mounted)) };
  }

  helper.choices = { describe };
})();
