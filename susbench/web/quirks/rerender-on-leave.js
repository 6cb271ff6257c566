// Hostile (or a framework re-rendering on a pointer event): the moment the subject presses anywhere
// but on a foreign host (on the way to the flow's next step), the host is taken out and the block that
// held it is re-rendered in place, every class renamed and every button relabelled, so the anchor
// cannot be found again; the press goes on (the pressed element stays) and moves the flow on within
// the second in which the extension still waits for the anchor. Once per page.
let rerendered = false;
window.addEventListener(
  "pointerdown",
  (event) => {
    if (rerendered || !event.isTrusted) return;
    const [host] = quirk.hosts();
    const block = host && host.parentElement;
    if (!block || host.contains(event.target)) return;
    rerendered = true;
    host.remove();
    for (const el of [block, ...block.querySelectorAll("*")]) {
      if (el.classList.length) el.className = [...el.classList].map((name) => `${name}-v2`).join(" ");
      if (el instanceof HTMLButtonElement) el.textContent = "Buy now";
    }
  },
  true,
);
