// Element ids for a harness that numbers what an agent may address (BrowserGym's `bid`s), inside the
// pattern's closed shadow root, which the harness's own marking script in the page cannot enter.
// Asked through the worker only; the page never learns the root, and the ids carry no role.
"use strict";
(() => {
  const helper = globalThis.pageHelper;
  const { state } = helper;
  // The attributes a harness's marking puts on every element, the host included; they change neither
  // the pattern's look nor its place nor its input, so the host's guard leaves them.
  const MARK_ATTRIBUTES = new Set(["bid", "browsergym_visibility_ratio", "browsergym_set_of_marks", "aria-roledescription", "aria-description"]);
  const ID_PREFIX = /^browsergym_id[^\s]*\s/;
  const MARKABLE = new Set(["input", "textarea", "select", "button", "a", "iframe", "video", "li", "td", "option"]);

  const elements = (mounted) => [...mounted.root.querySelectorAll("*")].filter((el) => el.localName !== "style");
  const byId = (mounted, id) => elements(mounted).find((el) => el.getAttribute("bid") === id) || null;

  function visibleRatio(el) {
    const box = el.getBoundingClientRect();
    const area = box.width * box.height;
    if (!area) return 0;
    const width = Math.max(0, Math.min(box.right, innerWidth) - Math.max(box.left, 0));
    const height = Math.max(0, Math.min(box.bottom, innerHeight) - Math.max(box.top, 0));
    return Math.round((100 * width * height) / area) / 100;
  }

  // What a click at the element's centre lands on: itself or something inside it ("self"/"child").
  function centreTaker(mounted, el) {
    const box = el.getBoundingClientRect();
    const hit = mounted.root.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
    if (!hit) return "nobody";
    if (hit === el) return "self";
    return el.contains(hit) ? "child" : "other";
  }

  function tag(el, attribute, id) {
    const kept = (el.getAttribute(attribute) || "").replace(ID_PREFIX, "");
    el.setAttribute(attribute, `browsergym_id_${id} ${kept}`);
  }

  // Numbers the pattern's elements from `next` on (keeping ids given before), as the harness numbers
  // the page's: id, visibility, live value and checked state, and the Set-of-Marks flag.
  function mark(next) {
    const { mounted } = state;
    if (!mounted) return { ids: [], next };
    const buttons = [];
    const ids = [];
    for (const el of elements(mounted)) {
      let id = el.getAttribute("bid");
      if (!id || ids.includes(id)) {
        id = String(next++);
        el.setAttribute("bid", id);
      }
      ids.push(id);
      el.setAttribute("browsergym_visibility_ratio", String(visibleRatio(el)));
      if (typeof el.value === "string" && el.localName !== "li") el.setAttribute("value", el.value);
      if (typeof el.checked === "boolean") el.toggleAttribute("checked", el.checked);
      tag(el, "aria-roledescription", id);
      tag(el, "aria-description", id);
      const box = el.getBoundingClientRect();
      const pointer = MARKABLE.has(el.localName) || getComputedStyle(el).cursor === "pointer";
      const som =
        ["self", "child"].includes(centreTaker(mounted, el)) && pointer && box.width * box.height >= 20 && buttons.every((b) => !b.contains(el));
      el.setAttribute("browsergym_set_of_marks", som ? "1" : "0");
      if (som) {
        if (el.matches("button, a, input[type=button], div[role=button]")) buttons.push(el);
        for (let up = el.parentElement; up; up = up.parentElement) if (up.getAttribute("browsergym_set_of_marks") === "1") up.setAttribute("browsergym_set_of_marks", "0");
      }
    }
    return { ids, next };
  }

  function unmark() {
    const { mounted } = state;
    if (!mounted) return { ids: [] };
    for (const el of elements(mounted)) {
      for (const attribute of ["aria-roledescription", "aria-description"]) {
        const kept = (el.getAttribute(attribute) || "").replace(ID_PREFIX, "");
        if (kept) el.setAttribute(attribute, kept);
        else el.removeAttribute(attribute);
      }
    }
    return { ids: [] };
  }

  // Where the element with this id is, scrolled into view first when asked and not wholly in view, and whether a click at its
  // centre lands on it now: what a harness needs to click it with real input.
  function target(id, scroll) {
    const { mounted } = state;
    const el = mounted ? byId(mounted, id) : null;
    if (!el) return { found: false };
    const inView = (b) => b.top >= 0 && b.left >= 0 && b.bottom <= innerHeight && b.right <= innerWidth;
    if (scroll && !inView(el.getBoundingClientRect())) el.scrollIntoView({ block: "center", inline: "nearest", behavior: "instant" });
    const box = el.getBoundingClientRect();
    return {
      found: true,
      x: box.x,
      y: box.y,
      width: box.width,
      height: box.height,
      on_top: ["self", "child"].includes(centreTaker(mounted, el)),
      checked: typeof el.checked === "boolean" ? el.checked : null,
    };
  }

  function answer(message) {
    if (message.op === "mark") return mark(Number(message.next) || 0);
    if (message.op === "unmark") return unmark();
    if (message.op === "target") return target(String(message.id), Boolean(message.scroll));
    return { error: `unknown marks operation ${message.op}` };
  }

  helper.marks = { answer, MARK_ATTRIBUTES };
})();
