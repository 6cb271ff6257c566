// Input, seen first: loaded at document_start, before any page script runs, so its capture-phase
// listeners on `window` are the first of every event's path and no page listener can stop or pre-empt
// them. Only trusted input counts. A click on the pattern is judged by hit-testing its coordinates
// inside the closed shadow root (not by where propagation would have carried it), and counts only if
// the pattern was really visible and still; the page never sees input aimed at the pattern. A click on
// one of the site's moves-on controls, or the operator leaving the page, moves the flow on; navigations
// the page starts by itself (reloads, redirects, history changes) do not. A click on the task's own
// control (the page's add-to-cart button...) is noted as the task done. A navigation the page starts
// while it dispatches an untrusted click or key press (button.click() on a submit button, a dispatched
// click on its own Add to cart) is the page's, whatever the browser calls it. A page that re-opens its
// document (document.open) erases every listener, these too: they come back at once, and the pattern is
// no longer drawn in that document (main.js), since the page's written scripts may now listen first.
"use strict";
(() => {
  if (window.top !== window) return;
  const helper = globalThis.pageHelper;
  const { state, channel } = helper;
  // A navigation within this long of the operator's last click or key press is the operator's doing.
  const OPERATOR_WINDOW_MS = 1500;
  // A started navigation that has not replaced this document after this long is stale.
  const NAVIGATION_MEMORY_MS = 10000;
  // Input aimed at the pattern that the page must not see (it could react by moving or removing it).
  const SHIELDED = [
    "pointerdown", "pointerup", "pointermove", "pointerover", "pointerout", "pointerenter", "pointerleave",
    "pointercancel", "gotpointercapture", "lostpointercapture", "mousedown", "mouseup", "mousemove",
    "mouseover", "mouseout", "mouseenter", "mouseleave", "dblclick", "auxclick", "contextmenu",
    "touchstart", "touchend", "touchmove", "touchcancel", "keydown", "keyup", "keypress", "focusin",
    "focusout", "focus", "blur", "beforeinput", "input", "dragstart", "selectstart", "copy", "cut", "paste",
    // pointerrawupdate carries the exact point ahead of the click; wheel and drag where the pointer rests.
    "pointerrawupdate", "wheel", "drag", "dragend", "dragenter", "dragleave", "dragover", "drop",
  ];
  const OPERATOR_INPUT = new Set(["pointerdown", "keydown", "click"]);
  // A form the page submitted by an untrusted activation navigates in a task of its own, this long after.
  const PAGE_SUBMIT_MS = 1000;
  let lastInputAt = -Infinity;
  // Input that scrolls (wheel, touch, keys, a press on a scrollbar), or a harness bringing the pattern
  // into view for its operator: the window's scrolling then is the operator's, not the page's.
  const SCROLLING_INPUT = new Set(["wheel", "touchmove", "keydown", "pointerdown"]);
  let lastScrollAt = -Infinity;
  // The latest navigation this document started, across documents and within it, each {by, via, at, url}:
  // a page's own replaceState must not mask the reload it started just before.
  const started = { crossDocument: null, sameDocument: null };
  let pageDispatching = false; // the page is dispatching an untrusted click or key press right now
  let pageSubmittedAt = -Infinity; // when a form was submitted while the page dispatched one

  const aimedAtPattern = (event) => Boolean(state.mounted) && event.target === state.mounted.host;
  // A page element's over/out/enter/leave event whose relatedTarget is the host says the pointer came from
  // (or went to) the pattern, and where: the page must not hear it either.
  const namesPattern = (event) => Boolean(state.mounted) && event.relatedTarget === state.mounted.host;
  const operatorActedRecently = () => Date.now() - lastInputAt < OPERATOR_WINDOW_MS;

  // Operator input anywhere but on the pattern (the pattern leads nowhere) opens the operator's window;
  // the page's own untrusted input marks what it does during that dispatch as the page's.
  function shield(event) {
    if (event.isTrusted && SCROLLING_INPUT.has(event.type)) lastScrollAt = Date.now();
    if (OPERATOR_INPUT.has(event.type)) {
      if (event.isTrusted && !aimedAtPattern(event)) lastInputAt = Date.now();
      if (!event.isTrusted && !pageDispatching) {
        pageDispatching = true;
        queueMicrotask(() => {
          pageDispatching = false;
        });
      }
    }
    if (namesPattern(event)) event.stopImmediatePropagation();
    if (!aimedAtPattern(event)) return;
    event.stopImmediatePropagation();
    // A press would focus the host: the page would read it off document.activeElement and :focus-within.
    if (event.type === "mousedown" && event.isTrusted) event.preventDefault();
  }

  function onSubmit() {
    if (pageDispatching) pageSubmittedAt = Date.now();
  }

  // The option a point of the pattern belongs to: the element with a role, or the checkbox a label names.
  function optionAt(el) {
    if (!el) return null;
    const option = el.closest("[data-role]");
    if (option) return option;
    const label = el.closest("label");
    return label && label.control && label.control.dataset.role ? label.control : null;
  }

  // Keyboard activation has no coordinates: its target is the focused option. A pointer click is
  // hit-tested where it landed.
  function landedOn(mounted, event) {
    const keyboard = event.detail === 0 && event.clientX === 0 && event.clientY === 0;
    if (keyboard) return { option: optionAt(mounted.root.activeElement), keyboard };
    const top = mounted.root.elementFromPoint(event.clientX, event.clientY);
    return { option: top && top.getRootNode() === mounted.root ? optionAt(top) : null, keyboard };
  }

  function onPattern(mounted, event) {
    event.stopImmediatePropagation();
    const { option, keyboard } = landedOn(mounted, event);
    if (!option) return;
    const role = option.dataset.role;
    const verdict = helper.exposure.clickable(mounted, keyboard, [event.clientX, event.clientY], option);
    if (!verdict.ok) {
      event.preventDefault(); // no choice, no toggle
      channel.report("refused_click", { role, why: verdict.why });
      return;
    }
    if (option.matches("input[type=checkbox]")) return; // the change event reports its new state
    event.preventDefault();
    helper.exposure.markExposed("interaction");
    const dismissed = helper.draw.act(mounted, role);
    channel.report("choice", { role, label: helper.match.label(option), ...(dismissed ? { dismissed } : {}) });
  }

  // A click that the page caught on an element of its own lying over one of the pattern's options.
  function overPattern(mounted, event) {
    if (event.detail === 0 || mounted.frame.hidden) return;
    const beneath = mounted.root.elementsFromPoint(event.clientX, event.clientY);
    const option = beneath.find((el) => el.getRootNode() === mounted.root && optionAt(el));
    if (option) channel.report("refused_click", { role: optionAt(option).dataset.role, why: "covered by the page" });
  }

  function movesOnControl(path) {
    const locators = state.current ? state.current.injection.evaluation.moves_on : [];
    for (const locator of locators) {
      const el = helper.match.find(locator);
      if (el && path.includes(el)) return el;
    }
    return null;
  }

  // The task's own control used with real input (an add-to-cart button, whether or not anything
  // answers it): the worker notes it, and the task counts as done.
  function controlUsed(event) {
    const { watch } = state;
    const el = watch && helper.match.find(watch.control);
    if (el && event.composedPath().includes(el)) {
      channel.send({ kind: "used", token: watch.token, label: helper.match.label(el), url: location.href });
    }
  }

  function onClick(event) {
    shield(event);
    const { mounted } = state;
    if (!event.isTrusted) return;
    if (!mounted || event.target !== mounted.host) controlUsed(event);
    if (!mounted) return;
    if (event.target === mounted.host) {
      onPattern(mounted, event);
      return;
    }
    overPattern(mounted, event);
    if (!mounted.exposed) return;
    const control = movesOnControl(event.composedPath());
    if (control) channel.report("moves_on", { label: helper.match.label(control) });
  }

  // Who started a navigation: the operator (a link or form they used, the browser's own buttons, or
  // script acting on their click or key press moments ago), or the page by itself.
  function onNavigate(event) {
    // A form submission: a POST carries its form data; a GET none, but its source is the submitter (or
    // the form), and Chromium calls it userInitiated even when the page clicked the submitter by script.
    const source = event.sourceElement;
    const submission = event.formData !== null || Boolean(source && (source.form || source.localName === "form"));
    const submittedByPage = submission && Date.now() - pageSubmittedAt < PAGE_SUBMIT_MS;
    const byPage = pageDispatching || submittedByPage;
    if (submittedByPage) pageSubmittedAt = -Infinity;
    const operator = !byPage && (event.userInitiated || operatorActedRecently());
    const navigation = { by: operator ? "operator" : "page", via: event.navigationType, at: Date.now(), url: event.destination.url };
    started[event.destination.sameDocument ? "sameDocument" : "crossDocument"] = navigation;
  }

  function recent(sameDocument) {
    const navigation = started[sameDocument ? "sameDocument" : "crossDocument"];
    return navigation && Date.now() - navigation.at < NAVIGATION_MEMORY_MS ? navigation : null;
  }

  // Who changed this document's URL to `url` (pushState, replaceState, a traversal).
  function urlChangedBy(url) {
    const started = recent(true);
    if (started && started.url === url) return started.by;
    return operatorActedRecently() ? "operator" : "page";
  }

  // Leaving the document: a navigation this document did not start was started by the browser (the
  // operator typed, reloaded or went back) or by another document (a cross-origin frame setting
  // top.location fires no `navigate` here): the worker tells them apart by how the browser committed it
  // (`via: "elsewhere"`). A dispatched `pagehide` is not trusted.
  function onPageHide(event) {
    if (!event.isTrusted || !state.current) return;
    const leaving = recent(false);
    channel.send({
      kind: "leave",
      by: leaving ? leaving.by : "operator",
      via: leaving ? leaving.via : "elsewhere",
      url: location.href,
      to: leaving ? leaving.url : null,
    });
  }

  // The pattern's checkboxes report their state on change (a non-composed event: it never leaves the
  // closed shadow root, so the page neither sees nor stops it).
  function capture(mounted) {
    mounted.root.addEventListener(
      "change",
      (event) => {
        const box = event.target;
        if (!event.isTrusted || !box.matches("input[type=checkbox][data-role]")) return;
        helper.exposure.markExposed("interaction");
        channel.report("toggle", { role: box.dataset.role, checked: box.checked });
        helper.draw.toggle(mounted, box.checked);
      },
      true,
    );
  }

  // Adding a listener again is a no-op, so this also restores them after document.open() erased them.
  function listen() {
    for (const type of SHIELDED) window.addEventListener(type, shield, true);
    window.addEventListener("click", onClick, true);
    window.addEventListener("submit", onSubmit, true);
    window.addEventListener("pagehide", onPageHide, true);
    if (window.navigation) window.navigation.addEventListener("navigate", onNavigate);
  }

  // document.open() removes the document's root element (parsing never does): the page re-opened it.
  function watchRewrites() {
    const removedRoot = (record) => [...record.removedNodes].some((node) => node.nodeType === 1 && node.localName === "html");
    new MutationObserver((records) => {
      if (!records.some(removedRoot)) return;
      listen();
      state.rewritten = true;
      if (helper.rewritten) helper.rewritten();
    }).observe(document, { childList: true });
  }

  listen();
  watchRewrites();

  const operatorScrolled = () => {
    lastScrollAt = Date.now();
  };
  const operatorScrolledWithin = (ms) => Date.now() - lastScrollAt < ms;

  helper.input = { capture, urlChangedBy, optionAt, operatorScrolled, operatorScrolledWithin };
})();
