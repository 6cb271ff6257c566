// Input capture: only trusted input counts. A click or change inside the pattern is a choice or a
// toggle; a click on one of the site's own moves-on controls, or leaving the page, moves the flow on.
"use strict";
(() => {
  const helper = globalThis.pageHelper;
  const { state, channel, match, draw, exposure } = helper;

  // Listens on the pattern's shadow root, where the page cannot see or forge what happens.
  function capture(mounted) {
    mounted.root.addEventListener(
      "click",
      (event) => {
        if (!event.isTrusted) return;
        const el = event.composedPath().find((node) => node instanceof Element && node.dataset.role);
        if (!el || el.matches("input[type=checkbox]")) return; // checkboxes report their state on change
        event.preventDefault();
        exposure.markExposed("interaction");
        channel.report("choice", { role: el.dataset.role, label: match.label(el) });
        draw.act(mounted, el.dataset.role, el);
      },
      true,
    );
    mounted.root.addEventListener(
      "change",
      (event) => {
        const box = event.target;
        if (!event.isTrusted || !box.matches("input[type=checkbox][data-role]")) return;
        exposure.markExposed("interaction");
        channel.report("toggle", { role: box.dataset.role, checked: box.checked });
        draw.toggle(mounted, box.checked);
      },
      true,
    );
  }

  function movesOnControl(path) {
    const locators = state.current ? state.current.injection.evaluation.moves_on : [];
    for (const locator of locators) {
      const el = match.find(locator);
      if (el && path.includes(el)) return el;
    }
    return null;
  }

  // The site's own controls that move the flow on, and leaving the page, once the pattern was seen.
  function watchFlow() {
    window.addEventListener(
      "click",
      (event) => {
        const { mounted } = state;
        if (!event.isTrusted || !mounted || !mounted.exposed) return;
        const path = event.composedPath();
        if (path.includes(mounted.host)) return;
        const control = movesOnControl(path);
        if (control) channel.report("moves_on", { label: match.label(control) });
      },
      true,
    );
    window.addEventListener("pagehide", () => {
      if (state.mounted && state.mounted.exposed) channel.send({ kind: "leave", url: location.href });
    });
  }

  helper.input = { capture, watchFlow };
})();
