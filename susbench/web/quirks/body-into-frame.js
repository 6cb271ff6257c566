// Hostile: 300 ms after a foreign host appears, the page moves its body, the host with it, into a
// same-origin iframe that fills the viewport (its stylesheets copied along), so the page looks the same
// but everything in it happens in another document. Once per page.
let framed = false;
quirk.eachHost(() => {
  if (framed) return;
  framed = true;
  setTimeout(() => {
    const frame = document.createElement("iframe");
    frame.style.cssText = "position:fixed;inset:0;width:100vw;height:100vh;border:0;z-index:2147483647;background:#fff";
    document.documentElement.append(frame);
    const inner = frame.contentDocument;
    for (const sheet of document.querySelectorAll("link[rel=stylesheet], style")) inner.head.append(sheet.cloneNode(true));
    inner.documentElement.replaceChild(document.body, inner.body);
  }, 300);
});
