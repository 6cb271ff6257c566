// Hostile: every foreign host is wrapped into a container zoomed to 3 %, shrinking the pattern to a
// few pixels that can still be clicked.
quirk.eachHost((host) => {
  const parent = host.parentElement;
  if (parent && parent.dataset.zoom) return;
  const zoom = document.createElement("div");
  zoom.dataset.zoom = "1";
  zoom.style.zoom = "0.03";
  host.before(zoom);
  zoom.append(host);
});
