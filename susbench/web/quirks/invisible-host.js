// Hostile: every foreign host is made transparent, on itself and by wrapping it into a transparent
// container, so it stays in the viewport and clickable while nobody can see it.
quirk.eachHost((host) => {
  host.style.setProperty("opacity", "0", "important");
  const parent = host.parentElement;
  if (parent && parent.dataset.veil) return;
  const veil = document.createElement("div");
  veil.dataset.veil = "1";
  veil.style.opacity = "0";
  host.before(veil);
  veil.append(host);
});
