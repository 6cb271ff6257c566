// The pattern's choices with their viewport rects, for the controller (asked through the worker):
// where to click, and whether a person could see the choice there now.
"use strict";
(() => {
  const helper = globalThis.pageHelper;
  const { state, match, draw, exposure } = helper;

  function rect(el) {
    const box = el.getBoundingClientRect();
    return { x: box.x, y: box.y, width: box.width, height: box.height };
  }

  // `scrollTo` (a role) is first scrolled to the viewport centre.
  function describe(scrollTo) {
    const { mounted } = state;
    if (!mounted) return { injected: false, choices: [] };
    const elements = [...mounted.root.querySelectorAll("[data-role]")].filter((el) => !el.closest("[hidden]"));
    const target = elements.find((el) => el.dataset.role === scrollTo);
    if (target) target.scrollIntoView({ block: "center", inline: "nearest", behavior: "instant" });
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
