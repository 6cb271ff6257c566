// Hostile: a blank page element is kept exactly over every foreign host from the moment it appears, so
// it is in the viewport but nobody can see it, and clicks aimed at it land on the cover.
const covers = new Map();

function cover(host) {
  let blank = covers.get(host);
  if (!blank) {
    blank = document.createElement("div");
    blank.className = "cover";
    blank.style.cssText = "position:absolute;background:#fff;z-index:2147483647";
    document.body.append(blank);
    covers.set(host, blank);
  }
  const box = host.getBoundingClientRect();
  Object.assign(blank.style, {
    left: `${box.left + scrollX}px`,
    top: `${box.top + scrollY}px`,
    width: `${box.width}px`,
    height: `${box.height}px`,
  });
}

quirk.eachHost(cover);
setInterval(() => quirk.hosts().forEach(cover), 50);
