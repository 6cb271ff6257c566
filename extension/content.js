// Content script (isolated world): page matching, native-looking rendering in a closed shadow root,
// exposure and trusted-input observation. The page's own scripts share the DOM but not this
// JavaScript world, cannot open the closed shadow root and cannot reach the service worker.
(() => {
  "use strict";
  if (window.top !== window) return;

  const ANCHOR_WAIT_MS = 2500;
  const IMPLICIT_ROLES = {
    button: "button, input[type=submit], input[type=button], input[type=reset], [role=button]",
    link: "a[href], [role=link]",
    heading: "h1, h2, h3, h4, h5, h6, [role=heading]",
    navigation: "nav, [role=navigation]",
    main: "main, [role=main]",
    banner: "header, [role=banner]",
    contentinfo: "footer, [role=contentinfo]",
    form: "form, [role=form]",
    search: "search, [role=search]",
    checkbox: "input[type=checkbox], [role=checkbox]",
    radio: "input[type=radio], [role=radio]",
    textbox: "input:not([type]), input[type=text], input[type=email], input[type=tel], textarea, [role=textbox]",
    searchbox: "input[type=search], [role=searchbox]",
    combobox: "select, [role=combobox]",
    list: "ul, ol, [role=list]",
    listitem: "li, [role=listitem]",
    img: "img, svg[role=img], [role=img]",
    region: "section[aria-label], section[aria-labelledby], [role=region]",
    article: "article, [role=article]",
  };

  let current = null; // {injection, template, token} while this page is the injection's page
  let mounted = null; // {host, root, frame, exposed}
  let lastUrl = location.href;
  let missingTimer = 0;

  function send(message) {
    try {
      return chrome.runtime.sendMessage(message).catch(() => null);
    } catch {
      return Promise.resolve(null); // the extension was reloaded under this page
    }
  }

  function report(type, detail = {}) {
    if (current) send({ kind: "event", token: current.token, type, detail: { ...detail, url: location.href } });
  }

  const norm = (text) => (text || "").replace(/\s+/g, " ").trim().toLowerCase();

  function accessibleName(el) {
    const label = el.getAttribute("aria-label");
    if (label) return label;
    const labelledBy = el.getAttribute("aria-labelledby");
    if (labelledBy) {
      return labelledBy.split(/\s+/).map((id) => document.getElementById(id)?.textContent || "").join(" ");
    }
    if (el.labels && el.labels.length) return [...el.labels].map((l) => l.textContent).join(" ");
    if (el.matches("input[type=submit], input[type=button]")) return el.value;
    return el.getAttribute("alt") || el.textContent || el.getAttribute("title") || "";
  }

  function isRendered(el) {
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0;
  }

  function ours(el) {
    return mounted && (el === mounted.host || mounted.host.contains(el));
  }

  // One locator: CSS narrows, text and role+name filter; the deepest text match wins.
  function find(locator) {
    let candidates;
    try {
      if (locator.css) candidates = [...document.querySelectorAll(locator.css)];
      else if (locator.role) candidates = [...document.querySelectorAll(IMPLICIT_ROLES[locator.role] || `[role="${locator.role}"]`)];
      else candidates = [...document.body.querySelectorAll("*")];
    } catch {
      return null; // an invalid selector simply does not match
    }
    if (locator.role && locator.css) {
      const roleSelector = IMPLICIT_ROLES[locator.role] || `[role="${locator.role}"]`;
      candidates = candidates.filter((el) => el.matches(roleSelector));
    }
    if (locator.name) candidates = candidates.filter((el) => norm(accessibleName(el)) === norm(locator.name));
    if (locator.text) {
      const want = norm(locator.text);
      candidates = candidates.filter((el) => !el.matches("script, style, template") && norm(el.textContent) === want);
      candidates = candidates.filter((el) => !candidates.some((other) => other !== el && el.contains(other)));
    }
    return candidates.find((el) => !ours(el) && isRendered(el)) || null;
  }

  function locate(anchors) {
    for (let index = 0; index < anchors.length; index += 1) {
      const el = find(anchors[index]);
      if (el) return { el, index };
    }
    return null;
  }

  // ---- the host page's look, read from its own elements ----
  function opaque(color) {
    const m = color.match(/rgba?\(([^)]+)\)/);
    if (!m) return false;
    const parts = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return parts.length < 4 || parts[3] > 0.5;
  }

  function whitish(color) {
    const m = color.match(/rgba?\(([^)]+)\)/);
    if (!m) return true;
    const [r, g, b] = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return r > 235 && g > 235 && b > 235;
  }

  function primaryButton() {
    let best = null;
    let bestScore = -1;
    for (const el of document.querySelectorAll("button, a, input[type=submit]")) {
      if (ours(el) || !isRendered(el)) continue;
      const style = getComputedStyle(el);
      if (!opaque(style.backgroundColor) || whitish(style.backgroundColor)) continue;
      const cls = String(el.className);
      const box = el.getBoundingClientRect();
      const score = (/primary/i.test(cls) ? 4 : 0) + (/btn|button/i.test(cls) ? 2 : 0) + (box.width * box.height > 2000 ? 1 : 0);
      if (score > bestScore) [best, bestScore] = [el, score];
    }
    return best;
  }

  function secondaryButton(primary) {
    for (const el of document.querySelectorAll("button, a")) {
      if (el === primary || ours(el) || !isRendered(el) || !/btn|button/i.test(String(el.className))) continue;
      const style = getComputedStyle(el);
      if (parseFloat(style.borderTopWidth) > 0 && (!opaque(style.backgroundColor) || whitish(style.backgroundColor))) return el;
    }
    return null;
  }

  function light(color) {
    const m = color.match(/rgba?\(([^)]+)\)/);
    if (!m) return true;
    const parts = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    if (parts.length > 3 && parts[3] < 0.5) return true;
    return 0.2126 * parts[0] + 0.7152 * parts[1] + 0.0722 * parts[2] > 215;
  }

  // The nearest light, bordered, rounded box around the anchor (a card, a summary, a fieldset):
  // the injected panel copies its border, radius and surface so it sits in the same visual family.
  function framed(anchor) {
    const isFrame = (el) => {
      const style = getComputedStyle(el);
      return parseFloat(style.borderTopWidth) > 0 && parseFloat(style.borderTopLeftRadius) > 0 && light(style.backgroundColor);
    };
    const start = anchor.matches("button, a, input, select") ? anchor.parentElement : anchor;
    for (let el = start, depth = 0; el && el !== document.body && depth < 6; el = el.parentElement, depth += 1) {
      if (isFrame(el)) return el;
    }
    return [...document.querySelectorAll("[class*=card], [class*=summary], fieldset")].find((el) => !ours(el) && isFrame(el)) || null;
  }

  function background(el) {
    for (; el; el = el.parentElement) {
      const color = getComputedStyle(el).backgroundColor;
      if (opaque(color)) return color;
    }
    return "rgb(255, 255, 255)";
  }

  const clean = (value) => String(value || "").replace(/[{}<>;]/g, "");

  function look(anchor, style) {
    // Controls and headings have their own colours and sizes; the body text around them is what
    // the panel should match.
    const special = anchor.matches("button, a, input, select, h1, h2, h3, h4, h5, h6");
    const context = (special ? anchor.parentElement : anchor) || document.body;
    const text = getComputedStyle(context);
    const rootStyle = getComputedStyle(document.documentElement);
    const primary = primaryButton();
    const p = primary ? getComputedStyle(primary) : text;
    const secondary = secondaryButton(primary);
    const s = secondary ? getComputedStyle(secondary) : null;
    const card = framed(anchor);
    const c = card ? getComputedStyle(card) : null;
    const heading = document.querySelector("h1, h2");
    const primaryBg = primary ? p.backgroundColor : text.color;
    const accent = style.accent || rootStyle.getPropertyValue("--accent").trim() || primaryBg;
    const vars = {
      "--font": text.fontFamily,
      "--size": text.fontSize,
      "--text": text.color,
      "--heading": heading ? getComputedStyle(heading).color : text.color,
      "--bg": background(context),
      "--primary-bg": primaryBg,
      "--primary-fg": primary ? p.color : "#fff",
      "--primary-border": primary ? p.borderTopColor : primaryBg,
      "--primary-radius": primary ? p.borderTopLeftRadius : "6px",
      "--primary-weight": primary ? p.fontWeight : "700",
      "--primary-transform": primary ? p.textTransform : "none",
      "--primary-spacing": primary ? p.letterSpacing : "normal",
      "--primary-font": primary ? p.fontFamily : text.fontFamily,
      "--secondary-fg": s ? s.color : text.color,
      "--secondary-bg": s ? s.backgroundColor : "transparent",
      "--secondary-border": s ? `${s.borderTopWidth} ${s.borderTopStyle} ${s.borderTopColor}` : `1px solid ${text.color}`,
      "--radius": c ? c.borderTopLeftRadius : primary ? p.borderTopLeftRadius : "6px",
      "--border": c ? `${c.borderTopWidth} solid ${c.borderTopColor}` : "1px solid rgba(0,0,0,.12)",
      "--surface": c ? background(card) : background(context),
      "--accent": accent,
      "--width": style.max_width ? `${style.max_width}px` : "none",
    };
    return `:host{${Object.entries(vars).map(([k, v]) => `${k}:${clean(v)}`).join(";")}}`;
  }

  // ---- rendering ----
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

  function label(el) {
    return (el.getAttribute("aria-label") || el.textContent || "").replace(/\s+/g, " ").trim();
  }

  function markExposed(via) {
    if (mounted && !mounted.exposed) {
      mounted.exposed = true;
      report("exposed", { via });
    }
  }

  function act(role, el) {
    const frame = mounted.frame;
    const dismissing = (frame.dataset.dismiss || "").split(/\s+/);
    if (role === "reveal") {
      mounted.root.querySelectorAll("[data-part=hidden]").forEach((part) => part.removeAttribute("hidden"));
      el.setAttribute("aria-expanded", "true");
    }
    if (role === "optout") {
      mounted.root.querySelectorAll("input[type=checkbox][data-role=manipulative]").forEach((box) => {
        box.checked = false;
      });
      frame.dataset.state = "declined";
    }
    if (dismissing.includes(role)) frame.hidden = true;
  }

  function mount({ injection, template }, anchor) {
    // A plain element with no id, class or attribute: nothing in the page DOM names or marks it.
    const host = document.createElement("div");
    const root = host.attachShadow({ mode: "closed" });
    root.innerHTML = `<style>${look(anchor, injection.style)}\n${template.css}</style>${fill(template.html, injection.texts)}`;
    const frame = root.querySelector("[data-part=frame]") || root.firstElementChild;
    frame.dataset.emphasis = injection.style.emphasis;
    mounted = { host, root, frame, exposed: false };
    root.addEventListener(
      "click",
      (event) => {
        if (!event.isTrusted) return;
        const el = event.composedPath().find((node) => node instanceof Element && node.dataset.role);
        if (!el || el.matches("input[type=checkbox]")) return; // checkboxes report their state on change
        event.preventDefault();
        markExposed("interaction");
        report("choice", { role: el.dataset.role, label: label(el) });
        act(el.dataset.role, el);
      },
      true,
    );
    root.addEventListener(
      "change",
      (event) => {
        const box = event.target;
        if (!event.isTrusted || !box.matches("input[type=checkbox][data-role]")) return;
        markExposed("interaction");
        report("toggle", { role: box.dataset.role, checked: box.checked });
        frame.dataset.state = box.checked ? "" : "declined";
      },
      true,
    );
    place(host, anchor, injection.placement);
    const show = () => {
      frame.removeAttribute("hidden");
      const target = root.querySelector("[data-part=panel]") || frame;
      const watcher = new IntersectionObserver(
        (entries) => {
          if (entries.some((entry) => entry.isIntersecting && entry.intersectionRatio >= 0.5)) {
            markExposed("viewport");
            watcher.disconnect();
          }
        },
        { threshold: [0.5, 1] },
      );
      watcher.observe(target);
    };
    if (injection.style.delay_ms > 0) {
      frame.setAttribute("hidden", "");
      setTimeout(show, injection.style.delay_ms);
    } else {
      show();
    }
  }

  function attempt() {
    if (!current || mounted) return;
    const found = locate(current.injection.page.anchors);
    if (!found) {
      if (!missingTimer) missingTimer = setTimeout(() => !mounted && report("anchor_missing"), ANCHOR_WAIT_MS);
      return;
    }
    clearTimeout(missingTimer);
    report("anchor_found", { locator: found.index });
    mount(current, found.el);
    report("injected", { placement: current.injection.placement });
  }

  async function hello() {
    lastUrl = location.href;
    const reply = await send({ kind: "hello", url: location.href });
    current = reply && reply.injection ? reply : null;
    attempt();
  }

  // ---- the site's own controls that move the flow on ----
  function movesOnControl(path) {
    const locators = current ? current.injection.evaluation.moves_on : [];
    for (const locator of locators) {
      const el = find(locator);
      if (el && path.includes(el)) return el;
    }
    return null;
  }

  window.addEventListener(
    "click",
    (event) => {
      if (!event.isTrusted || !mounted || !mounted.exposed) return;
      const path = event.composedPath();
      if (path.includes(mounted.host)) return;
      const control = movesOnControl(path);
      if (control) report("moves_on", { label: label(control) });
    },
    true,
  );
  window.addEventListener("pagehide", () => {
    if (mounted && mounted.exposed) send({ kind: "leave", url: location.href });
  });

  // Answers the controller's request (relayed by the service worker) for the choices' viewport rects.
  chrome.runtime.onMessage.addListener((message, sender, respond) => {
    if (sender.id !== chrome.runtime.id || !message || message.kind !== "choices") return false;
    if (!mounted) {
      respond({ injected: false, choices: [] });
      return false;
    }
    const elements = [...mounted.root.querySelectorAll("[data-role]")].filter((el) => !el.closest("[hidden]"));
    const target = elements.find((el) => el.dataset.role === message.scroll_to);
    if (target) target.scrollIntoView({ block: "center", inline: "nearest", behavior: "instant" });
    const choices = elements.map((el) => {
      const box = el.getBoundingClientRect();
      const [cx, cy] = [box.x + box.width / 2, box.y + box.height / 2];
      const inView = box.width > 0 && box.height > 0 && cx >= 0 && cy >= 0 && cx < innerWidth && cy < innerHeight;
      const hit = inView ? mounted.root.elementFromPoint(cx, cy) : null;
      return {
        role: el.dataset.role,
        label: label(el),
        x: box.x,
        y: box.y,
        width: box.width,
        height: box.height,
        visible: Boolean(hit && (hit === el || el.contains(hit))),
      };
    });
    const panel = (mounted.root.querySelector("[data-part=panel]") || mounted.frame).getBoundingClientRect();
    respond({ injected: true, choices, panel: { x: panel.x, y: panel.y, width: panel.width, height: panel.height } });
    return false;
  });

  // Single-page apps: re-match when the URL changes, and keep looking for a late anchor.
  let queued = false;
  new MutationObserver(() => {
    if (queued) return;
    queued = true;
    setTimeout(() => {
      queued = false;
      if (location.href.split("#")[0] !== lastUrl.split("#")[0]) {
        if (mounted) mounted.host.remove();
        mounted = null;
        clearTimeout(missingTimer);
        missingTimer = 0;
        hello();
      } else {
        attempt();
      }
    }, 60);
  }).observe(document.documentElement, { childList: true, subtree: true });

  hello();
})();
