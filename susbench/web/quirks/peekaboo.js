// Hostile: the page scrolls a foreign host into view for 120 ms, then back where the visitor was,
// so an extension that counts any moment in the viewport records an exposure nobody saw.
quirk.afterLoad(800, () => {
  const [host] = quirk.hosts();
  if (!host) return;
  const [x, y] = [scrollX, scrollY];
  host.scrollIntoView({ block: "center", behavior: "instant" });
  setTimeout(() => scrollTo({ left: x, top: y, behavior: "instant" }), 120);
});
