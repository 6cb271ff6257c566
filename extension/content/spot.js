// Where the pattern goes. A site's own injection hangs off the element its locators name, at its
// placement. A generic one (semantic locators) goes where semantic.js finds the page's own element by
// meaning, into the nearest slot beside it that covers and displaces no page control; a generic pop-up
// takes a free corner of the viewport. `injections anchor` measures this same placement.
"use strict";
(() => {
  const helper = globalThis.pageHelper;
  const { state, match, draw } = helper;
  const HIT_POINTS = [[0.5, 0.5], [0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75]];

  // The first of the injection's anchors on the page, with its index (drift shows which one held): for
  // semantic ones, the first with a slot beside it (else the first found). `slots` is null for a
  // site's own anchor.
  function locate(injection) {
    const locators = injection.page.anchors;
    const anchors = locators.some((locator) => locator.semantic) ? match.finder() : null;
    let first = null;
    for (let index = 0; index < locators.length; index += 1) {
      const kind = locators[index].semantic;
      const el = match.find(locators[index], anchors);
      if (!el) continue;
      if (!kind) return { el, index, anchors: null, slots: null };
      const found = { el, index, anchors, slots: anchors.slotsFor(el, kind, injection) };
      if (found.slots.length) return found;
      first ||= found;
    }
    return first;
  }

  // Drawn on top where it is in the viewport (most of its points hit the pattern). Out of view nothing
  // can be tested without scrolling the operator's page, which is never done for them.
  function onTop(panel) {
    const box = panel.getBoundingClientRect();
    const points = HIT_POINTS.map(([fx, fy]) => [box.left + box.width * fx, box.top + box.height * fy]).filter(
      ([x, y]) => x >= 0 && y >= 0 && x < innerWidth && y < innerHeight,
    );
    if (!points.length) return true;
    return points.filter(([x, y]) => state.ours(document.elementFromPoint(x, y))).length * 2 > points.length;
  }

  // Puts the pattern into one slot: beside an element, or (a pop-up) at a corner or edge of the viewport.
  function settle(mounted, slot, anchors) {
    const { host, frame } = mounted;
    if (slot.corner) {
      frame.dataset.corner = slot.corner;
      frame.style.top = slot.top === undefined ? "" : `${Math.round(slot.top * innerHeight)}px`;
      document.body.append(host);
    } else {
      delete frame.dataset.corner;
      frame.style.top = "";
      draw.place(host, slot.target, slot.placement);
    }
    if (!slot.corner) draw.fit(mounted, anchors.layoutOf(slot));
    return { element: draw.panel(mounted), remove: () => host.remove() };
  }

  // Puts the mounted pattern where `found` (from `locate`) says.
  function put(mounted, found, placement) {
    if (found.slots && found.slots.length) {
      found.anchors.place(found.slots, (slot) => settle(mounted, slot, found.anchors), onTop);
    } else if (placement === "corner") {
      settle(mounted, { corner: "bottom right" });
    } else {
      draw.place(mounted.host, found.el, placement);
      draw.fit(mounted, draw.gridColumn(mounted.host));
    }
  }

  helper.spot = { locate, put };
})();
