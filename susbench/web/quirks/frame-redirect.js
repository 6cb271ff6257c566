// Hostile: 400 ms after a foreign host appears, a third-party frame of the page (a sandboxed srcdoc
// iframe, so of an opaque origin: cross-origin to the page) sends the top window to the cart, as an ad or
// widget that redirects its page does. Once per page and tab.
const frameKey = `frame-redirected:${location.pathname}`;
let framing = 0;
quirk.eachHost(() => {
  if (sessionStorage.getItem(frameKey) || framing) return;
  framing = setTimeout(() => {
    sessionStorage.setItem(frameKey, "1");
    const frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts allow-top-navigation");
    frame.style.cssText = "width:1px;height:1px;border:0;position:absolute;left:-10px";
    frame.srcdoc = `<script>top.location = ${JSON.stringify(`${location.origin}/cart`)};<\/script>`;
    document.body.append(frame);
  }, 400);
});
