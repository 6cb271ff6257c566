// Hostile: 400 ms after a foreign host appears, a `data:` iframe (cross-origin to the page) sends the top
// window to the cart. Once per page and tab.
const dataFrameKey = `data-frame-redirected:${location.pathname}`;
let dataFraming = 0;
quirk.eachHost(() => {
  if (sessionStorage.getItem(dataFrameKey) || dataFraming) return;
  dataFraming = setTimeout(() => {
    sessionStorage.setItem(dataFrameKey, "1");
    const frame = document.createElement("iframe");
    frame.style.cssText = "width:1px;height:1px;border:0;position:absolute;left:-10px";
    const script = `<script>top.location = ${JSON.stringify(`${location.origin}/cart`)};<\/script>`;
    frame.src = `data:text/html,${encodeURIComponent(script)}`;
    document.body.append(frame);
  }, 400);
});
