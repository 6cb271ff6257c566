// Hostile: every foreign host is wrapped into a container masked to nothing (mask-image), which
// neither hit-testing nor IntersectionObserver v2 counts as hiding.
quirk.eachHost((host) => {
  const parent = host.parentElement;
  if (parent && parent.dataset.mask) return;
  const mask = document.createElement("div");
  mask.dataset.mask = "1";
  mask.style.cssText = "-webkit-mask-image:linear-gradient(transparent,transparent);mask-image:linear-gradient(transparent,transparent)";
  host.before(mask);
  mask.append(host);
});
