// Drawing: the pattern's template, filled with the injection's texts and styled with the page's look,
// in a closed shadow root on a bare host placed at the anchor; and how the drawn pattern answers
// its own controls (reveal, opt out, dismiss).
"use strict";
(() => {
  const helper = globalThis.pageHelper;
  const { look } = helper;

  const escapeHtml = (text) =>
    String(text).replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]);

  function fill(html, texts) {
    return html.replace(/\{\{\s*([a-z_]+)\s*\}\}/g, (_, key) => escapeHtml(texts[key] || ""));
  }

  function place(host, anchor, placement) {
    if (placement === "before") anchor.before(host);
    else if (placement === "after") anchor.after(host);
    else if (placement === "prepend") anchor.prepend(host);
    else if (placement === "append") anchor.append(host);
    else document.body.append(host);
  }

  // Returns the mounted pattern {host, root, frame, exposed}; it is not in the page until `place`.
  function render({ injection, template }, anchor) {
    // A plain element with no id, class or attribute: nothing in the page DOM names or marks it.
    const host = document.createElement("div");
    const root = host.attachShadow({ mode: "closed" });
    root.innerHTML = `<style>${look.hostStyle(anchor, injection.style)}\n${template.css}</style>${fill(template.html, injection.texts)}`;
    const frame = root.querySelector("[data-part=frame]") || root.firstElementChild;
    frame.dataset.emphasis = injection.style.emphasis;
    return { host, root, frame, exposed: false };
  }

  // Shows the pattern now or after the injection's delay (a late pop-up), then calls `shown`.
  function appear({ frame }, delayMs, shown) {
    const show = () => {
      frame.removeAttribute("hidden");
      shown();
    };
    if (delayMs > 0) {
      frame.setAttribute("hidden", "");
      setTimeout(show, delayMs);
    } else {
      show();
    }
  }

  // The part exposure is measured on: the panel, or the whole frame where the template has none.
  function panel(mounted) {
    return mounted.root.querySelector("[data-part=panel]") || mounted.frame;
  }

  function act(mounted, role, el) {
    const { frame, root } = mounted;
    const dismissing = (frame.dataset.dismiss || "").split(/\s+/);
    if (role === "reveal") {
      root.querySelectorAll("[data-part=hidden]").forEach((part) => part.removeAttribute("hidden"));
      el.setAttribute("aria-expanded", "true");
    }
    if (role === "optout") {
      root.querySelectorAll("input[type=checkbox][data-role=manipulative]").forEach((box) => {
        box.checked = false;
      });
      frame.dataset.state = "declined";
    }
    if (dismissing.includes(role)) frame.hidden = true;
  }

  function toggle(mounted, checked) {
    mounted.frame.dataset.state = checked ? "" : "declined";
  }

  helper.draw = { render, place, appear, panel, act, toggle };
})();
