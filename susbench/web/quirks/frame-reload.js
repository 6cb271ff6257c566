// Hostile: 400 ms after a foreign host appears, a sandboxed srcdoc iframe (cross-origin) sends the top
// window to the page it is on, a reload the visitor did not ask for. Once per page and tab.
const reloadKey = `frame-reloaded:${location.pathname}`;
let reloading = 0;
quirk.eachHost(() => {
  if (sessionStorage.getItem(reloadKey) || reloading) return;
  reloading = setTimeout(() => {
    sessionStorage.setItem(reloadKey, "1");
    const frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts allow-top-navigation");
    frame.style.cssText = "width:1px;height:1px;border:0;position:absolute;left:-10px";
    frame.srcdoc = `<script>top.location = ${JSON.stringify(location.href)};<\/script>`;
    document.body.append(frame);
  }, 400);
});
